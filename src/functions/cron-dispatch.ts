// The cron dispatcher's tick: due slots of cron functions become functions_run_cron jobs (the matcher itself is
// cron.ts). Separate from the service because it only touches the control database and graphile-worker's queue.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import { cronSlots, parseCron } from '../core/cron.ts';
import { enqueue } from '../core/jobs.ts';
import { functionsRunCron } from './jobs.ts';
import { jsonObject } from '../db/json.ts';
import type { ControlDatabase } from '../db/types.ts';

/** A cron function dispatches at most this many missed slots per tick, from at most this far back. */
const CRON_CATCH_UP_SLOTS = 60;
const CRON_CATCH_UP_MS = 60 * 60_000;

/**
 * `halted`: the app is paused, its account suspended, its clone still being made (a half-copied app must not run its
 * jobs), or it is a shipped template (a source to clone from, whose jobs would run for nobody).
 */
type DueRow = Pick<Selectable<ControlDatabase['functions']>, 'id' | 'trigger_config' | 'cron_cursor' | 'created_at'> & { halted: boolean };

/**
 * For each cron function, the slots after its cursor up to `now` (at most the last hour) are enqueued as
 * functions_run_cron jobs with the job key `fncron:<function id>:<slot>` and the cursor advances, in one
 * transaction. Rows are claimed with SKIP LOCKED, so concurrent ticks on several workers never dispatch the same
 * slot twice.
 */
export async function dispatchCron(db: Kysely<ControlDatabase>, log: Logger, now: Date): Promise<{ functions: number; enqueued: number }> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<DueRow>`
      select f.id, f.trigger_config, f.cron_cursor, f.created_at,
        (a.paused_at is not null or ac.status = 'suspended' or a.status <> 'ready'
          or exists (select 1 from templates t where t.app_id = a.id and t.slug is not null)) as halted
      from functions f join apps a on a.id = f.app_id join accounts ac on ac.id = a.account_id
      where f.trigger_type = 'cron' and (f.cron_cursor is null or f.cron_cursor < ${now})
      for update of f skip locked`.execute(tx);
    let enqueued = 0;
    for (const row of rows) {
      // A halted app runs nothing: its slots pass by (they are not caught up later).
      for (const slot of row.halted ? [] : dueSlots(row, now, log)) {
        await enqueueSlot(tx, row.id, slot);
        enqueued++;
      }
      await sql`update functions set cron_cursor = ${now} where id = ${row.id}`.execute(tx);
    }
    return { functions: rows.length, enqueued };
  });
}

/** Slots after the cursor (or the creation), bounded by the catch-up window; none when the schedule does not parse. */
function dueSlots(row: DueRow, now: Date, log: Logger): Date[] {
  const cursor = row.cron_cursor ?? row.created_at;
  const after = new Date(Math.max(cursor.getTime(), now.getTime() - CRON_CATCH_UP_MS));
  try {
    return cronSlots(parseCron(String(jsonObject(row.trigger_config).schedule)), after, now, CRON_CATCH_UP_SLOTS);
  } catch (err) {
    log.error({ err, function_id: row.id }, 'stored cron schedule does not parse');
    return [];
  }
}

/** The slot-derived job key de-duplicates a slot enqueued twice (at-least-once ticks). */
async function enqueueSlot(tx: Kysely<ControlDatabase>, functionId: string, slot: Date): Promise<void> {
  const at = slot.toISOString();
  await enqueue(tx, functionsRunCron, { function_id: functionId, scheduled_at: at }, { jobKey: `fncron:${functionId}:${at}`, jobKeyMode: 'preserve_run_at' });
}
