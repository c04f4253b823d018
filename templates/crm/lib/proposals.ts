// Proposals: changes the CRM asks a person to approve (a deal's stage, next step or forecast; a campaign's launch),
// each a substrate action of the owner's ledger mirrored as a proposals row of the workspace for the approvals inbox.
// A decision can arrive three ways: approval-decide (a workspace admin, through the app), substrate-events (the
// outbox's webhook, e.g. the owner on the platform's approval page) and approvals (which reconciles what it reads);
// all of them go through settle(), and applying is idempotent: the CRM rows are written with values (not increments)
// and the timeline entry is keyed by the proposal, so applying twice, even at once, has one effect.
import { activateCampaign } from './campaigns.ts';
import type { Ctx } from './ctx.ts';
import { HttpError, eq, one, rows } from './http.ts';
import { substrateOf } from './entities.ts';

export type ProposalKind = 'stage_change' | 'next_step' | 'forecast' | 'campaign_launch';
export type ProposalStatus = 'pending' | 'approved' | 'rejected' | 'applied';

export interface Proposal {
  id: string;
  workspace_id: string;
  user_id: string | null;
  action_id: string | null;
  kind: ProposalKind;
  deal_id: string | null;
  campaign_id: string | null;
  summary: string;
  payload: Record<string, any>;
  status: ProposalStatus;
  decided_by: string | null;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
}

/** Who decided and why, as the proposals row keeps it (fields left undefined are kept as they are). */
export interface Decision {
  decided_by?: string | null;
  decided_at?: string | null;
  reason?: string | null;
}

/** The substrate action as settle() needs it (ctx.substrate.action, or the outbox's delivery of an executed one). */
export interface ActionState {
  status: 'proposed' | 'executed' | 'rejected';
  reject_reason?: string | null;
  decided_at?: string | null;
  decided_by_end_user?: string;
}

export interface ProposalInput {
  workspace_id: string;
  user_id: string;
  kind: ProposalKind;
  deal_id?: string;
  summary: string;
  payload: Record<string, unknown>;
}

/**
 * Proposes the capability (always waiting for a person) and records the proposals row, keyed by the action so a
 * retried request that replays the same action gets the same row; 202 material for the caller.
 */
export async function propose(ctx: Ctx, capability: string, payload: Record<string, unknown>, idempotencyKey: string, input: ProposalInput): Promise<{ proposal: Proposal; verdict: unknown }> {
  const proposed = await substrateOf(ctx).propose(capability, payload, { idempotency_key: idempotencyKey, require_approval: true });
  const rejected = proposed.verdict?.result === 'rejected';
  const row = { ...input, action_id: proposed.action_id, status: rejected ? 'rejected' : 'pending', ...(rejected ? { reason: String(proposed.verdict?.reason ?? 'rejected by a principle') } : {}) };
  // A replayed action inserts nothing (ignore-duplicates): the row the first request wrote is read either way.
  rows(await ctx.asApp.data.from('proposals').insert(row, { query: 'on_conflict=action_id', prefer: 'resolution=ignore-duplicates,return=representation' }), 'proposals');
  const saved = one(await ctx.asApp.data.from('proposals').select<Proposal>('*', { query: `action_id=${eq(proposed.action_id)}` }), 'proposal');
  return { proposal: saved, verdict: proposed.verdict };
}

async function save(ctx: Ctx, proposal: Proposal, patch: Partial<Proposal>): Promise<Proposal> {
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const [saved] = rows(await ctx.asApp.data.from('proposals').update<Proposal>(defined, `id=${eq(proposal.id)}`, { prefer: 'return=representation' }), 'proposals');
  return saved ?? { ...proposal, ...defined };
}

/** The change a stage_change proposal makes: the deal's stage, and a timeline entry keyed by the proposal. */
async function applyStageChange(ctx: Ctx, p: Proposal): Promise<void> {
  const to = String(p.payload.to_stage_id);
  rows(await ctx.asApp.data.from('deals').update({ stage_id: to, updated_at: new Date().toISOString() }, `id=${eq(p.deal_id!)}`), 'deals');
  const entry = {
    workspace_id: p.workspace_id,
    user_id: p.user_id,
    kind: 'stage_change',
    deal_id: p.deal_id,
    subject: `Stage: ${p.payload.from_stage ?? '?'} → ${p.payload.to_stage ?? '?'}`,
    body: p.summary,
    external_id: `proposal:${p.id}`,
  };
  rows(await ctx.asApp.data.from('activities').insert(entry, { query: 'on_conflict=workspace_id,external_id', prefer: 'resolution=ignore-duplicates,return=representation' }), 'activities');
}

async function applyChange(ctx: Ctx, p: Proposal): Promise<void> {
  const deal = (patch: Record<string, unknown>) => ctx.asApp.data.from('deals').update({ ...patch, updated_at: new Date().toISOString() }, `id=${eq(p.deal_id!)}`);
  switch (p.kind) {
    case 'stage_change':
      return applyStageChange(ctx, p);
    case 'next_step':
      rows(await deal({ next_step: String(p.payload.next_step) }), 'deals');
      return;
    case 'forecast':
      rows(await deal({ forecast: String(p.payload.to_forecast) }), 'deals');
      return;
    case 'campaign_launch':
      await activateCampaign(ctx, p.campaign_id!);
      return;
  }
}

/** Applies an approved proposal to the CRM's rows (once: an applied one is returned as it is); status applied. */
export async function applyProposal(ctx: Ctx, proposal: Proposal, decision: Decision = {}): Promise<Proposal> {
  if (proposal.status === 'applied') return proposal;
  if (proposal.status === 'rejected') throw new HttpError(409, 'already_decided', 'The proposal was rejected; it cannot be applied.');
  await applyChange(ctx, proposal);
  return save(ctx, proposal, { status: 'applied', decided_at: decision.decided_at ?? proposal.decided_at ?? new Date().toISOString(), decided_by: decision.decided_by ?? undefined, reason: decision.reason ?? undefined });
}

/** Records a rejection; a campaign waiting for its launch goes back to draft so it can be changed and launched again. */
export async function rejectProposal(ctx: Ctx, proposal: Proposal, decision: Decision = {}): Promise<Proposal> {
  if (proposal.status === 'rejected') return proposal;
  if (proposal.status === 'applied') throw new HttpError(409, 'already_decided', 'The proposal was already applied.');
  if (proposal.kind === 'campaign_launch' && proposal.campaign_id) {
    rows(await ctx.asApp.data.from('campaigns').update({ status: 'draft' }, `id=${eq(proposal.campaign_id)}&status=eq.pending_approval`), 'campaigns');
  }
  return save(ctx, proposal, { status: 'rejected', decided_at: decision.decided_at ?? new Date().toISOString(), decided_by: decision.decided_by ?? undefined, reason: decision.reason ?? undefined });
}

/** Brings the proposals row in line with its substrate action: executed -> applied, rejected -> rejected. */
export async function settle(ctx: Ctx, proposal: Proposal, action: ActionState, decision: Decision = {}): Promise<Proposal> {
  const who: Decision = { decided_by: decision.decided_by ?? action.decided_by_end_user, decided_at: decision.decided_at ?? action.decided_at, reason: decision.reason };
  if (action.status === 'executed') return applyProposal(ctx, proposal, who);
  if (action.status === 'rejected') return rejectProposal(ctx, proposal, { ...who, reason: who.reason ?? action.reject_reason });
  return proposal;
}
