// Kysely's Postgres dialect with BEGIN sent in the same round trip as the transaction's first statement, and COMMIT,
// when the caller asks (`withCommit`), in the same round trip as its last. On a pool in pg's pipeline mode (queries
// written without waiting for the previous answer; Postgres answers them in order), BEGIN is written and not awaited,
// so every transaction of the control database costs one round trip fewer. Its answer is read before the COMMIT or
// ROLLBACK.
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

type PgConnection = Parameters<PostgresDriver['releaseConnection']>[0];

/** Statements to be followed by COMMIT in their round trip (`withCommit`). */
const lastStatements = new WeakSet<CompiledQuery>();

/**
 * Runs `query` as the last statement of the transaction `tx` with COMMIT written right behind it: one round trip for
 * both. Its rows, once both are answered; its error (or COMMIT's) otherwise, and the transaction is over either way:
 * nothing may run in `tx` after it. Outside this dialect's transactions it is an ordinary statement.
 */
export async function withCommit<DB, R>(tx: Kysely<DB>, query: RawBuilder<R>): Promise<QueryResult<R>> {
  const compiled = query.compile(tx);
  lastStatements.add(compiled);
  return tx.executeQuery(compiled);
}

/** A connection of the pool as Kysely sees it; the driver's own methods take the one it wraps. */
class Connection implements DatabaseConnection {
  readonly inner: PgConnection;
  /** BEGIN's answer while the transaction runs. */
  begun: Promise<unknown> | undefined;
  /** COMMIT's answer once `withCommit` wrote it. */
  committed: Promise<QueryResult<unknown>> | undefined;

  constructor(inner: PgConnection) {
    this.inner = inner;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!lastStatements.has(query)) return this.inner.executeQuery<R>(query);
    // Both handed to pg before either answer is awaited: COMMIT is on the wire right behind the statement.
    const answer = this.inner.executeQuery<R>(query);
    const commit = this.inner.executeQuery<unknown>(CompiledQuery.raw('commit'));
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
    // executeQuery hands the statement to pg before its first await: BEGIN is on the wire before the next one.
    const answer = c.inner.executeQuery(CompiledQuery.raw('begin'));
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
  }

  override createDriver(): Driver {
    return new DeferredBeginDriver(this.#config);
  }
}

