import pg from 'pg';
import type { Logger } from 'pino';
import { createClient, createPool, inTransaction, type TransactionOptions } from '../db/pg.ts';
import { AppMigrator } from './app-migrations.ts';

export const APP_ROLES = ['svc_anon', 'svc_user', 'svc_service'] as const;

/**
 * Statements on one app's database as the platform (the database's owner, so row-level security does not apply). Every
 * area reaches app databases through this; only the data API's executor holds the pool itself, because it sends BEGIN,
 * the role, the statement and COMMIT in one round trip (src/data/executor.ts).
 */
export interface AppSql {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  /** `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (client: pg.PoolClient) => Promise<T>, opts?: TransactionOptions<T>): Promise<T>;
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

export interface AppDatabasesOptions {
  /** Connection string of the cluster holding app databases; its database name is ignored. */
  clusterUrl: string;
  prefix: string;
  /** Connections per app pool. */
  poolSize: number;
  /** Upper bound on connections held by all app pools together. */
  budget: number;
  /** Longest a request waits for a connection of its app's pool before a 503. */
  acquireTimeoutMs: number;
  log: Logger;
}

/**
 * Owns every per-app database: creation at the latest migration version, dropping, and a bounded LRU of pools so
 * that a thousand apps never hold a thousand pools (at most budget / poolSize pools live at once). A pool's first
 * checkout in this process brings an older app database up to date (src/apps/app-migrations.ts).
 */
export class AppDatabases {
  readonly #opts: AppDatabasesOptions;
  readonly #maintenance: pg.Pool;
  readonly #pools = new Map<string, pg.Pool>();
  readonly #maxPools: number;
  readonly #migrator: AppMigrator;
  #rolesReady: Promise<void> | undefined;

  constructor(opts: AppDatabasesOptions) {
    this.#opts = opts;
    this.#maintenance = createPool({ connectionString: this.#urlFor('postgres'), max: 2 });
    this.#maxPools = Math.max(1, Math.floor(opts.budget / opts.poolSize));
    this.#migrator = new AppMigrator(opts.log);
  }

  dbName(appId: string): string {
    return this.#opts.prefix + appId;
  }

  get prefix(): string {
    return this.#opts.prefix;
  }

  /** Creates the app's database and applies every app migration; on any failure nothing of it remains. */
  async create(appId: string): Promise<string> {
    await this.#ensureRoles();
    const name = this.dbName(appId);
    // template0: never inherit whatever an operator installed into template1.
    await this.#maintenance.query(`create database ${pg.escapeIdentifier(name)} template template0`);
    try {
      const client = createClient(this.#urlFor(name));
      await client.connect();
      try {
        await this.#migrator.migrate(appId, client);
      } finally {
        await client.end();
      }
      return name;
    } catch (err) {
      await this.dropByName(name).catch((dropErr: unknown) =>
        this.#opts.log.error({ err: dropErr, database: name }, 'could not drop a half-made app database'),
      );
      throw err;
    }
  }

  async drop(appId: string): Promise<void> {
    await this.dropByName(this.dbName(appId));
  }

  async dropByName(name: string): Promise<void> {
    if (!name.startsWith(this.#opts.prefix)) throw new Error(`refusing to drop ${name}: not an app database`);
    const appId = name.slice(this.#opts.prefix.length);
    await this.#evict(appId);
    this.#migrator.forget(appId);
    await this.#maintenance.query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
  }

  /** Every database carrying this platform's app prefix; the reaper compares them with app rows. */
  async listAppDatabaseNames(): Promise<string[]> {
    const { rows } = await this.#maintenance.query<{ datname: string }>(
      `select datname from pg_database where starts_with(datname, $1) and not datistemplate`,
      [this.#opts.prefix],
    );
    return rows.map((r) => r.datname);
  }

  /** The size on disk of every app database of this platform, by app id (one catalog query). */
  async sizes(): Promise<Map<string, number>> {
    const { rows } = await this.#maintenance.query<{ datname: string; bytes: string }>(
      `select datname, pg_database_size(datname)::text as bytes from pg_database where starts_with(datname, $1) and not datistemplate`,
      [this.#opts.prefix],
    );
    return new Map(rows.map((r) => [r.datname.slice(this.#opts.prefix.length), Number(r.bytes)]));
  }

  /** Statements on the app's database; the first in this process brings it up to date (see #gateUntilMigrated). */
  sql(appId: string): AppSql {
    const pool = this.pool(appId);
    return {
      query: (text, values) => pool.query(text, values),
      transaction: (fn, opts) => inTransaction(pool, fn, opts),
    };
  }

  /** The app's pool, most recently used last; the least recently used pool is closed past the budget. */
  pool(appId: string): pg.Pool {
    const existing = this.#pools.get(appId);
    if (existing) {
      this.#pools.delete(appId);
      this.#pools.set(appId, existing);
      return existing;
    }
    const pool = createPool({
      connectionString: this.#urlFor(this.dbName(appId)),
      max: this.#opts.poolSize,
      idleTimeoutMillis: 30_000,
      acquireTimeoutMs: this.#opts.acquireTimeoutMs,
    });
    this.#gateUntilMigrated(appId, pool);
    this.#pools.set(appId, pool);
    while (this.#pools.size > this.#maxPools) {
      const oldest = this.#pools.keys().next().value as string;
      void this.#evict(oldest);
    }
    return pool;
  }

  /**
   * The app database's platform migration version (the latest applied of db/app-migrations), migrating it first when
   * this process has not yet seen it up to date.
   */
  async migrationVersion(appId: string): Promise<number> {
    const known = this.#migrator.version(appId);
    if (known !== undefined) return known;
    // The first checkout of the pool migrates (see #gateUntilMigrated) and leaves the version known.
    (await this.pool(appId).connect()).release();
    const version = this.#migrator.version(appId);
    if (version === undefined) throw new Error(`app ${appId}: its database was dropped while being opened`);
    return version;
  }

  get openPools(): number {
    return this.#pools.size;
  }

  get maxPools(): number {
    return this.#maxPools;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.keys()].map((id) => this.#evict(id)));
    await this.#maintenance.end();
  }

  /**
   * Makes every checkout of the pool wait until the app database is at the latest version, once per process: callers
   * hold a plain pg.Pool and use query() or connect(), and pg-pool's query() checks out through connect(), so wrapping
   * connect() covers both. Once the version is known the wrapper only looks it up.
   */
  #gateUntilMigrated(appId: string, pool: pg.Pool): void {
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
    const migrated = () => this.#migrator.ensure(appId, () => connect() as Promise<pg.PoolClient>);
    pool.connect = ((callback?: ConnectCallback) => {
      if (this.#migrator.version(appId) !== undefined) return connect(callback);
      if (!callback) return migrated().then(() => connect());
      migrated().then(
        () => connect(callback),
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), undefined, () => {}),
      );
      return undefined;
    }) as pg.Pool['connect'];
  }

  async #evict(appId: string): Promise<void> {
    const pool = this.#pools.get(appId);
    if (!pool) return;
    this.#pools.delete(appId);
    await pool.end().catch(() => {});
  }

  #urlFor(database: string): string {
    const url = new URL(this.#opts.clusterUrl);
    url.pathname = '/' + encodeURIComponent(database);
    return url.toString();
  }

  /** The three data roles are cluster-wide: create them once per process, tolerating a concurrent creator. */
  #ensureRoles(): Promise<void> {
    this.#rolesReady ??= this.#createRoles().catch((err: unknown) => {
      this.#rolesReady = undefined;
      throw err;
    });
    return this.#rolesReady;
  }

  async #createRoles(): Promise<void> {
    const statements = APP_ROLES.map(
      (role) => `do $$ begin create role ${role} nologin noinherit;
        exception when duplicate_object or unique_violation then null; end $$;`,
    );
    // The platform login switches into these roles with SET LOCAL ROLE, so it must be a member of each.
    statements.push(`do $$ begin
      if not (select rolsuper from pg_roles where rolname = current_user) then
        execute format('grant svc_anon, svc_user, svc_service to %I', current_user);
      end if; end $$;`);
    await this.#maintenance.query(statements.join('\n'));
  }
}
