import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Logger } from 'pino';
import { createClient, createPool } from '../db/pg.ts';

const BOOTSTRAP_SQL = readFileSync(new URL('../../db/app-bootstrap.sql', import.meta.url), 'utf8');
export const APP_ROLES = ['svc_anon', 'svc_user', 'svc_service'] as const;

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
 * Owns every per-app database: creation with its bootstrap, dropping, and a bounded LRU of pools so that
 * a thousand apps never hold a thousand pools (at most budget / poolSize pools live at once).
 */
export class AppDatabases {
  readonly #opts: AppDatabasesOptions;
  readonly #maintenance: pg.Pool;
  readonly #pools = new Map<string, pg.Pool>();
  readonly #maxPools: number;
  #rolesReady: Promise<void> | undefined;

  constructor(opts: AppDatabasesOptions) {
    this.#opts = opts;
    this.#maintenance = createPool({ connectionString: this.#urlFor('postgres'), max: 2 });
    this.#maxPools = Math.max(1, Math.floor(opts.budget / opts.poolSize));
  }

  dbName(appId: string): string {
    return this.#opts.prefix + appId;
  }

  get prefix(): string {
    return this.#opts.prefix;
  }

  /** Creates and bootstraps the app's database; on any failure nothing of it remains. */
  async create(appId: string): Promise<string> {
    await this.#ensureRoles();
    const name = this.dbName(appId);
    // template0: never inherit whatever an operator installed into template1.
    await this.#maintenance.query(`create database ${pg.escapeIdentifier(name)} template template0`);
    try {
      const client = createClient(this.#urlFor(name));
      await client.connect();
      try {
        await client.query(BOOTSTRAP_SQL);
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
    await this.#evict(name.slice(this.#opts.prefix.length));
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
    this.#pools.set(appId, pool);
    while (this.#pools.size > this.#maxPools) {
      const oldest = this.#pools.keys().next().value as string;
      void this.#evict(oldest);
    }
    return pool;
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
