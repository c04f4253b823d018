// Making usage rows durable without holding the account's balance row through a WAL flush.
//
// Why: a call's correction updates the account's one balance row, in the account's queue (BalanceQueue), committed
// without waiting for the flush. Committed durably, it would hold that row's lock through its flush, and the account's
// next calls would wait behind it. Instead, the rows it wrote are made durable afterwards by a transaction of their
// own: an update of those usage rows (to what they already hold) commits durably, and its flush takes the WAL up to its
// commit record, with every commit before it (the correction, and the call's advance before it). It locks only those usage rows, which nobody else waits for. Calls that ask while one flush is
// in flight share the next one: one round trip and one flush for all of them.
import { sql, type Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class UsageFlush {
  readonly #db: Kysely<ControlDatabase>;
  /** The usage rows of the next flush, and who waits for it. */
  #next: { ids: string[]; waiters: Waiter[] } | undefined;
  #running = false;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /**
   * Resolves once the commit that wrote usage row `usageId` (committed before this call) is on disk; rejects when that
   * cannot be known (the database was unreachable or restarted: that commit may be lost).
   */
  durable(usageId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#next ??= { ids: [], waiters: [] };
      this.#next.ids.push(usageId);
      this.#next.waiters.push({ resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#next) {
      const batch = this.#next;
      this.#next = undefined;
      try {
        // A row rewritten as it is still writes its new version to the WAL, so the commit is flushed (with
        // synchronous_commit on, the connection's default). A row gone (its app deleted) has nothing left to keep.
        await sql`update ai_usage set latency_ms = latency_ms where id = any(${batch.ids}::bigint[])`.execute(this.#db);
        for (const waiter of batch.waiters) waiter.resolve();
      } catch (err) {
        for (const waiter of batch.waiters) waiter.reject(err);
      }
    }
    this.#running = false;
  }
}
