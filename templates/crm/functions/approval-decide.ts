// POST {proposal_id, decision: approve|reject, reason?}: an owner or admin of the workspace decides on a proposal. The
// decision is made in the substrate as this end user (the owner allowed the CRM's end users to decide on its own
// proposals when linking it); an approved change is then applied to the CRM (lib/proposals.ts) and the row records
// who decided, when and why. A proposal someone decided elsewhere meanwhile is settled as they decided, and 409.
import type { Ctx } from '../lib/ctx.ts';
import { substrateOf } from '../lib/entities.ts';
import { HttpError, body, handler, json, oneOf, text, uuid } from '../lib/http.ts';
import { applyProposal, rejectProposal, settle, type ActionState, type Proposal } from '../lib/proposals.ts';
import { requireMember, rowOf } from '../lib/workspace.ts';

/** The substrate's refusal of a decision on an action no longer proposed. */
const isDecidedElsewhere = (err: unknown): boolean => (err as { status?: unknown })?.status === 409;

async function decide(ctx: Ctx, proposal: Proposal, decision: 'approve' | 'reject', reason: string | undefined, userId: string): Promise<Proposal> {
  const substrate = substrateOf(ctx);
  const decided = { decided_by: userId, decided_at: new Date().toISOString(), reason: reason ?? null };
  try {
    if (decision === 'approve') await substrate.approve(proposal.action_id!);
    else await substrate.reject(proposal.action_id!, reason);
  } catch (err) {
    if (!isDecidedElsewhere(err)) throw err;
    const settled = await settle(ctx, proposal, (await substrate.action(proposal.action_id!)) as ActionState);
    throw new HttpError(409, 'already_decided', `The proposal was already decided elsewhere; it is now ${settled.status}.`);
  }
  return decision === 'approve' ? applyProposal(ctx, proposal, decided) : rejectProposal(ctx, proposal, decided);
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const id = uuid(input, 'proposal_id');
  const decision = oneOf(input, 'decision', ['approve', 'reject'] as const);
  const reason = text(input, 'reason', { optional: true, max: 1000 });
  const { row: proposal } = await rowOf<Proposal>(ctx, 'proposals', id);
  const member = await requireMember(ctx, proposal.workspace_id, ['owner', 'admin']);
  if (proposal.status !== 'pending') throw new HttpError(409, 'already_decided', `The proposal is already ${proposal.status}.`);
  if (!proposal.action_id) throw new HttpError(409, 'no_action', 'The proposal has no substrate action to decide on.');
  return json({ proposal: await decide(ctx, proposal, decision, reason, member.user_id) });
});
