// Versioned migrations of the platform's own objects in every app database (db/app-migrations/NNNN_name.sql, or
// .ts exporting up(client) when one needs code). They run when an app database is created and when a process first
// opens one after an upgrade, so every app database reaches the release's version and a clone or an upgrade can
// know what it holds. The user's own schema changes are another history (svc_meta.migrations, GET .../migrations).
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import type { Logger } from 'pino';
import { withinTransaction } from '../db/pg.ts';

export interface AppMigration {
  version: number;
  /** The file name without its extension, e.g. `0002_rag`. */
  name: string;
  up(client: pg.ClientBase): Promise<void>;
}

const MIGRATIONS_DIR = new URL('../../db/app-migrations/', import.meta.url);
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.(sql|ts)$/;

/**
 * Serializes migrating processes (api and worker instances opening the same app at once). Advisory locks are per
 * database, so one fixed key serves every app; it differs from the schema apply's key (src/schema/service.ts).
 */
export const APP_MIGRATION_LOCK = 7_310_432_002;

/**
 * Where the applied versions are recorded: beside the user's migration history (svc_meta.migrations) in the private
 * schema, under a name of its own. Made by the runner, not by a migration, because databases bootstrapped before
 * versioned migrations have svc_meta but no such table, and 0001 makes svc_meta itself.
 */
const TRACKING_TABLE_SQL = `create table if not exists svc_meta.platform_migrations (
  version integer primary key,
  name text not null,
  applied_at timestamptz not null default now()
)`;

/** Reads the migration files of `dir`, numbered 1, 2, 3... without gaps (a gap or a duplicate is a packaging bug). */
export async function loadAppMigrations(dir: URL = MIGRATIONS_DIR): Promise<AppMigration[]> {
  const files = readdirSync(dir).filter((f) => !f.startsWith('.')).sort();
  const migrations: AppMigration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`app migration ${file}: name it NNNN_name.sql or NNNN_name.ts`);
    const version = Number(match[1]);
    if (version !== migrations.length + 1) throw new Error(`app migration ${file}: expected version ${migrations.length + 1}`);
    const name = file.replace(/\.(sql|ts)$/, '');
    migrations.push({ version, name, up: await loadUp(new URL(file, dir), match[3] as 'sql' | 'ts') });
  }
  return migrations;
}

async function loadUp(file: URL, kind: 'sql' | 'ts'): Promise<AppMigration['up']> {
  if (kind === 'sql') {
    const text = readFileSync(file, 'utf8');
    return async (client) => {
      await client.query(text);
    };
  }
  const mod = (await import(file.href)) as { up?: AppMigration['up'] };
  if (typeof mod.up !== 'function') throw new Error(`app migration ${file.pathname}: export async function up(client)`);
  return mod.up;
}

let shipped: Promise<AppMigration[]> | undefined;

/** This release's migrations, read once per process. */
export function appMigrations(): Promise<AppMigration[]> {
  shipped ??= loadAppMigrations();
  return shipped;
}

/**
 * Brings one app database to the latest version and answers its version: the highest applied (above this release's
 * latest when a newer release migrated it; nothing is undone then). Up to date, it costs one query and no lock.
 * Otherwise, under the advisory lock, it re-reads what is applied (another process may just have done it) and runs
 * each pending migration in its own transaction together with its record, so a failure leaves the earlier ones
 * applied and the failed one not at all. On failure the caller must discard the connection: the session lock may
 * still be held on it.
 */
export async function migrateAppDatabase(client: pg.ClientBase, migrations: readonly AppMigration[], log: Logger): Promise<number> {
  const seen = await appliedVersions(client);
  if (pendingOf(migrations, seen.versions).length === 0) return highest(seen.versions);
  await client.query('select pg_advisory_lock($1)', [APP_MIGRATION_LOCK]);
  let version: number;
  try {
    version = await applyPending(client, migrations, log);
  } catch (err) {
    await client.query('select pg_advisory_unlock($1)', [APP_MIGRATION_LOCK]).catch(() => undefined);
    throw err;
  }
  await client.query('select pg_advisory_unlock($1)', [APP_MIGRATION_LOCK]);
  return version;
}

async function applyPending(client: pg.ClientBase, migrations: readonly AppMigration[], log: Logger): Promise<number> {
  const state = await appliedVersions(client);
  const database = (client as { database?: string }).database;
  if (state.baseline && migrations[0]) {
    // Bootstrapped by the release before versioned migrations: its objects are exactly 0001's, so it is recorded, not run.
    await withinTransaction(client, () => record(client, migrations[0]!));
    log.info({ database, version: 1 }, 'app database: bootstrap of the previous release recorded as version 1');
  }
  for (const migration of pendingOf(migrations, state.versions)) {
    await withinTransaction(client, async () => {
      await migration.up(client);
      await record(client, migration);
    });
    state.versions.add(migration.version);
    log.info({ database, version: migration.version, name: migration.name }, 'app database migrated');
  }
  const version = highest(state.versions);
  const latest = migrations.at(-1)?.version ?? 0;
  if (version > latest) log.warn({ database, version, latest }, 'app database is at a newer version than this release knows');
  return version;
}

interface AppliedVersions {
  versions: Set<number>;
  /** No tracking table yet, but the bootstrap's objects are there: version 1 applied by the previous release. */
  baseline: boolean;
}

/**
 * The versions recorded in the database. Before versioned migrations there was no record: the bootstrap (one statement
 * batch, so all of it or nothing) made svc_meta.migrations, so that table without the tracking table means version 1.
 * Neither means a fresh database.
 */
async function appliedVersions(client: pg.ClientBase): Promise<AppliedVersions> {
  try {
    const { rows } = await client.query<{ version: number }>('select version from svc_meta.platform_migrations');
    return { versions: new Set(rows.map((r) => r.version)), baseline: false };
  } catch (err) {
    if ((err as { code?: string }).code !== '42P01') throw err; // undefined_table: not tracked yet
  }
  const { rows } = await client.query<{ bootstrapped: boolean }>(
    `select to_regclass('svc_meta.migrations') is not null as bootstrapped`,
  );
  const bootstrapped = rows[0]?.bootstrapped === true;
  return { versions: new Set(bootstrapped ? [1] : []), baseline: bootstrapped };
}

async function record(client: pg.ClientBase, migration: AppMigration): Promise<void> {
  await client.query(TRACKING_TABLE_SQL);
  await client.query('insert into svc_meta.platform_migrations (version, name) values ($1, $2)', [migration.version, migration.name]);
}

function pendingOf(migrations: readonly AppMigration[], applied: ReadonlySet<number>): AppMigration[] {
  return migrations.filter((m) => !applied.has(m.version));
}

function highest(versions: ReadonlySet<number>): number {
  return Math.max(0, ...versions);
}

/**
 * What this process knows of app databases' versions: the one place that remembers. An app is checked (and migrated)
 * once per process, on its first use; afterwards opening its pool asks nothing. A failed check is forgotten, so the
 * next use tries again.
 */
export class AppMigrator {
  readonly #log: Logger;
  readonly #versions = new Map<string, number>();
  readonly #running = new Map<string, Promise<number>>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** The app database's version once this process has brought it up to date, else undefined. */
  version(appId: string): number | undefined {
    return this.#versions.get(appId);
  }

  /** Brings the app database up to date on a connection of `connect`; concurrent callers share one run. */
  ensure(appId: string, connect: () => Promise<pg.PoolClient>): Promise<number> {
    const known = this.#versions.get(appId);
    if (known !== undefined) return Promise.resolve(known);
    let running = this.#running.get(appId);
    if (!running) {
      running = this.#checkOut(appId, connect).finally(() => this.#running.delete(appId));
      this.#running.set(appId, running);
    }
    return running;
  }

  /** Migrates on a connection the caller owns (a database being created). */
  async migrate(appId: string, client: pg.ClientBase): Promise<number> {
    const version = await migrateAppDatabase(client, await appMigrations(), this.#log);
    this.#versions.set(appId, version);
    return version;
  }

  /** The app's database was dropped: a database made again under its id is checked again. */
  forget(appId: string): void {
    this.#versions.delete(appId);
  }

  async #checkOut(appId: string, connect: () => Promise<pg.PoolClient>): Promise<number> {
    const client = await connect();
    try {
      const version = await this.migrate(appId, client);
      client.release();
      return version;
    } catch (err) {
      // Destroyed rather than returned to the pool: it may still hold the session advisory lock or a broken transaction.
      client.release(err instanceof Error ? err : true);
      throw err;
    }
  }
}
