// Daily snapshots: one row of counters per substrate user and UTC day (the substrate_snapshots cron writes them; GET
// snapshots makes today's when it is missing). Attention rules (part 2) evaluate predicates over today's row.
import { sql, type Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';

/** A snapshot as the API returns it. Counts are of the user's rows when the snapshot was taken (`taken_at`). */
export interface SnapshotView {
  snapshot_date: string;
  /** Entities (merged-away ones are gone). */
  entity_count: number;
  /** Decisions of every status (superseded included). */
  decision_count: number;
  /** Commitments of every status. */
  commitment_count: number;
  learning_count: number;
  /** Active principles (retired ones are `expired` and not counted). */
  principle_count: number;
  artifact_count: number;
  /** Commitments still `proposed`, `tentative` or `confirmed`. */
  open_commitment_count: number;
  /** Every action of the ledger (proposed, executed, rejected). */
  action_count: number;
  /** Actions waiting for the human (`proposed`). */
  pending_approval_count: number;
  taken_at: string;
}

const TODAY = sql`(now() at time zone 'UTC')::date`;

/** Users per statement of a cron run: short transactions, and a run that stops midway keeps what it wrote. */
const BATCH = 500;

/**
 * Writes today's snapshot of each of these users. `replace`: a row already written today is refreshed (the cron);
 * otherwise it is kept (on demand). Returns the number of rows written.
 */
async function write(db: Kysely<ControlDatabase>, userIds: readonly string[], replace: boolean): Promise<number> {
  if (userIds.length === 0) return 0;
  const onConflict = replace
    ? sql`do update set entity_count = excluded.entity_count, decision_count = excluded.decision_count, commitment_count = excluded.commitment_count,
        learning_count = excluded.learning_count, principle_count = excluded.principle_count, artifact_count = excluded.artifact_count,
        open_commitment_count = excluded.open_commitment_count, action_count = excluded.action_count,
        pending_approval_count = excluded.pending_approval_count, taken_at = excluded.taken_at`
    : sql`do nothing`;
  const result = await sql`
    insert into substrate_snapshots (user_id, snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count,
                                     artifact_count, open_commitment_count, action_count, pending_approval_count, taken_at)
    select u.id, ${TODAY},
      (select count(*) from substrate_entities x where x.user_id = u.id),
      (select count(*) from substrate_decisions x where x.user_id = u.id),
      (select count(*) from substrate_commitments x where x.user_id = u.id),
      (select count(*) from substrate_learnings x where x.user_id = u.id),
      (select count(*) from substrate_principles x where x.user_id = u.id and x.status = 'active'),
      (select count(*) from substrate_artifacts x where x.user_id = u.id),
      (select count(*) from substrate_commitments x where x.user_id = u.id and x.status in ('proposed', 'tentative', 'confirmed')),
      (select count(*) from substrate_actions x where x.user_id = u.id),
      (select count(*) from substrate_actions x where x.user_id = u.id and x.status = 'proposed'),
      now()
    from substrate_users u where u.id = any(${userIds as string[]}::uuid[])
    on conflict (user_id, snapshot_date) ${onConflict}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export class SubstrateSnapshots {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /**
   * The cron: today's (UTC) snapshot of every user with activity (at least one action in the ledger, the one door
   * for writes), refreshed when it already exists, so any run, repeated or late, leaves today's counters current.
   */
  async takeAll(): Promise<{ users: number }> {
    let after = '00000000-0000-0000-0000-000000000000';
    let users = 0;
    for (;;) {
      const { rows } = await sql<{ id: string }>`
        select u.id from substrate_users u
        where u.id > ${after}::uuid and exists (select 1 from substrate_actions a where a.user_id = u.id)
        order by u.id limit ${BATCH}`.execute(this.#db);
      if (rows.length === 0) return { users };
      await write(
        this.#db,
        rows.map((r) => r.id),
        true,
      );
      users += rows.length;
      after = rows.at(-1)!.id;
      if (rows.length < BATCH) return { users };
    }
  }

  /** Today's snapshot of one user, refreshed. */
  async take(userId: string): Promise<void> {
    await write(this.#db, [userId], true);
  }

  /** The last `days` days (today included), newest first; today's is taken first when the cron has not run yet. */
  async list(userId: string, days: number): Promise<{ snapshots: SnapshotView[] }> {
    const today = await sql`select 1 from substrate_snapshots where user_id = ${userId} and snapshot_date = ${TODAY}`.execute(this.#db);
    if (!today.rows[0]) await write(this.#db, [userId], false);
    const { rows } = await sql<Omit<SnapshotView, 'taken_at'> & { taken_at: Date }>`
      select snapshot_date::text as snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count, artifact_count,
        open_commitment_count, action_count, pending_approval_count, taken_at
      from substrate_snapshots
      where user_id = ${userId} and snapshot_date > ${TODAY} - ${days}::int
      order by snapshot_date desc`.execute(this.#db);
    return { snapshots: rows.map((r) => ({ ...r, taken_at: r.taken_at.toISOString() })) };
  }
}
