import { z } from 'zod';
import { SUBSTRATE_ROLE } from '../shared.ts';
import { type HttpBinding, type ToolAudit } from '../../src/core/define.ts';
import type { Caller } from '../../src/core/caller.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppError } from '../../src/core/errors.ts';
import type { ActionView, SubstrateActor } from '../../src/substrate/types.ts';
import { approvalPageUrl, substrateErrors } from '../../src/substrate/service.ts';
import { credentialOf } from '../../src/auth/keys.ts';

type Uses = 'config' | 'substrate';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/me/substrate';
/** Substrate keys over REST (a human); over MCP the platform key acts for the account's default user as an agent. */
const AUTH = ['substrate', 'platform'] as const;
const REST = <O>(binding: HttpBinding<O>): HttpBinding<O> => ({ ...binding, restAuth: ['substrate', 'session'] });
const ActionId = z.string().min(1).max(100).describe('An action id (act_...)');

const Verdict = z.object({
  result: z.enum(['auto_approved', 'auto_approved_yolo', 'requires_approval', 'rejected']),
  reason: z.string(),
  conflicts: z.array(z.object({ principle_id: z.string(), title: z.string(), mode: z.enum(['require_approval', 'reject']) })),
});
const Action = z.object({
  action_id: z.string(),
  capability: z.string(),
  payload: z.unknown(),
  status: z.enum(['proposed', 'executed', 'rejected']),
  proposer_kind: z.enum(['human', 'agent']),
  source_app_id: z.string().nullable(),
  source_rule_id: z.string().nullable(),
  verdict: Verdict,
  requires_approval: z.boolean(),
  dangerously_skip_approval: z.boolean(),
  result: z.unknown(),
  reverted_by: z.string().nullable(),
  revertible: z.boolean(),
  reject_reason: z.string().nullable(),
  decided_via: z.enum(['rest', 'mcp_elicitation', 'app_end_user']).nullable(),
  decided_by_end_user: z.string().optional(),
  decided_by: z.string().nullable().describe('The person who decided (signed in, or with their substrate key); null for an end user'),
  idempotency_key: z.string().nullable(),
  created_at: z.string(),
  decided_at: z.string().nullable(),
  executed_at: z.string().nullable(),
});
const Settings = z.object({ yolo_mode: z.boolean(), user_id: z.string() });

export const substrateSettingsGet = defineTool({
  name: 'substrate_settings_get',
  title: 'Substrate settings',
  description: "The substrate user's settings: { yolo_mode, user_id }. In yolo mode a human's proposals of approval capabilities execute at once.",
  input: z.object({}),
  output: Settings,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/settings` }),
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.substrate.settings(await ctx.services.substrate.actor(ctx.caller)),
});

export const substrateYoloSet = defineTool({
  name: 'substrate_yolo_set',
  title: 'Set yolo mode',
  description: "Turn yolo mode on or off for the key's substrate user (a human's decision: REST with a substrate key only).",
  input: z.object({ yolo_mode: z.boolean() }),
  output: Settings,
  auth: ['substrate'],
  mcp: false,
  http: { method: 'PUT', path: `${BASE}/settings/yolo` },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => ctx.services.substrate.setYolo(await ctx.services.substrate.actor(ctx.caller), input.yolo_mode),
});

export const substratePropose = defineTool({
  name: 'substrate_propose',
  title: 'Propose a substrate action',
  description:
    'The one door for writes to the user\'s substrate: { capability, payload, idempotency_key? } -> { action_id, verdict: { result, reason, ' +
    'conflicts }, requires_approval, result?, replay? }. Auto (execute at once): record_decision, record_commitment, record_learning, ' +
    'upsert_entity, update_entity, patch_entity, upsert_source_artifact, revert_action. The human approves: record_principle, supersede_decision, ' +
    'retire_principle, merge_entities, delete_entity, bulk_revert_actions, send_email_draft, and anything conflicting with an active principle. Over MCP you ' +
    'propose as an agent. Payloads: platform_guide area=substrate.',
  input: z.object({
    capability: z.string().min(1).max(100),
    payload: z.record(z.string(), z.unknown()).describe("The capability's payload (its fields are checked strictly)"),
    idempotency_key: z.string().min(1).max(200).optional().describe('Same key, same user: the first outcome is returned (replay: true), nothing runs again'),
    dangerously_skip_approval: z.boolean().optional().describe('The owner (substrate key) only: execute without approval; ignored for agents'),
  }),
  output: z.object({ action_id: z.string(), verdict: Verdict, requires_approval: z.boolean(), result: z.unknown().optional(), replay: z.literal(true).optional() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'POST', path: `${BASE}/actions/propose` }),
  handler: async (input, ctx) => ctx.services.substrate.propose(await ctx.services.substrate.actor(ctx.caller), input),
});

export const substrateActionsList = defineTool({
  name: 'substrate_actions_list',
  title: 'List substrate actions',
  description: 'The ledger, newest first: { actions, next_before }; pass next_before as before for the next page.',
  input: z.object({
    status: z.enum(['proposed', 'executed', 'rejected', 'all']).optional(),
    capability: z.string().max(100).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    before: z.string().max(200).optional().describe('next_before, or an ISO time'),
    source_app_id: z.string().max(100).optional(),
    source_rule_id: z.string().max(100).optional(),
  }),
  output: z.object({ actions: z.array(Action), next_before: z.string().nullable() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/actions` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.list(await ctx.services.substrate.actor(ctx.caller), input),
});

export const substrateActionsGet = defineTool({
  name: 'substrate_actions_get',
  title: 'Get a substrate action',
  description: 'One action of the ledger, its payload and result in full.',
  input: z.object({ action_id: ActionId }),
  output: Action,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/actions/{action_id}` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.get(await ctx.services.substrate.actor(ctx.caller), input.action_id),
});

/** How long an MCP tool call waits for the person's decision on the approval page. */
const DECISION_WAIT_MS = 10 * 60_000;

/**
 * Over REST the substrate key or the browser session is the person's: they decide. Over MCP the caller is an agent,
 * which never decides (not even through a form its own client would answer): the person is sent to the platform's
 * approval page by URL-mode elicitation, decides there signed in, and the tool returns the action as they left it.
 */
async function decide(ctx: Ctx<Uses>, verb: 'Approve' | 'Reject', actionId: string, byPerson: (actor: SubstrateActor) => Promise<ActionView>): Promise<ActionView> {
  const actor = await ctx.services.substrate.actor(ctx.caller);
  if (personDecides(ctx.caller)) return byPerson(actor);
  const action = await ctx.services.substrate.get(actor, actionId);
  const url = approvalPageUrl(ctx.services.config.baseUrl, action.action_id);
  if (action.status !== 'proposed') {
    // The retry of a call that sent the person to the page (MCP 2026-07-28) finds what they decided there.
    if (ctx.pageAnswer?.(url) === true) return action;
    // Asked only about what can still be decided: the same 409 as without the question otherwise.
    throw substrateErrors.wrongStatus(action.action_id, action.status);
  }
  if (!ctx.sendToPage) {
    throw substrateErrors.humanRequired(
      `${verb === 'Approve' ? 'Approving' : 'Rejecting'} is the person's act, and this MCP client cannot send them to the approval page (no URL elicitation).`,
      `Give the person this link: ${url} (they sign in and decide), or they call POST /v1/me/substrate/actions/${action.action_id}/${verb.toLowerCase()}.`,
    );
  }
  const visit = await ctx.sendToPage(`${verb} ${action.capability} (proposed by ${action.proposer_kind === 'agent' ? 'an agent' : 'a person'})? Decide on the platform's approval page.`, url);
  if (!visit.opened) {
    throw new AppError(403, 'HUMAN_DECLINED', `The person did not open the approval page: action ${action.action_id} stays proposed.`, `Nothing changed; they can decide later at ${url}.`);
  }
  const decided = await ctx.services.substrate.awaitDecision(actor, action.action_id, DECISION_WAIT_MS, ctx.signal);
  if (decided.status === 'proposed') {
    throw new AppError(403, 'HUMAN_DECISION_PENDING', `The person has not decided yet: action ${action.action_id} stays proposed.`, `Read it later with substrate_actions_get; they decide at ${url}.`);
  }
  await visit.complete();
  return decided;
}

/** A substrate key or a signed-in person (session) is the person: they decide (the service's human proposer). */
function personDecides(caller: Caller): boolean {
  return caller.kind === 'substrate' || (caller.kind === 'platform' && caller.via === 'session');
}

/**
 * A decision in the audit log, by whoever made it. An agent's call that waited for the person's decision on the
 * approval page made none: the page's own call was recorded.
 */
const decision = (verb: 'approve' | 'reject'): ToolAudit<unknown, Pick<ActionView, 'action_id' | 'capability'>> => ({
  action: `substrate.${verb}`,
  resource: 'substrate_action',
  id: (_input, action) => action.action_id,
  details: (_input, action) => ({ capability: action.capability }),
  when: (_input, _action, caller) => personDecides(caller),
});

const OVER_MCP = 'Over MCP the person is sent to the approval page (URL elicitation) and decides there; you get the action as they left it.';

export const substrateActionsApprove = defineTool({
  name: 'substrate_actions_approve',
  title: 'Approve a substrate action',
  description: `Approve a proposed action: it executes now; returns the updated action (409 wrong_status when not proposed). ${OVER_MCP}`,
  input: z.object({ action_id: ActionId }),
  output: Action,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'POST', path: `${BASE}/actions/{action_id}/approve` }),
  audit: decision('approve'),
  handler: async (input, ctx) => decide(ctx, 'Approve', input.action_id, (actor) => ctx.services.substrate.approve(actor, input.action_id)),
});

export const substrateActionsReject = defineTool({
  name: 'substrate_actions_reject',
  title: 'Reject a substrate action',
  description: `Reject a proposed action with an optional reason; returns the updated action (409 wrong_status when not proposed). ${OVER_MCP}`,
  input: z.object({ action_id: ActionId, reason: z.string().max(2000).optional() }),
  output: Action,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'POST', path: `${BASE}/actions/{action_id}/reject` }),
  audit: decision('reject'),
  handler: async (input, ctx) => decide(ctx, 'Reject', input.action_id, (actor) => ctx.services.substrate.reject(actor, input.action_id, input.reason)),
});

export const substrateWsTicket = defineTool({
  name: 'substrate_ws_ticket',
  title: 'Mint a stream ticket',
  description:
    'A single-use ticket (valid 60 s) for the live change stream: connect a websocket to /v1/me/substrate/stream?ticket=<ticket>; frames are ' +
    '{ type: "hello" }, then { org, op, tbl, id } per committed change (re-fetch by id). For browsers, which must not hold a substrate key.',
  input: z.object({}),
  output: z.object({ ticket: z.string(), expires_in: z.number().int() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'POST', path: `${BASE}/ws-ticket`, status: 201 }),
  handler: async (_input, ctx) => {
    const { accountId, userId } = await ctx.services.substrate.actor(ctx.caller);
    // The socket lives as long as the key that minted its ticket, and gets its own substrate user's changes only.
    return ctx.services.substrate.stream.mintTicket(accountId, userId, credentialOf(ctx.caller));
  },
});

export const substrateTools = [
  substrateSettingsGet,
  substrateYoloSet,
  substratePropose,
  substrateActionsList,
  substrateActionsGet,
  substrateActionsApprove,
  substrateActionsReject,
  substrateWsTicket,
];
