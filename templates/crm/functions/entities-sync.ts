// Hourly: contacts, companies and deals mirrored as substrate entities (lib/entities.ts): rows never mirrored, and
// rows changed since about the last run. Unchanged rows replay their first upsert, so a re-run costs no writes. A
// bounded batch per table and run; one row failing (say, a payload the substrate refuses) does not stop the others.
import { eachLogged } from '../lib/batch.ts';
import type { Ctx } from '../lib/ctx.ts';
import type { Deal, Stage } from '../lib/deals.ts';
import { mirror, type MirroredRow, type MirroredTable } from '../lib/entities.ts';
import { handler, inList, json, rows } from '../lib/http.ts';

const BATCH = 100;
/** A little more than the schedule's hour, so a row changed during the previous run is not missed. */
const WINDOW_MS = 75 * 60_000;

async function due<T extends MirroredRow>(ctx: Ctx, table: MirroredTable): Promise<T[]> {
  const since = encodeURIComponent(new Date(Date.now() - WINDOW_MS).toISOString());
  return rows(await ctx.asApp.data.from(table).select<T>('*', { query: `or=(entity_id.is.null,updated_at.gt.${since})&order=updated_at&limit=${BATCH}` }), table);
}

export default handler(async (_request, ctx) => {
  if (!ctx.substrate) return json({ skipped: 'not linked to a substrate' });
  const out: Record<string, { done: number; failed: number }> = {};
  // Companies before contacts and deals: the order a person reads them in the substrate does not matter, but a run
  // cut short by its time limit has mirrored the rows others refer to.
  for (const table of ['companies', 'contacts'] as const) {
    out[table] = await eachLogged(await due(ctx, table), (r) => `${table} ${r.id}`, (r) => mirror(ctx, table, r));
  }
  const deals = await due<Deal & MirroredRow>(ctx, 'deals');
  const stageIds = [...new Set(deals.map((d) => d.stage_id))];
  const stages = new Map(
    stageIds.length ? rows(await ctx.asApp.data.from('pipeline_stages').select<Stage>('*', { query: `id=${inList(stageIds)}` }), 'pipeline_stages').map((s) => [s.id, s]) : [],
  );
  out.deals = await eachLogged(deals, (d) => `deal ${d.id}`, (d) => mirror(ctx, 'deals', d, stages.get(d.stage_id)));
  return json(out);
});
