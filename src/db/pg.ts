// The only place the platform makes Postgres pools and clients. Each one is built so that nothing the
// server or the network does to a connection can become an uncaught exception: terminated backends,
// failovers, protocol failures and oversized messages surface as a rejected query (mapped to 503 or 413
// in src/core/pg-errors.ts), never as an 'error' event without a listener.
import net from 'node:net';
import pg from 'pg';

/**
 * A socket whose 'data' listeners may throw: pg's protocol parser runs inside them, and a throw there (a
 * malformed or too-long message, ERR_STRING_TOO_LONG) would escape every try/catch. The socket is destroyed
 * with the error instead, which fails the active query and discards the connection.
 */
class GuardedSocket extends net.Socket {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'data') return super.emit(event, ...args);
    try {
      return super.emit(event, ...args);
    } catch (err) {
      this.destroy(err instanceof Error ? err : new Error(String(err)));
      return true;
    }
  }
}

const ignore = () => {};

export interface PoolOptions {
  /** Undefined only for a pool whose owner sets `pool.options.connectionString` before its first checkout. */
  connectionString: string | undefined;
  max: number;
  idleTimeoutMillis?: number;
  /** Longest wait for a free connection (queueing plus connecting); past it the checkout fails and maps to 503. */
  acquireTimeoutMs?: number;
  /**
   * pg's pipeline mode: a query is written at once, not after the previous one's answer (Postgres answers in order).
   * Only a caller that does not await between queries gains (deferred-begin.ts); one that awaits each sees no change.
   */
  pipeline?: boolean;
}

export function createPool(opts: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max,
    ...(opts.idleTimeoutMillis === undefined ? {} : { idleTimeoutMillis: opts.idleTimeoutMillis }),
    ...(opts.acquireTimeoutMs === undefined ? {} : { connectionTimeoutMillis: opts.acquireTimeoutMs }),
    ...(opts.pipeline ? { pipeline: true } : {}),
    stream: () => new GuardedSocket(),
  });
  // Idle clients report through the pool; a checked-out client whose server goes away emits 'error' on
  // itself after its query has already been rejected: both only mean "this connection is gone".
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
  return pool;
}

/** A single connection (DDL on a fresh database, maintenance); errors reach the caller through its queries. */
export function createClient(connectionString: string, options: { keepAlive?: boolean; connectTimeoutMs?: number } = {}): pg.Client {
  const client = new pg.Client({
    connectionString,
    stream: () => new GuardedSocket(),
    ...(options.keepAlive ? { keepAlive: true } : {}),
    ...(options.connectTimeoutMs ? { connectionTimeoutMillis: options.connectTimeoutMs } : {}),
  });
  client.on('error', ignore);
  return client;
}

export interface TransactionOptions<T> {
  /** Statements sent with BEGIN in the same round trip (SET LOCAL, advisory locks). */
  setup?: string;
  /** Whether what `fn` returned is committed; otherwise it is rolled back (a dry run). Default: always committed. */
  commit?: (out: T) => boolean;
}

/** Runs `fn` in a transaction on a connection the caller holds: committed when it resolves, rolled back when it throws. */
export function withinTransaction<T>(client: pg.ClientBase, fn: () => Promise<T>, opts: TransactionOptions<T> = {}): Promise<T> {
  return transact(client, fn, opts, () => {});
}

/**
 * A transaction of one statement: BEGIN with `setup` (SET LOCAL), `text` with `values`, and COMMIT, written together
 * on a pool in pipeline mode: one round trip holds the connection, where awaiting each takes three. A failed statement
 * leaves nothing to roll back (Postgres answers the COMMIT behind it with ROLLBACK). The results of `setup`'s
 * statements and the statement's, or the first error.
 */
export async function statementInOneTrip<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  setup: string,
  text: string,
  values: unknown[],
): Promise<{ setup: pg.QueryResult[]; result: pg.QueryResult<R> }> {
  const client = await pool.connect();
  const sent = await Promise.allSettled([client.query(`begin; ${setup}`), client.query<R>(text, values), client.query('commit')]);
  const failure = sent.find((r) => r.status === 'rejected');
  // An error Postgres answered left the connection as it was; any other (the connection lost) discards it.
  client.release(failure && !(failure.reason instanceof pg.DatabaseError) ? (failure.reason as Error) : undefined);
  if (failure) throw failure.reason;
  const [begun, statement] = sent as unknown as [PromiseFulfilledResult<pg.QueryResult[]>, PromiseFulfilledResult<pg.QueryResult<R>>];
  return { setup: begun.value.slice(1), result: statement.value };
}

/** Runs `fn` in a transaction on one connection of the pool; a connection whose rollback failed is discarded, not pooled. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>, opts: TransactionOptions<T> = {}): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    return await transact(client, () => fn(client), opts, (err) => (broken = err));
  } finally {
    client.release(broken);
  }
}

async function transact<T>(client: pg.ClientBase, fn: () => Promise<T>, opts: TransactionOptions<T>, onBroken: (err: Error) => void): Promise<T> {
  try {
    await client.query(opts.setup ? `begin; ${opts.setup}` : 'begin');
    const out = await fn();
    await client.query(opts.commit && !opts.commit(out) ? 'rollback' : 'commit');
    return out;
  } catch (err) {
    await client.query('rollback').catch((rollbackErr: unknown) => onBroken(rollbackErr instanceof Error ? rollbackErr : new Error('rollback failed')));
    throw err;
  }
}

