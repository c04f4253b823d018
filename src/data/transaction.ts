// A transaction of the data API that its holder keeps open across several requests (ctx.data.transaction in a
// function): one connection of the app's pool, one role with its claims, statements compiled by the data service as
// for any request (DataService.in), then COMMIT or ROLLBACK. The holder is code we do not trust to end it, so the
// bounds live here: a deadline after which it is rolled back and its connection released, whatever the holder does,
// and a share of the app's pool (TransactionSlots) so that one tenant's transactions never hold every connection.
import type pg from 'pg';
import { AppError } from '../core/errors.ts';
import { beginAs, DATA_STATEMENT_TIMEOUT_MS, runStep, type RoleContext, type RunOptions, type StatementResult } from './executor.ts';

/** Longest a transaction may stay open, from BEGIN to COMMIT: then it is rolled back. */
export const TRANSACTION_MAX_MS = 5000;
/**
 * Postgres's own end of a transaction whose holder is gone (this process stalled or lost): its session is closed.
 * Later than our deadline, which normally ends it first.
 */
const IDLE_IN_TRANSACTION_MS = TRANSACTION_MAX_MS * 2;

/** Transactions one app may hold open at once in this process: at most half its pool, so the other half serves everyone else. */
export function transactionsPerApp(poolSize: number): number {
  return Math.max(1, Math.floor(poolSize / 2));
}

const NEW_TRANSACTION = 'Handle the failed call\'s error; to write again, run a new ctx.data.transaction.';

export const transactionErrors = {
  tooManyForApp: (open: number, poolSize: number) =>
    new AppError(
      429,
      'TOO_MANY_TRANSACTIONS',
      `The app already has ${open} transactions open, the most it may hold at once (half of its ${poolSize} database connections).`,
      'Retry in a moment with backoff; keep transactions short (no fetch or AI calls inside) so that they end sooner.',
      { retry_after_seconds: 1 },
    ),
  tooManyForInvocation: (max: number) =>
    new AppError(
      429,
      'TOO_MANY_TRANSACTIONS',
      `This invocation already has ${max} transaction open, the most it may hold at once (transactions do not nest).`,
      'Make the writes with the open transaction\'s tx.from(...), or await its end before starting another.',
    ),
  timedOut: () =>
    new AppError(
      504,
      'TRANSACTION_TIMEOUT',
      `The transaction was open longer than ${TRANSACTION_MAX_MS} ms and was rolled back; nothing it wrote was kept.`,
      'Do slow work (fetch, AI calls, waiting) before or after the transaction; keep inside it only the reads and writes that must be atomic.',
    ),
  aborted: (cause: AppError) =>
    new AppError(
      409,
      'TRANSACTION_ABORTED',
      `The transaction was rolled back because a call in it failed (${cause.status} ${cause.code}: ${cause.message}); nothing it wrote was kept.`,
      NEW_TRANSACTION,
    ),
  ended: (how: 'committed' | 'rolled back') =>
    new AppError(409, 'TRANSACTION_ENDED', `The transaction was already ${how}.`, 'Await every tx call inside the callback; after it, use ctx.data or a new ctx.data.transaction.'),
  rollbackInside: () =>
    new AppError(400, 'VALIDATION_FAILED', 'Prefer tx=rollback has no meaning inside a transaction.', 'Throw from the transaction\'s callback to roll everything back.'),
};

/** Open transactions per app in this process. */
export class TransactionSlots {
  readonly #open = new Map<string, number>();

  /** Takes a slot of the app, or refuses when it holds its share of a pool of `poolSize` connections. */
  take(appId: string, poolSize: number): void {
    const open = this.#open.get(appId) ?? 0;
    if (open >= transactionsPerApp(poolSize)) throw transactionErrors.tooManyForApp(open, poolSize);
    this.#open.set(appId, open + 1);
  }

  give(appId: string): void {
    const open = (this.#open.get(appId) ?? 1) - 1;
    if (open > 0) this.#open.set(appId, open);
    else this.#open.delete(appId);
  }
}

export class DataTransaction {
  readonly appId: string;
  readonly role: RoleContext;
  readonly #client: pg.PoolClient;
  readonly #deadline: number;
  readonly #timer: NodeJS.Timeout;
  readonly #onEnd: () => void;
  /** Set once it ended: what later calls are answered with. */
  #ended: AppError | undefined;
  #released: Promise<void> | undefined;

  private constructor(appId: string, role: RoleContext, client: pg.PoolClient, onEnd: () => void) {
    this.appId = appId;
    this.role = role;
    this.#client = client;
    this.#onEnd = onEnd;
    this.#deadline = performance.now() + TRANSACTION_MAX_MS;
    this.#timer = setTimeout(() => void this.#end(transactionErrors.timedOut(), 'rollback'), TRANSACTION_MAX_MS);
  }

  /** BEGIN on a connection of `pool` as `role`; `onEnd` runs once its connection is back in the pool. */
  static async begin(pool: pg.Pool, appId: string, role: RoleContext, onEnd: () => void): Promise<DataTransaction> {
    const client = await pool.connect();
    try {
      await client.query(beginAs(role, `, set_config('idle_in_transaction_session_timeout', '${IDLE_IN_TRANSACTION_MS}', true)`));
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    return new DataTransaction(appId, role, client, onEnd);
  }

  /** Whether it ended (committed, rolled back, failed or timed out). */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** One statement of the data service in this transaction, which fixes its app and role. */
  run(appId: string, role: RoleContext, statement: string, opts: RunOptions): Promise<StatementResult> {
    if (appId !== this.appId || role.role !== this.role.role || role.claims !== this.role.claims) {
      throw new Error('a statement of another app or role was sent to a transaction');
    }
    if (this.#ended) return Promise.reject(this.#ended);
    if (opts.rollback) return Promise.reject(transactionErrors.rollbackInside());
    // No statement outlives the deadline: an in-flight one would hold the connection past it.
    const timeoutMs = Math.min(DATA_STATEMENT_TIMEOUT_MS, this.#deadline - performance.now());
    if (timeoutMs < 1) return Promise.reject(transactionErrors.timedOut());
    return runStep(this.#client, statement, { write: opts.write, timezone: opts.timezone, timeoutMs });
  }

  /** COMMIT; refused with the reason when it already ended (a failed call, the deadline). */
  async commit(): Promise<void> {
    if (this.#ended) throw this.#ended;
    await this.#end(transactionErrors.ended('committed'), 'commit');
  }

  /** ROLLBACK (nothing to do when it already ended). */
  async rollback(): Promise<void> {
    await this.#end(transactionErrors.ended('rolled back'), 'rollback');
  }

  /** A call in it failed with `cause`: everything is rolled back, and later calls are told why. */
  async abort(cause: AppError): Promise<void> {
    await this.#end(transactionErrors.aborted(cause), 'rollback');
  }

  /**
   * Ends it once (later ends wait for the first): COMMIT or ROLLBACK, queued by the client after a statement in flight
   * (whose timeout is within the deadline), then the connection goes back (a broken one destroyed) and onEnd runs. A
   * failed COMMIT (a deferred constraint) rejects with the database's error: nothing was kept.
   */
  #end(reason: AppError, how: 'commit' | 'rollback'): Promise<void> {
    if (this.#released) return this.#released;
    this.#ended = reason;
    clearTimeout(this.#timer);
    const done = this.#client.query(how).then(
      () => this.#client.release(),
      (err: Error) => {
        this.#client.release(err);
        if (how === 'rollback') return;
        this.#ended = transactionErrors.ended('rolled back');
        throw err;
      },
    );
    this.#released = done.then(this.#onEnd, this.#onEnd);
    return this.#released.then(() => done);
  }
}
