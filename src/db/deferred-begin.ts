// Kysely's Postgres dialect with BEGIN sent in the same round trip as the transaction's first statement, and COMMIT,
// when the caller asks (`withCommit`), in the same round trip as its last. On a pool in pg's pipeline mode (queries
// written without waiting for the previous answer; Postgres answers them in order), BEGIN is written and not awaited,
// so every transaction of the control database costs one round trip fewer. Its answer is read before the COMMIT or
// ROLLBACK.
//
// Statements written together leave in one socket write: the connection's socket is corked from BEGIN to the first
// statement, and from the last statement to COMMIT (pg writes each query on its own otherwise, one `writev` each).
//
// BEGIN fails only with its connection (a transaction already open is a warning, not an error), and then so does
// every statement written after it; it is never the case that BEGIN failed and a later statement ran on its own.
import {
  AbortedTransactionError,
  CompiledQuery,
  PostgresDialect,
  PostgresDriver,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type QueryResult,
  type RawBuilder,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';

type PgConnection = Parameters<PostgresDriver['releaseConnection']>[0];

/** Statements to be followed by COMMIT in their round trip (`withCommit`). */
const lastStatements = new WeakSet<CompiledQuery>();

/** Most SQL texts given names (`prepared`): a bound on what the server keeps per connection, should texts vary. */
const MAX_STATEMENT_NAMES = 64;
/** SQL text to its prepared statement's name, the same on every connection. */
const statementNames = new Map<string, string>();

/**
 * Runs `query` as a named prepared statement: Postgres parses and plans it once per connection instead of on every
 * call (with a generic plan from its sixth run). For statements of a fixed text run on every request.
 */
export function prepared<DB, R>(db: Kysely<DB>, query: RawBuilder<R>): Promise<QueryResult<R>> {
  return db.executeQuery(named(query.compile(db)));
}

/**
 * Runs `query` as the last statement of the transaction `tx` with COMMIT written right behind it: one round trip for
 * both. Its rows, once both are answered; its error (or COMMIT's) otherwise, and the transaction is over either way:
 * nothing may run in `tx` after it. Outside this dialect's transactions it is an ordinary statement. Prepared as
 * `prepared` does.
 */
export async function withCommit<DB, R>(tx: Kysely<DB>, query: RawBuilder<R>): Promise<QueryResult<R>> {
  const compiled = named(query.compile(tx));
  lastStatements.add(compiled);
  return tx.executeQuery(compiled);
}

/** Gives the query's SQL text a statement name, unless too many texts have one already. */
function named<Q extends CompiledQuery>(query: Q): Q {
  if (!statementNames.has(query.sql) && statementNames.size < MAX_STATEMENT_NAMES) {
    statementNames.set(query.sql, `deferred_begin_${statementNames.size}`);
  }
  return query;
}

/** The pooled pg client that took the last query; Kysely hides which client a connection wraps. */
let lastClient: pg.Client | undefined;

/** pg's client as this file uses it: its query queue (8.23) besides its public query. */
interface PgClient {
  query(...args: unknown[]): unknown;
  _pulseQueryQueue(): void;
  _queryQueue: { name?: string }[];
}

/** The statement name for the query being handed to pg, from `client.query` to pg's queueing of it. */
let pendingName: string | undefined;

/**
 * Notes each new client of `pool` in `lastClient` whenever it takes a query. Kysely's connection hands its query to
 * its client before its first await, so right after that call `lastClient` is the connection's client. A text with
 * a statement name (`prepared`) is queued as that named statement: Kysely passes only text and parameters, so the
 * name is put on pg's query as it is queued (before it is written; the text still reaches `query` as a string).
 * The class's methods are called as they are at each call, not as they were at connect (instrumentation may wrap
 * them later).
 */
function watchClients(pool: pg.Pool): void {
  pool.on('connect', (pooled) => {
    const client = pooled as unknown as PgClient;
    const methods = (): PgClient => Object.getPrototypeOf(client) as PgClient;
    client.query = (...args: unknown[]) => {
      lastClient = pooled as pg.Client;
      pendingName = typeof args[0] === 'string' ? statementNames.get(args[0]) : undefined;
      try {
        return methods().query.apply(client, args);
      } finally {
        pendingName = undefined;
      }
    };
    client._pulseQueryQueue = () => {
      const queued = client._queryQueue.at(-1);
      if (pendingName && queued) queued.name = pendingName;
      pendingName = undefined;
      methods()._pulseQueryQueue.call(client);
    };
  });
}

/** A connection of the pool as Kysely sees it; the driver's own methods take the one it wraps. */
class Connection implements DatabaseConnection {
  readonly inner: PgConnection;
  /** The socket of the pg client it wraps, known once a query went through this wrapper. */
  socket: { cork(): void; uncork(): void } | undefined;
  /** BEGIN's answer while the transaction runs. */
  begun: Promise<unknown> | undefined;
  /** COMMIT's answer once `withCommit` wrote it. */
  committed: Promise<QueryResult<unknown>> | undefined;
  #corked = false;

  constructor(inner: PgConnection) {
    this.inner = inner;
  }

  /** Hands `query` to pg (written at once in pipeline mode) and learns the socket it went to. */
  write<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    lastClient = undefined;
    const answer = this.inner.executeQuery<R>(query);
    const client = lastClient as { connection?: { stream?: Connection['socket'] } } | undefined;
    lastClient = undefined; // not kept alive here
    this.socket ??= client?.connection?.stream;
    return answer;
  }

  /**
   * Holds what is written next in the socket's buffer until `uncork`, at the latest until the current promise chain
   * has run (a transaction that awaits something else before its first statement still sends BEGIN then).
   */
  cork(): void {
    if (!this.socket || this.#corked) return;
    this.socket.cork();
    this.#corked = true;
    process.nextTick(() => this.uncork());
  }

  /** Sends what was written since `cork` in one write. */
  uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.socket!.uncork();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!lastStatements.has(query)) {
      const answer = this.write<R>(query);
      this.uncork(); // BEGIN and this statement, in one write
      return answer;
    }
    // Both handed to pg before either answer is awaited: COMMIT is on the wire right behind the statement, and in
    // the same socket write (with BEGIN too when this is the first statement).
    this.cork();
    const answer = this.write<R>(query);
    const commit = this.write<unknown>(CompiledQuery.raw('commit'));
    this.uncork();
    commit.catch(() => undefined); // read below, or by commitTransaction when the statement failed
    this.committed = commit;
    const result = await answer;
    const { rows } = await commit;
    if ((rows[0] as { command?: string } | undefined)?.command === 'ROLLBACK') throw new AbortedTransactionError();
    return result;
  }

  cancelQuery(...args: Parameters<PgConnection['cancelQuery']>): Promise<void> {
    return this.inner.cancelQuery(...args);
  }

  collectSessionInfo(): Promise<void> {
    return this.inner.collectSessionInfo();
  }

  killSession(...args: Parameters<PgConnection['killSession']>): Promise<void> {
    return this.inner.killSession(...args);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class DeferredBeginDriver extends PostgresDriver {
  /** One wrapper per pooled connection, as Kysely keeps one per pg client. */
  readonly #wrappers = new WeakMap<PgConnection, Connection>();

  override async acquireConnection(...args: Parameters<PostgresDriver['acquireConnection']>): Promise<DatabaseConnection> {
    const inner = (await super.acquireConnection(...args)) as PgConnection;
    let wrapper = this.#wrappers.get(inner);
    if (!wrapper) this.#wrappers.set(inner, (wrapper = new Connection(inner)));
    return wrapper;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as Connection;
    c.committed = undefined;
    if (settings.isolationLevel || settings.accessMode) return super.beginTransaction(c.inner, settings);
    // executeQuery hands the statement to pg before its first await: BEGIN is on the wire before the next one, in
    // the same socket write once the connection's socket is known (from its first query on).
    c.cork();
    const answer = c.write(CompiledQuery.raw('begin'));
    answer.catch(() => undefined); // read in settle; an early failure is not unhandled meanwhile
    c.begun = answer;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as Connection;
    await settle(c);
    if (c.committed) {
      await c.committed; // written with the last statement (withCommit), which answered already
      return;
    }
    return super.commitTransaction(c.inner);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as Connection;
    await settle(c).catch(() => undefined);
    // After a COMMIT written with a failed last statement the transaction is over (Postgres rolled it back).
    if (c.committed) return void (await c.committed.catch(() => undefined));
    return super.rollbackTransaction(c.inner);
  }

  override savepoint(connection: DatabaseConnection, ...rest: Parameters<PostgresDriver['savepoint']> extends [unknown, ...infer R] ? R : never): Promise<void> {
    return super.savepoint((connection as Connection).inner, ...rest);
  }

  override rollbackToSavepoint(connection: DatabaseConnection, ...rest: Parameters<PostgresDriver['rollbackToSavepoint']> extends [unknown, ...infer R] ? R : never): Promise<void> {
    return super.rollbackToSavepoint((connection as Connection).inner, ...rest);
  }

  override releaseSavepoint(connection: DatabaseConnection, ...rest: Parameters<PostgresDriver['releaseSavepoint']> extends [unknown, ...infer R] ? R : never): Promise<void> {
    return super.releaseSavepoint((connection as Connection).inner, ...rest);
  }

  override releaseConnection(connection: DatabaseConnection): Promise<void> {
    return super.releaseConnection((connection as Connection).inner);
  }
}

/** Waits for the connection's BEGIN (answered before anything written after it): its failure is the transaction's. */
async function settle(c: Connection): Promise<void> {
  const answer = c.begun;
  c.begun = undefined;
  await answer;
}

/** The pg dialect with deferred BEGIN; `pool` must be in pipeline mode, or BEGIN still takes its own round trip. */
export class DeferredBeginDialect extends PostgresDialect {
  readonly #config: ConstructorParameters<typeof PostgresDialect>[0];

  constructor(config: ConstructorParameters<typeof PostgresDialect>[0]) {
    super(config);
    this.#config = config;
    if (config.pool instanceof pg.Pool) watchClients(config.pool);
  }

  override createDriver(): Driver {
    return new DeferredBeginDriver(this.#config);
  }
}

