import type pg from 'pg';
import type { PolicyView } from './describe.ts';

type Queryable = { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> };

// Through to_json: roles is name[], which the driver would otherwise hand back as Postgres's array literal.
const POLICIES_SQL = `
select tablename as table, policyname as name, cmd as command, permissive = 'PERMISSIVE' as permissive,
       to_json(roles) as roles, qual as using, with_check
  from pg_policies
 where schemaname = 'public'
 order by tablename, policyname`;

/**
 * The row-level-security policies in force on the app's public tables, per table, by name: what schema_get shows
 * beside each table's declarative access (the policies follow from access and plans; a hand-made one shows too).
 */
export async function readPolicies(db: Queryable): Promise<Map<string, PolicyView[]>> {
  const { rows } = await db.query<PolicyView & { table: string }>(POLICIES_SQL);
  const out = new Map<string, PolicyView[]>();
  for (const { table, ...policy } of rows) out.set(table, [...(out.get(table) ?? []), policy]);
  return out;
}
