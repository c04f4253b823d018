// GET ?workspace_id&status: the workspace's proposals (default: pending; or approved, rejected, applied, all), newest
// first, each with its substrate action's status and verdict. A proposal still pending here whose action was decided
// elsewhere (the owner on the platform's approval page, with no outbox target registered) is settled on the way, so
// the inbox never shows as waiting what a person already decided.
import type { Ctx } from '../lib/ctx.ts';
import { HttpError, eq, handler, json, params, rows, uuid } from '../lib/http.ts';
import { settle, type ActionState, type Proposal } from '../lib/proposals.ts';
import { errorText } from '../lib/tools.ts';
import { requireMember } from '../lib/workspace.ts';

const STATUSES = ['pending', 'approved', 'rejected', 'applied', 'all'] as const;
const LIMIT = 50;

interface ActionView extends ActionState {
  verdict: unknown;
  decided_via: string | null;
}

type Listed = Proposal & { action: Omit<ActionView, 'decided_by_end_user'> | null; action_error?: string };

/** The proposal with its action (null when the ledger could not say why), settled when the action was decided. */
async function withAction(ctx: Ctx, proposal: Proposal): Promise<Listed> {
  if (!proposal.action_id || !ctx.substrate) return { ...proposal, action: null };
  let action: ActionView;
  try {
    action = (await ctx.substrate.action(proposal.action_id)) as ActionView;
  } catch (err) {
    return { ...proposal, action: null, action_error: errorText(err) };
  }
  const view = { status: action.status, verdict: action.verdict, decided_via: action.decided_via, decided_at: action.decided_at ?? null, reject_reason: action.reject_reason ?? null };
  const current = proposal.status === 'pending' && action.status !== 'proposed' ? await settle(ctx, proposal, action) : proposal;
  return { ...current, action: view };
}

export default handler(async (request, ctx) => {
  const query = params(request);
  const workspaceId = uuid(query, 'workspace_id');
  const status = query.get('status') ?? 'pending';
  if (!(STATUSES as readonly string[]).includes(status)) throw new HttpError(400, 'invalid_field', `status must be one of ${STATUSES.join(', ')}.`);
  await requireMember(ctx, workspaceId);
  const filter = status === 'all' ? '' : `&status=${eq(status)}`;
  const proposals = rows(
    await ctx.data.from('proposals').select<Proposal>('*', { query: `workspace_id=${eq(workspaceId)}${filter}&order=created_at.desc&limit=${LIMIT}` }),
    'proposals',
  );
  return json({ proposals: await Promise.all(proposals.map((p) => withAction(ctx, p))) });
});
