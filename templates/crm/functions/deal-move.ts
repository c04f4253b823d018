// POST {deal_id, stage_id}: proposes moving the deal to another stage. The change is an update_entity on the deal's
// substrate entity that waits for a person (require_approval), mirrored as a proposals row; nothing moves until an
// owner or admin approves (approval-decide) or the owner does on the platform (substrate-events). 202 with the proposal.
import { stageOf, type Deal } from '../lib/deals.ts';
import { dealAttrs, dealEntity } from '../lib/entities.ts';
import { HttpError, body, eq, handler, json, rows, uuid } from '../lib/http.ts';
import { propose } from '../lib/proposals.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const { row: deal, member } = await rowOf<Deal>(ctx, 'deals', uuid(input, 'deal_id'));
  const to = await stageOf(ctx, deal.workspace_id, uuid(input, 'stage_id'));
  if (to.id === deal.stage_id) throw new HttpError(409, 'same_stage', `The deal is already in ${to.name}.`);
  const from = await stageOf(ctx, deal.workspace_id, deal.stage_id);
  const entityId = await dealEntity(ctx, deal, from);
  // A retry while the proposal waits replays it; a move after the last one was decided is a new proposal.
  const decided = rows(await ctx.asApp.data.from('proposals').select('id', { query: `deal_id=${eq(deal.id)}&kind=eq.stage_change&status=neq.pending` }), 'proposals').length;
  const { proposal, verdict } = await propose(ctx, 'update_entity', { id: entityId, attrs: dealAttrs(deal, to) }, `deal-move:${deal.id}:${from.id}:${to.id}:${decided}`, {
    workspace_id: deal.workspace_id,
    user_id: member.user_id,
    kind: 'stage_change',
    deal_id: deal.id,
    summary: `Move ${deal.title} from ${from.name} to ${to.name}`,
    payload: { from_stage_id: from.id, to_stage_id: to.id, from_stage: from.name, to_stage: to.name },
  });
  return json({ proposal, verdict }, 202);
});
