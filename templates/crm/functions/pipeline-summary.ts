// GET ?workspace_id: the pipeline as the deals board heads it: per stage the number of deals and their total, and
// the forecast: open deals weighted by their stage's probability, and their totals by forecast category. Read as the
// caller (row-level security). Amounts of different currencies are never added together: totals are per currency.
import type { Deal, Stage } from '../lib/deals.ts';
import { stagesOf } from '../lib/deals.ts';
import { eq, handler, json, params, rows, uuid } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';

type Totals = Record<string, number>;

const cents = (n: number): number => Math.round(n * 100) / 100;

/** Adds `amount` to `totals[currency]`. */
function add(totals: Totals, currency: string, amount: number): void {
  totals[currency] = cents((totals[currency] ?? 0) + amount);
}

export default handler(async (request, ctx) => {
  const workspaceId = uuid(params(request), 'workspace_id');
  await requireMember(ctx, workspaceId);
  const [stages, deals] = await Promise.all([
    stagesOf(ctx, workspaceId),
    ctx.data
      .from('deals')
      .select<Pick<Deal, 'stage_id' | 'amount' | 'currency' | 'forecast'>>('stage_id,amount,currency,forecast', { query: `workspace_id=${eq(workspaceId)}` })
      .then((r) => rows(r, 'deals')),
  ]);
  const byStage = new Map(stages.map((s) => [s.id, { stage: s, count: 0, totals: {} as Totals }]));
  const weighted: Totals = {};
  const open: Totals = {};
  const byCategory: Record<string, Totals> = {};
  for (const deal of deals) {
    const entry = byStage.get(deal.stage_id);
    if (!entry) continue;
    const amount = Number(deal.amount);
    entry.count++;
    add(entry.totals, deal.currency, amount);
    if (entry.stage.kind !== 'open') continue;
    add(open, deal.currency, amount);
    add(weighted, deal.currency, (amount * entry.stage.probability) / 100);
    add((byCategory[deal.forecast] ??= {}), deal.currency, amount);
  }
  const stageView = ({ stage, count, totals }: { stage: Stage; count: number; totals: Totals }) => ({
    stage_id: stage.id,
    name: stage.name,
    kind: stage.kind,
    probability: stage.probability,
    count,
    totals,
  });
  return json({ stages: [...byStage.values()].map(stageView), forecast: { open, weighted, by_category: byCategory } });
});
