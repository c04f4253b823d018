// Kysely's Postgres dialect with BEGIN sent in the same round trip as the transaction's first statement: on a pool in
// pg's pipeline mode (queries written without waiting for the previous answer; Postgres answers them in order), BEGIN
// is written and not awaited, so every transaction of the control database costs one round trip fewer. Its answer is
// read before the COMMIT or ROLLBACK.
//
// BEGIN fails only with its connection (a transaction already open is a warning, not an error), and then so does
// every statement written after it; it is never the case that BEGIN failed and a later statement ran on its own.
import { CompiledQuery, PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type TransactionSettings } from 'kysely';

/** The answer to each connection's BEGIN while its transaction runs. */
const begun = new WeakMap<DatabaseConnection, Promise<unknown>>();

class DeferredBeginDriver extends PostgresDriver {
  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel || settings.accessMode) return super.beginTransaction(connection, settings);
    // executeQuery hands the statement to pg before its first await: BEGIN is on the wire before the next one.
    const answer = connection.executeQuery(CompiledQuery.raw('begin'));
    answer.catch(() => undefined); // read in #settle; an early failure is not unhandled meanwhile
    begun.set(connection, answer);
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await settle(connection);
    return super.commitTransaction(connection);
  }

  override async rollbackTransaction(connection: Parameters<PostgresDriver['rollbackTransaction']>[0]): Promise<void> {
    await settle(connection).catch(() => undefined);
    return super.rollbackTransaction(connection);
  }
}

/** Waits for the connection's BEGIN (answered before anything written after it): its failure is the transaction's. */
async function settle(connection: DatabaseConnection): Promise<void> {
  const answer = begun.get(connection);
  begun.delete(connection);
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
