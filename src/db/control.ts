import pg from 'pg';
import { Kysely } from 'kysely';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { migrations } from '../../db/migrations/index.ts';
import type { ControlDatabase } from './types.ts';
import { createClient, createPool } from './pg.ts';
import { DeferredBeginDialect } from './deferred-begin.ts';

export interface ControlDb {
  pool: pg.Pool;
  db: Kysely<ControlDatabase>;
  close(): Promise<void>;
}

export function openControlDb(databaseUrl: string, max: number, acquireTimeoutMs?: number): ControlDb {
  const pool = createPool({ connectionString: databaseUrl, max, pipeline: true, ...(acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs }) });
  const db = new Kysely<ControlDatabase>({ dialect: new DeferredBeginDialect({ pool }) });
  return { pool, db, close: () => db.destroy() };
}

/** Creates the database named in the URL when missing; safe when several processes race to do it. */
export async function ensureDatabase(databaseUrl: string, log: Logger): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = createClient(url.toString());
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return;
    await client.query(`create database ${pg.escapeIdentifier(name)}`);
    log.info({ database: name }, 'created control database');
  } catch (err) {
    // 42P04 duplicate_database, 23505: two creators raced on pg_database's unique index.
    const code = (err as { code?: string }).code;
    if (code !== '42P04' && code !== '23505') throw err;
  } finally {
    await client.end();
  }
}

const MIGRATION_LOCK = 0x5c0_0001;

/**
 * Applies control migrations and graphile-worker's schema, then runs the start-up seeding, all under one
 * advisory lock, so instances starting at once serialize instead of racing.
 */
export async function migrateControl(control: ControlDb, log: Logger, seed: () => Promise<void>): Promise<void> {
  const client = await control.pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const provider: MigrationProvider = { getMigrations: async () => migrations };
    const { error, results } = await new Migrator({ db: control.db, provider }).migrateToLatest();
    for (const r of results ?? []) log.info({ migration: r.migrationName, status: r.status }, 'control migration');
    if (error) throw error;
    await runWorkerMigrations({ pgPool: control.pool });
    await seed();
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
