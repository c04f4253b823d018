import { createHash } from 'node:crypto';
import pg from 'pg';
import type { AppSql } from '../apps/app-databases.ts';
import { errors } from '../core/errors.ts';
import { readCatalog } from './catalog.ts';
import { normalizeDefinition, type Definition, type SchemaDefinitionInput } from './definition.ts';
import { planOffThread } from './plan-worker.ts';
import { describeCatalog, type SchemaView } from './describe.ts';
import { readPolicies } from './policies.ts';
import { readChannelRules } from './channels.ts';
import { describeFunctions, readFunctions } from './functions.ts';

/** Any fixed key: advisory locks are per database, and every app has its own database. */
const APPLY_LOCK_KEY = 7_310_432_001;
/** Columns per probe table: far below the 1600-column limit, and a row of 100 (toasted) values always fits a page. */
const PROBE_CHUNK = 100;

export interface ApplyRequest {
  schema: SchemaDefinitionInput;
  dry_run: boolean;
  name: string;
  /**
   * Runs under the apply's lock before anything is planned (no other apply of the app can commit meanwhile); its
   * refusal refuses the apply. A branch merge checks there that production is what its plan was made against.
   */
  before?: () => Promise<void>;
}

export interface MigrationSummary {
  id: number;
  name: string;
  checksum: string;
  applied_at: string;
}

export interface ApplyResult {
  dry_run: boolean;
  applied: boolean;
  statements: string[];
  migration: MigrationSummary | null;
}

export interface MigrationRecord extends MigrationSummary {
  statements: string[];
  /** Set on a migration a clone copied from its template. */
  source: MigrationSource | null;
}

/** Where a copied migration came from: the template app, its version when cloned, the migration's id there. */
export interface MigrationSource {
  template_app_id: string;
  template_version: string;
  migration_id: number;
}

/**
 * Plans and (unless dry) applies a definition in one transaction: concurrent applies of one app serialize on
 * an advisory lock, the plan is made from the catalog read under that lock, and any failure rolls back
 * every statement and the migration row together.
 */
export async function applySchema(appId: string, db: AppSql, request: ApplyRequest): Promise<ApplyResult> {
  const def = normalizeDefinition(request.schema);
  // Literals in defaults are only safe with standard strings (a backslash is then just a character).
  // The advisory lock waits up to 30 s for another apply; DDL then waits at most 5 s for table locks.
  const setup =
    `set local standard_conforming_strings = on; set local lock_timeout = '30s'; ` +
    (request.dry_run ? '' : `select pg_advisory_xact_lock(${APPLY_LOCK_KEY}); `) +
    `set local lock_timeout = '5s'`;
  try {
    return await db.transaction(
      async (client): Promise<ApplyResult> => {
        await request.before?.();
        const catalog = await readCatalog(client);
        // Planned on the plan thread: declared SQL is parsed there, off the event loop.
        const statements = await planOffThread(appId, request.schema, catalog, await canonicalDefaults(client, def), await readChannelRules(client), await readFunctions(client));
        if (request.dry_run || statements.length === 0) return { dry_run: request.dry_run, applied: false, statements, migration: null };
        for (const statement of statements) await runStatement(client, statement);
        const migration = await recordMigration(client, request.name, statements);
        return { dry_run: false, applied: true, statements, migration };
      },
      { setup, commit: (result) => result.applied },
    );
  } catch (err) {
    throw lockError(err);
  }
}

export async function getSchema(db: AppSql): Promise<SchemaView> {
  const [catalog, policies, channels, functions] = await Promise.all([readCatalog(db), readPolicies(db), readChannelRules(db), readFunctions(db)]);
  return describeCatalog(catalog, policies, channels, describeFunctions(functions));
}

export async function listMigrations(db: AppSql, throughId?: number): Promise<MigrationRecord[]> {
  const { rows } = await db.query<{ id: string; name: string; checksum: string; statements: string[]; applied_at: Date; source: MigrationSource | null }>(
    'select id, name, checksum, statements, applied_at, source from svc_meta.migrations where id <= $1 order by id',
    [throughId ?? Number.MAX_SAFE_INTEGER],
  );
  return rows.map((r) => ({ id: Number(r.id), name: r.name, checksum: r.checksum, statements: r.statements, applied_at: r.applied_at.toISOString(), source: r.source }));
}

/**
 * Runs a template's migration on a clone's database as it ran there (the same statements, name and checksum), recorded
 * with its source, in one transaction; a migration already copied (its source's id recorded) is skipped, so a replay
 * resumed after a crash goes on where it stopped. Returns whether it ran.
 */
export async function replayMigration(db: AppSql, migration: MigrationRecord, source: MigrationSource): Promise<boolean> {
  const setup = `set local standard_conforming_strings = on; select pg_advisory_xact_lock(${APPLY_LOCK_KEY})`;
  return db.transaction(
    async (client) => {
      const done = await client.query(`select 1 from svc_meta.migrations where source ->> 'migration_id' = $1`, [String(source.migration_id)]);
      if (done.rowCount) return false;
      for (const statement of migration.statements) await runStatement(client, statement);
      await client.query('insert into svc_meta.migrations (name, statements, checksum, source) values ($1, $2, $3, $4)', [
        migration.name,
        JSON.stringify(migration.statements),
        migration.checksum,
        JSON.stringify(source),
      ]);
      return true;
    },
    { setup },
  );
}

export function checksum(statements: readonly string[]): string {
  return createHash('sha256').update(statements.join('\n')).digest('hex');
}

async function recordMigration(client: pg.PoolClient, name: string, statements: string[]): Promise<MigrationSummary> {
  const sum = checksum(statements);
  const { rows } = await client.query<{ id: string; applied_at: Date }>(
    'insert into svc_meta.migrations (name, statements, checksum) values ($1, $2, $3) returning id, applied_at',
    [name, JSON.stringify(statements), sum],
  );
  const row = rows[0]!;
  return { id: Number(row.id), name, checksum: sum, applied_at: row.applied_at.toISOString() };
}

// ---------------------------------------------------------------- defaults through Postgres

interface DefaultItem {
  key: string;
  label: string;
  type: string;
  expr: string;
}

/**
 * Postgres prints a stored default its own way ('x' on a text column comes back as 'x'::text, -1 as
 * '-1'::integer), so comparing the definition's text with the catalog's would re-plan defaults forever.
 * Instead every defined default is stored once in a throw-away temp table of the same type and read back
 * with pg_get_expr: the same spelling the catalog uses. It also proves each default fits its column type,
 * including length and dimension limits, by inserting one row of defaults,
 * naming the column when one does not, before any real statement runs (dry runs included).
 */
async function canonicalDefaults(client: pg.PoolClient, def: Definition): Promise<Map<string, string | null>> {
  const items: DefaultItem[] = def.tables
    .filter((t) => !t.drop)
    .flatMap((t) =>
      t.columns
        .filter((c) => c.default !== null)
        .map((c) => ({ key: `${t.name}.${c.name}`, label: `Column '${t.name}.${c.name}'`, type: c.type, expr: c.default! })),
    );
  const out = new Map<string, string | null>();
  for (let i = 0; i < items.length; i += PROBE_CHUNK) {
    const chunk = items.slice(i, i + PROBE_CHUNK);
    const printed = await probe(client, chunk).catch((err: unknown) => probeOneByOne(client, chunk, err));
    chunk.forEach((item, j) => out.set(item.key, printed[j] ?? null));
  }
  return out;
}

async function probe(client: pg.PoolClient, items: DefaultItem[]): Promise<(string | null)[]> {
  const columns = items.map((item, i) => `c${i} ${item.type} DEFAULT ${item.expr}`).join(', ');
  await client.query('savepoint svc_probe');
  try {
    // The insert evaluates every default once: length and dimension limits (varchar(2), vector(3)) only bite then.
    await client.query(`create temp table svc_default_probe (${columns}); insert into svc_default_probe default values`);
    const { rows } = await client.query<{ expr: string | null }>(
      `select pg_get_expr(d.adbin, d.adrelid) as expr
         from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attrelid = 'pg_temp.svc_default_probe'::regclass and a.attnum > 0 order by a.attnum`,
    );
    return rows.map((r) => r.expr);
  } finally {
    // Rolling back to the savepoint also removes the temp table.
    await client.query('rollback to savepoint svc_probe; release savepoint svc_probe');
  }
}

/**
 * The chunk failed as a whole: probe its defaults one by one, so that the 400 names the column whose default
 * does not fit (or, if none fails alone, so that the chunk's answer is still complete).
 */
async function probeOneByOne(client: pg.PoolClient, items: DefaultItem[], err: unknown): Promise<(string | null)[]> {
  if (!isPgError(err)) throw err;
  const out: (string | null)[] = [];
  for (const item of items) {
    try {
      out.push((await probe(client, [item]))[0] ?? null);
    } catch (single) {
      if (!isPgError(single)) throw single;
      throw errors.validation(`${item.label} has default ${item.expr}, which does not fit its type ${item.type}: ${single.message}.`);
    }
  }
  return out;
}

// ---------------------------------------------------------------- errors of real statements

interface PgError {
  code: string;
  message: string;
  detail?: string;
}

function isPgError(err: unknown): err is PgError {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.length === 5;
}

async function runStatement(client: pg.PoolClient, statement: string): Promise<void> {
  try {
    await client.query(statement);
  } catch (err) {
    throw statementError(err, statement);
  }
}

/**
 * What the live data refuses (NOT NULL over existing nulls, UNIQUE over duplicates, a dependent object)
 * is the caller's to fix, never a 500: each becomes a 400 or 409 naming the statement and Postgres's reason.
 */
export function statementError(err: unknown, statement: string): unknown {
  if (!isPgError(err)) return err;
  const reason = `Applying the schema failed at: ${statement} -- ${err.message}${err.detail ? ` (${err.detail})` : ''}.`;
  const code = err.code;
  if (code === '23502') {
    return errors.validation(
      `${reason} The table has rows where this column is null: give the column a default, or add it as nullable, fill it in, then set nullable: false.`,
    );
  }
  if (code === '23514') {
    return errors.validation(`${reason} Existing rows hold values outside the enum: update or delete those rows, or widen the enum, then apply again.`);
  }
  if (code === '23505') return errors.conflict(reason, 'Existing rows hold duplicate values: remove or change the duplicates, then apply again. Nothing was changed.');
  if (code === '23503') return errors.conflict(reason, 'Existing rows point at rows that do not exist: fix or delete them, then apply again. Nothing was changed.');
  if (code === '2BP01') return errors.conflict(reason, 'Something else depends on this object: remove the dependent column, reference or table first (or in the same definition). Nothing was changed.');
  if (code === '42P07' || code === '42710' || code === '42701') return errors.conflict(reason, 'That name is already taken in this app database: choose another name. Nothing was changed.');
  if (code === '55P03' || code === '40P01') return lockError(err);
  if (code.startsWith('22') || code.startsWith('42') || code.startsWith('23') || code.startsWith('54')) return errors.validation(reason);
  return err;
}

function lockError(err: unknown): unknown {
  if (!isPgError(err) || (err.code !== '55P03' && err.code !== '40P01')) return err;
  return errors.conflict(
    'The schema change could not get its locks in time: another schema apply or a long-running query is using these tables. Nothing was changed.',
    'Retry in a few seconds.',
  );
}
