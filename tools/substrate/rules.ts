import { z } from 'zod';
import { SUBSTRATE_ROLE } from '../shared.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { refineBody, ruleShape, type RuleBody } from '../../src/substrate/rules.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/me/substrate/attention-rules';
/** Substrate keys over REST; over MCP the platform key acts for the account's default user. */
const AUTH = ['substrate', 'platform'] as const;
const REST = { restAuth: ['substrate', 'session'] as const };
const RuleId = z.string().min(1).max(100).describe('A rule id (rul_...)');

const Rule = z.object({
  rule_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  trigger_cron: z.string(),
  condition_mode: z.enum(['snapshot_predicate', 'row_query']),
  condition: z.record(z.string(), z.unknown()),
  action_capability: z.string(),
  action_payload_template: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
  max_fires_per_day: z.number().int(),
  next_fire_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const Firing = z.object({
  firing_id: z.string(),
  rule_id: z.string(),
  slot: z.string(),
  bindings_count: z.number().int(),
  bindings: z.array(z.unknown()),
  proposals: z.array(
    z.object({ binding_index: z.number().int(), action_id: z.string(), verdict: z.string(), requires_approval: z.boolean(), replay: z.literal(true).optional() }),
  ),
  skipped: z.array(z.object({ binding_index: z.number().int(), reason: z.string() })),
  skip_reason: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const userOf = async (ctx: Ctx<Uses>) => (await ctx.services.substrate.actor(ctx.caller)).userId;
const rules = (ctx: Ctx<Uses>) => ctx.services.substrate.rules;

const Body = z.object(ruleShape).superRefine(refineBody);
const UpdateBody = z.object({ rule_id: RuleId, ...ruleShape }).superRefine(refineBody);
const PreviewBody = z.object({ ...ruleShape, name: ruleShape.name.optional() }).superRefine(refineBody);

export const rulesList = defineTool({
  name: 'substrate_rules_list',
  title: 'List attention rules',
  description: "The substrate user's attention rules, newest first: { rules: [{ rule_id, name, trigger_cron, enabled, next_fire_at, ... }] }.",
  input: z.object({}),
  output: z.object({ rules: z.array(Rule) }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'GET', path: BASE, ...REST },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => rules(ctx).list(await userOf(ctx)),
});

export const ruleCreate = defineTool({
  name: 'substrate_rule_create',
  title: 'Create an attention rule',
  description:
    'A scheduled proposal: on each trigger_cron slot (UTC) the condition yields bindings (snapshot_predicate: the latest snapshot when ' +
    'true; row_query: { from, where } matching rows) and action_capability is proposed as an agent with action_payload_template, ' +
    '{{path}} filled from each binding, up to max_fires_per_day. Try it first with substrate_rule_preview. Details: platform_guide area=rules.',
  input: Body,
  output: Rule,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'POST', path: BASE, status: 201, ...REST },
  handler: async (input, ctx) => rules(ctx).create(await userOf(ctx), input as RuleBody),
});

export const ruleGet = defineTool({
  name: 'substrate_rule_get',
  title: 'Get an attention rule',
  description: 'One attention rule by rule_id, with its next_fire_at (null when disabled).',
  input: z.object({ rule_id: RuleId }),
  output: Rule,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'GET', path: `${BASE}/{rule_id}`, ...REST },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => rules(ctx).get(await userOf(ctx), input.rule_id),
});

export const ruleUpdate = defineTool({
  name: 'substrate_rule_update',
  title: 'Replace an attention rule',
  description: 'Replace the body of a rule (the fields of substrate_rule_create); enabled, when omitted, stays as it is.',
  input: UpdateBody,
  output: Rule,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'PUT', path: `${BASE}/{rule_id}`, ...REST },
  annotations: { idempotentHint: true },
  handler: async ({ rule_id, ...body }, ctx) => rules(ctx).update(await userOf(ctx), rule_id, body as RuleBody),
});

export const ruleDelete = defineTool({
  name: 'substrate_rule_delete',
  title: 'Delete an attention rule',
  description: 'Delete a rule and its firings (REST: 204). The actions it proposed stay in the ledger.',
  input: z.object({ rule_id: RuleId }),
  output: z.object({ deleted: z.literal(true), rule_id: z.string() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'DELETE', path: `${BASE}/{rule_id}`, status: 204, ...REST },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    await rules(ctx).remove(await userOf(ctx), input.rule_id);
    return { deleted: true as const, rule_id: input.rule_id };
  },
});

export const ruleEnable = defineTool({
  name: 'substrate_rule_enable',
  title: 'Enable an attention rule',
  description: 'Enable a rule; its schedule starts from now (slots missed while disabled are not fired).',
  input: z.object({ rule_id: RuleId }),
  output: Rule,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'POST', path: `${BASE}/{rule_id}/enable`, ...REST },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => rules(ctx).setEnabled(await userOf(ctx), input.rule_id, true),
});

export const ruleDisable = defineTool({
  name: 'substrate_rule_disable',
  title: 'Disable an attention rule',
  description: 'Disable a rule: it fires no more until enabled.',
  input: z.object({ rule_id: RuleId }),
  output: Rule,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'POST', path: `${BASE}/{rule_id}/disable`, ...REST },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => rules(ctx).setEnabled(await userOf(ctx), input.rule_id, false),
});

export const ruleFirings = defineTool({
  name: 'substrate_rule_firings',
  title: 'List firings of an attention rule',
  description: 'Firings of a rule, newest slot first: bindings, proposals made, skipped bindings and why; next_before pages.',
  input: z.object({ rule_id: RuleId, limit: z.coerce.number().int().min(1).max(200).default(50), before: z.string().max(200).optional() }),
  output: z.object({ firings: z.array(Firing), next_before: z.string().nullable() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'GET', path: `${BASE}/{rule_id}/firings`, ...REST },
  annotations: { readOnlyHint: true },
  handler: async ({ rule_id, ...query }, ctx) => rules(ctx).firings(await userOf(ctx), rule_id, query),
});

export const rulePreview = defineTool({
  name: 'substrate_rule_preview',
  title: 'Preview an attention rule',
  description:
    'Dry-run a rule body (name optional), writing nothing: { bindings_count, sample_proposals: [{ binding, rendered_payload, ' +
    'would_require_approval, verdict, error? }], skip_reason }.',
  input: PreviewBody,
  output: z.object({
    bindings_count: z.number().int(),
    sample_proposals: z.array(
      z.object({
        binding: z.unknown(),
        rendered_payload: z.record(z.string(), z.unknown()).nullable(),
        would_require_approval: z.boolean().nullable(),
        verdict: z.unknown(),
        error: z.string().optional(),
      }),
    ),
    skip_reason: z.string().nullable(),
  }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'POST', path: `${BASE}/preview`, ...REST },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => rules(ctx).preview(await userOf(ctx), input as RuleBody),
});

export const substrateRuleTools = [rulesList, ruleCreate, ruleGet, ruleUpdate, ruleDelete, ruleEnable, ruleDisable, ruleFirings, rulePreview];
