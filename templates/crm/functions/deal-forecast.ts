// POST {workspace_id}: the forecast rule (lib/deals.ts forecastOf: stage probability and close date) applied to the
// workspace's open deals; each deal whose category would change, and has no forecast proposal waiting already, gets
// one, proposed as an update of its substrate entity that a person approves. 202 with the proposals made, 200 when
// every deal already has the category the rule gives.
import { forecastOf, stagesOf, type Deal } from '../lib/deals.ts';
import { dealAttrs, dealEntity } from '../lib/entities.ts';
import { body, eq, handler, inList, json, rows, uuid } from '../lib/http.ts';
import { propose, type Proposal } from '../lib/proposals.ts';
import { requireMember } from '../lib/workspace.ts';

/** At most this many proposals per call: the rest wait for the next run, so a call stays within its time. */
const MAX_PROPOSALS = 25;

export default handler(async (request, ctx) => {
  const workspaceId = uuid(await body(request), 'workspace_id');
  const member = await requireMember(ctx, workspaceId);
  const stages = new Map((await stagesOf(ctx, workspaceId)).map((s) => [s.id, s]));
  const openIds = [...stages.values()].filter((s) => s.kind === 'open').map((s) => s.id);
  const deals = openIds.length
    ? rows(await ctx.asApp.data.from('deals').select<Deal>('*', { query: `workspace_id=${eq(workspaceId)}&stage_id=${inList(openIds)}&order=created_at` }), 'deals')
    : [];
  const waiting = new Set(
    rows(await ctx.asApp.data.from('proposals').select<{ deal_id: string }>('deal_id', { query: `workspace_id=${eq(workspaceId)}&kind=eq.forecast&status=eq.pending` }), 'proposals').map((p) => p.deal_id),
  );
  const changes = deals
    .map((deal) => ({ deal, stage: stages.get(deal.stage_id)!, to: forecastOf(stages.get(deal.stage_id)!, deal.close_date) }))
    .filter((c) => c.to !== c.deal.forecast && !waiting.has(c.deal.id));
  const proposals: Proposal[] = [];
  for (const { deal, stage, to } of changes.slice(0, MAX_PROPOSALS)) {
    const entityId = await dealEntity(ctx, deal, stage);
    const made = await propose(ctx, 'update_entity', { id: entityId, attrs: dealAttrs(deal, stage, { forecast: to }) }, `deal-forecast:${deal.id}:${deal.forecast}:${to}:${deal.updated_at}`, {
      workspace_id: workspaceId,
      user_id: member.user_id,
      kind: 'forecast',
      deal_id: deal.id,
      summary: `Forecast ${deal.title} as ${to.replace('_', ' ')} (was ${deal.forecast.replace('_', ' ')})`,
      payload: { from_forecast: deal.forecast, to_forecast: to, probability: stage.probability, close_date: deal.close_date },
    });
    proposals.push(made.proposal);
  }
  return json({ proposals, open_deals: deals.length, unchanged: deals.length - changes.length, deferred: Math.max(0, changes.length - MAX_PROPOSALS) }, proposals.length ? 202 : 200);
});
