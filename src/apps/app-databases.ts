import pg from 'pg';
import type { Logger } from 'pino';
import { createClient, createPool, inTransaction, statementInOneTrip, type TransactionOptions } from '../db/pg.ts';
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
  /** A transaction of one statement, BEGIN (with `setup`) and COMMIT written with it: one round trip (statementInOneTrip). */
  statementInOneTrip<R extends pg.QueryResultRow>(setup: string, text: string, values: unknown[]): Promise<{ setup: pg.QueryResult[]; result: pg.QueryResult<R> }>;
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

export interface AppDatabasesOptions {
  /** Region name -> connection string of the cluster holding its app databases (database names are ignored). */
  clusters: ReadonlyMap<string, string>;
  /** The region of apps that record none (made before regions). */
  defaultRegion: string;
  /** The region an app's row records (null: the default region); undefined when there is no such app. */
  regionOf: (appId: string) => Promise<string | null | undefined>;
  prefix: string;
  /** Connections per app pool. */
  poolSize: number;
  /** Upper bound on connections held by all app pools together. */
  budget: number;
  /** Longest a request waits for a connection of its app's pool before a 503. */
  acquireTimeoutMs: number;
  log: Logger;
}

/** An app database found on a cluster: its name and the region of that cluster. */
export interface ClusterDatabase {
  region: string;
  name: string;
}

/**
 * Owns every per-app database, on the cluster of its app's region: creation at the latest migration version,
 * dropping, and a bounded LRU of pools so that a thousand apps never hold a thousand pools (at most budget / poolSize
 * pools live at once). A pool's first checkout in this process finds the app's region (once per app: a region never
 * changes) and brings an older app database up to date (src/apps/app-migrations.ts).
 */
export class AppDatabases {
  readonly #opts: AppDatabasesOptions;
  /** Per region, a small pool on its cluster's `postgres` database for create, drop and catalog reads. */
  readonly #maintenance = new Map<string, pg.Pool>();
  readonly #pools = new Map<string, pg.Pool>();
  readonly #maxPools: number;
  readonly #migrator: AppMigrator;
  /** App id -> region, learnt at create or at the first opening. */
  readonly #regions = new Map<string, string>();
  readonly #rolesReady = new Map<string, Promise<void>>();

  constructor(opts: AppDatabasesOptions) {
    this.#opts = opts;
    this.#maxPools = Math.max(1, Math.floor(opts.budget / opts.poolSize));
    this.#migrator = new AppMigrator(opts.log);
  }

  /** The region names, the default first. */
  get regions(): string[] {
    return [...this.#opts.clusters.keys()];
  }

  get defaultRegion(): string {
    return this.#opts.defaultRegion;
  }

  hasRegion(region: string): boolean {
    return this.#opts.clusters.has(region);
  }

  dbName(appId: string): string {
    return this.#opts.prefix + appId;
  }

  get prefix(): string {
    return this.#opts.prefix;
  }

  /** Creates the app's database in the region and applies every app migration; on any failure nothing of it remains. */
  async create(appId: string, region: string = this.#opts.defaultRegion): Promise<string> {
    await this.#ensureRoles(region);
    const name = this.dbName(appId);
    this.#regions.set(appId, region);
    // template0: never inherit whatever an operator installed into template1.
    await this.#maintenanceOf(region).query(`create database ${pg.escapeIdentifier(name)} template template0`);
    try {
      const client = createClient(this.#urlFor(name, region));
      await client.connect();
      try {
        await this.#migrator.migrate(appId, client);
      } finally {
        await client.end();
      }
      return name;
    } catch (err) {
      await this.dropByName(name, region).catch((dropErr: unknown) =>
        this.#opts.log.error({ err: dropErr, database: name }, 'could not drop a half-made app database'),
      );
      throw err;
    }
  }

  /** Drops the app's database in its region (the region must be passed once the app's row is gone). */
  async drop(appId: string, region?: string | null): Promise<void> {
    await this.dropByName(this.dbName(appId), region ?? this.#regions.get(appId) ?? (await this.#regionOfApp(appId)));
  }

  async dropByName(name: string, region: string = this.#opts.defaultRegion): Promise<void> {
    if (!name.startsWith(this.#opts.prefix)) throw new Error(`refusing to drop ${name}: not an app database`);
    const appId = name.slice(this.#opts.prefix.length);
    await this.#evict(appId);
    this.#migrator.forget(appId);
    await this.#maintenanceOf(region).query(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
    this.#regions.delete(appId);
  }

  /** Every database carrying this platform's app prefix, on every region's cluster; the reaper compares them with app rows. */
  async listAppDatabases(): Promise<ClusterDatabase[]> {
    const found = await this.#acrossRegions(async (region, maintenance) => {
      const { rows } = await maintenance.query<{ datname: string }>(
        `select datname from pg_database where starts_with(datname, $1) and not datistemplate`,
        [this.#opts.prefix],
      );
      return rows.map((r) => ({ region, name: r.datname }));
    });
    return found.flat();
  }

  /** The size on disk of every app database of this platform, by app id (one catalog query per region). */
  async sizes(): Promise<Map<string, number>> {
    const found = await this.#acrossRegions(async (_region, maintenance) => {
      const { rows } = await maintenance.query<{ datname: string; bytes: string }>(
        `select datname, pg_database_size(datname)::text as bytes from pg_database where starts_with(datname, $1) and not datistemplate`,
        [this.#opts.prefix],
      );
      return rows.map((r): [string, number] => [r.datname.slice(this.#opts.prefix.length), Number(r.bytes)]);
    });
    return new Map(found.flat());
  }

  /** Statements on the app's database; the first in this process brings it up to date (see #gateUntilOpened). */
  sql(appId: string): AppSql {
    const pool = this.pool(appId);
    return {
      query: (text, values) => pool.query(text, values),
      transaction: (fn, opts) => inTransaction(pool, fn, opts),
      statementInOneTrip: (setup, text, values) => statementInOneTrip(pool, setup, text, values),
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
    const region = this.#regions.get(appId);
    const pool = createPool({
      // Unknown region: set by the first checkout (#gateUntilOpened), before any connection is made.
      connectionString: region === undefined ? undefined : this.#urlFor(this.dbName(appId), region),
      max: this.#opts.poolSize,
      idleTimeoutMillis: 30_000,
      acquireTimeoutMs: this.#opts.acquireTimeoutMs,
      // For statementInOneTrip; statements awaited one by one are sent as before.
      pipeline: true,
    });
    this.#gateUntilOpened(appId, pool);
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
    // The first checkout of the pool migrates (see #gateUntilOpened) and leaves the version known.
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
    await Promise.all([...this.#maintenance.values()].map((pool) => pool.end()));
  }

  /**
   * Makes every checkout of the pool wait until the pool knows the app's cluster and the app database is at the
   * latest version, once per process: callers hold a plain pg.Pool and use query() or connect(), and pg-pool's query()
   * checks out through connect(), so wrapping connect() covers both. Once both are known the wrapper only looks them up.
   */
  #gateUntilOpened(appId: string, pool: pg.Pool): void {
    const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
    const migrated = async () => {
      if (pool.options.connectionString === undefined) {
        // pg-pool hands its options to every client it makes: set before the first one, this is where they connect.
        pool.options.connectionString = this.#urlFor(this.dbName(appId), await this.#regionOfApp(appId));
      }
      await this.#migrator.ensure(appId, () => connect() as Promise<pg.PoolClient>);
    };
    pool.connect = ((callback?: ConnectCallback) => {
      if (this.#migrator.version(appId) !== undefined && pool.options.connectionString !== undefined) return connect(callback);
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

  /** The region of an app from its row, remembered (a region never changes); an app without a row cannot be opened. */
  async #regionOfApp(appId: string): Promise<string> {
    const known = this.#regions.get(appId);
    if (known !== undefined) return known;
    const recorded = await this.#opts.regionOf(appId);
    if (recorded === undefined) throw new Error(`app ${appId} has no row: its database cannot be opened`);
    const region = recorded ?? this.#opts.defaultRegion;
    if (!this.#opts.clusters.has(region)) throw new Error(`app ${appId} is in region '${region}', which SVC_REGIONS no longer names`);
    this.#regions.set(appId, region);
    return region;
  }

  #urlFor(database: string, region: string): string {
    const cluster = this.#opts.clusters.get(region);
    if (cluster === undefined) throw new Error(`unknown region '${region}'`);
    const url = new URL(cluster);
    url.pathname = '/' + encodeURIComponent(database);
    return url.toString();
  }

  #maintenanceOf(region: string): pg.Pool {
    let pool = this.#maintenance.get(region);
    if (!pool) {
      pool = createPool({ connectionString: this.#urlFor('postgres', region), max: 2 });
      this.#maintenance.set(region, pool);
    }
    return pool;
  }

  #acrossRegions<T>(read: (region: string, maintenance: pg.Pool) => Promise<T>): Promise<T[]> {
    return Promise.all(this.regions.map((region) => read(region, this.#maintenanceOf(region))));
  }

  /** The three data roles are cluster-wide: create them once per process and cluster, tolerating a concurrent creator. */
  #ensureRoles(region: string): Promise<void> {
    let ready = this.#rolesReady.get(region);
    if (!ready) {
      ready = this.#createRoles(region).catch((err: unknown) => {
        this.#rolesReady.delete(region);
        throw err;
      });
      this.#rolesReady.set(region, ready);
    }
    return ready;
  }

  async #createRoles(region: string): Promise<void> {
    const statements = APP_ROLES.map(
      (role) => `do $$ begin create role ${role} nologin noinherit;
        exception when duplicate_object or unique_violation then null; end $$;`,
    );
    // The platform login switches into these roles with SET LOCAL ROLE, so it must be a member of each.
    statements.push(`do $$ begin
      if not (select rolsuper from pg_roles where rolname = current_user) then
        execute format('grant svc_anon, svc_user, svc_service to %I', current_user);
      end if; end $$;`);
    await this.#maintenanceOf(region).query(statements.join('\n'));
  }
}
