// Generates src/db/schema.ts, the control database's Kysely types, from db/migrations: it migrates a scratch database
// exactly as start-up does, reads every `CHECK (column = ANY (ARRAY[...]))` as a union of those literals, and runs
// kysely-codegen over the result. `npm run db:types` writes the file after a migration changes the control database;
// `--verify` exits non-zero when the committed file no longer matches the migrations (test/integration/db-types.test.ts).
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, PostgresDialect, RawExpressionNode } from 'kysely-codegen';
import pg from 'pg';
import { pino } from 'pino';
import { migrateControl, openControlDb } from '../src/db/control.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SCHEMA_FILE = path.join(ROOT, 'src/db/schema.ts');

/** `(status = ANY (ARRAY['a'::text, 'b'::text]))` as pg_get_constraintdef prints a CHECK of `status in ('a', 'b')`. */
const ANY_OF = /^CHECK \(\("?(\w+)"? = ANY \(ARRAY\[([^\]]*)\]\)\)\)$/;
const LITERAL = /^'([^']*)'::text$/;
const KYSELY_IMPORT = 'import type { ColumnType } from "kysely";';

/** A column whose type the generator cannot know from its SQL type alone. */
interface ColumnFacts {
  table: string;
  column: string;
  type: string;
  notnull: boolean;
  hasdef: boolean;
  /** The column's single-column CHECK constraints, as pg_get_constraintdef prints them. */
  checks: string[];
}

/** The read type of a column, or undefined to keep kysely-codegen's. */
function readType(facts: ColumnFacts): string | undefined {
  // jsonb is read parsed and written as JSON text: pg would send a JS array as a Postgres array.
  if (facts.type === 'jsonb') return 'JsonValue';
  for (const def of facts.checks) {
    const match = ANY_OF.exec(def);
    if (!match || match[1] !== facts.column) continue;
    const literals = match[2]!.split(', ').map((item) => LITERAL.exec(item)?.[1]);
    if (!literals.some((l) => l === undefined)) return literals.map((l) => `'${l}'`).join(' | ');
  }
  return undefined;
}

/**
 * Column type overrides: a text column whose CHECK allows a list of literals is their union; jsonb is written as text.
 * An override replaces the column's whole type, so nullability and the default are kept here (not as Generated<T>,
 * which would distribute over a union's members).
 */
async function columnOverrides(client: pg.ClientBase): Promise<Record<string, RawExpressionNode>> {
  const { rows } = await client.query<ColumnFacts>(
    `select c.relname as table, a.attname as column, format_type(a.atttypid, null) as type, a.attnotnull as notnull,
            a.atthasdef as hasdef,
            array(select pg_get_constraintdef(k.oid) from pg_constraint k
                   where k.conrelid = c.oid and k.contype = 'c' and k.conkey = array[a.attnum] order by 1) as checks
       from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
      order by 1, 2`,
  );
  const columns: Record<string, RawExpressionNode> = {};
  for (const facts of rows) {
    const read = readType(facts);
    if (!read) continue;
    const nullable = facts.notnull ? '' : ' | null';
    const write = (facts.type === 'jsonb' ? 'string' : read) + nullable;
    columns[`${facts.table}.${facts.column}`] = new RawExpressionNode(
      `ColumnType<${read}${nullable}, ${write}${facts.hasdef || !facts.notnull ? ' | undefined' : ''}, ${write}>`,
    );
  }
  return columns;
}

async function withScratchControlDatabase<T>(cluster: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `svc_dbtypes_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${cluster}/postgres` });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    try {
      return await fn(`${cluster}/${name}`);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

/** The text src/db/schema.ts must hold for the migrations in db/migrations. */
export async function controlTypes(cluster: string): Promise<string> {
  return withScratchControlDatabase(cluster, async (url) => {
    const control = openControlDb(url, 2);
    try {
      await migrateControl(control, pino({ level: 'silent' }), async () => {});
      const client = await control.pool.connect();
      const columns = await columnOverrides(client).finally(() => client.release());
      const generated = await generate({
        db: control.db,
        dialect: new PostgresDialect({ defaultSchemas: ['public'] }),
        defaultSchemas: ['public'],
        // graphile-worker's tables are its own; the platform reaches them only through its SQL functions.
        excludePattern: '{kysely_migration*,graphile_worker.*}',
        overrides: { columns },
        outFile: null,
      });
      // The overrides are raw text, which kysely-codegen does not scan for the names it must import.
      const withJson = generated.replace(KYSELY_IMPORT, `${KYSELY_IMPORT}\nimport type { JsonValue } from "./json.ts";`);
      return `// Generated by scripts/db-types.ts from db/migrations: run \`npm run db:types\` after changing a migration.\n${withJson}`;
    } finally {
      await control.close();
    }
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const cluster = process.env.DATABASE_CLUSTER_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const text = await controlTypes(cluster);
  if (!process.argv.includes('--verify')) writeFileSync(SCHEMA_FILE, text);
  else if (readFileSync(SCHEMA_FILE, 'utf8') !== text) {
    process.stderr.write(`${SCHEMA_FILE} does not match db/migrations: run npm run db:types\n`);
    process.exitCode = 1;
  }
}
