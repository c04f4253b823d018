// Daily (cron, as the app): contacts and companies enriched more than STALE_DAYS ago enriched again, a few per run
// (each costs credits), oldest first; contacts ask the vendor afresh rather than the platform's profile cache.
import { handler, json, rows } from '../lib/http.ts';
import type { Ctx } from '../lib/ctx.ts';
import { enrichCompany, enrichContact, type CompanyRow, type ContactRow } from '../lib/enrich.ts';
import { errorText } from '../lib/tools.ts';

/** Records refreshed per table per run. */
const PER_RUN = 10;

/** Each stale row of the table refreshed in turn; one failure is logged and the rest go on. */
async function refresh<T extends { id: string }>(ctx: Ctx, table: string, before: string, enrich: (row: T) => Promise<{ credits: number }>) {
  const stale = rows(
    await ctx.asApp.data.from(table).select<T>('*', { query: `enriched_at=lt.${encodeURIComponent(before)}&order=enriched_at.asc&limit=${PER_RUN}` }),
    table,
  );
  let refreshed = 0;
  let failed = 0;
  let credits = 0;
  for (const row of stale) {
    try {
      credits += (await enrich(row)).credits;
      refreshed++;
    } catch (err) {
      failed++;
      console.error(`${table} ${row.id}: ${errorText(err)}`);
    }
  }
  return { stale: stale.length, refreshed, failed, credits };
}

export default handler(async (_request, ctx) => {
  const days = Number(ctx.env.STALE_DAYS ?? '30');
  const before = new Date(Date.now() - (Number.isFinite(days) && days >= 0 ? days : 30) * 86_400_000).toISOString();
  const db = ctx.asApp.data;
  const contacts = await refresh<ContactRow>(ctx, 'contacts', before, (c) => enrichContact(ctx, db, c, { userId: null, force: true }));
  const companies = await refresh<CompanyRow>(ctx, 'companies', before, (c) => enrichCompany(ctx, db, c, { userId: null }));
  return json({ before, contacts, companies });
});
