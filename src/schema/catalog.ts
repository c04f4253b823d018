import type pg from 'pg';
import type { TableConditions } from './conditions.ts';

/**
 * Group access: end users reach the rows whose `column` holds the `key` of a row of the `members` table that carries
 * their user_id (a workspace's rows for its members); `write: 'service'` leaves them reading only.
 */
export interface GroupAccess {
  members: string;
  column: string;
  key: string;
  write: 'members' | 'service';
}

/** Who reads a table's rows, and who writes them (`service`: nobody but keys, written as an empty list). */
export const READERS = ['public', 'authenticated', 'owner', 'group'] as const;
export const WRITERS = ['authenticated', 'owner', 'group'] as const;
export type Reader = (typeof READERS)[number];
export type Writer = (typeof WRITERS)[number];

/**
 * Access by rules, combining what the single modes say one at a time: readers and writers (each a list, any of them
 * admits), the owner columns (any of them holding the end user's id makes the row theirs), and the group they share.
 * Lists are sorted and distinct; `owners` is non-empty exactly when `owner` is among readers or writers.
 */
export interface RulesAccess {
  read: Reader[];
  write: Writer[];
  owners: string[];
  group?: { members: string; column: string; key: string };
}

export type TableAccess = 'user' | 'public' | 'authenticated' | 'service' | GroupAccess | RulesAccess;

export const isGroupAccess = (access: TableAccess | null | undefined): access is GroupAccess => typeof access === 'object' && access !== null && !('read' in access);
export const isRulesAccess = (access: TableAccess | null | undefined): access is RulesAccess => typeof access === 'object' && access !== null && 'read' in access;

/** Access stored by objects compares by content; JSON of the normalized form is canonical (lists sorted, keys in order). */
export function sameAccess(a: TableAccess | null, b: TableAccess | null): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  return JSON.stringify(canonicalAccess(a)) === JSON.stringify(canonicalAccess(b));
}

function canonicalAccess(a: GroupAccess | RulesAccess): unknown {
  if (!isRulesAccess(a)) return [a.members, a.column, a.key, a.write];
  return [a.read, a.write, a.owners, a.group ? [a.group.members, a.group.column, a.group.key] : null];
}

export interface ColumnInfo {
  name: string;
  /** format_type() spelling, e.g. `character varying(20)`, `vector(3)`, `text[]`. */
  type: string;
  /** Base type name of the element, e.g. `int4`, `vector`, `text` (for `text[]` too). */
  udt: string;
  isArray: boolean;
  nullable: boolean;
  /** Default expression as Postgres prints it, or null. */
  default: string | null;
  /** An identity column: it has a default (the sequence) that `default` does not show. */
  identity?: boolean;
}

export interface ForeignKeyInfo {
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  /** ON DELETE action; 'set default' only on keys made outside schema_apply. */
  onDelete: ForeignKeyAction;
  /** ON UPDATE action; readCatalog always sets it, absent (hand-built catalogs) means 'no action'. */
  onUpdate?: ForeignKeyAction;
}

export type ForeignKeyAction = 'no action' | 'restrict' | 'cascade' | 'set null' | 'set default';

export interface CheckInfo {
  name: string;
  columns: string[];
  /** The listed values when the check has the form of a definition's enum (`col = ANY ('{...}'::text[])`), else null. */
  values: string[] | null;
}

export interface IndexInfo {
  name: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
  /** Backs a constraint (primary key or unique) rather than standing alone. */
  constraint: boolean;
  /** Its comment: a partial or expression index made by a definition keeps that definition there (indexes.ts). */
  comment?: string | null;
}

export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  primaryKey: string[];
  foreignKeys: ForeignKeyInfo[];
  /** CHECK constraints; readCatalog always sets it (a definition's enums are among them). */
  checks?: CheckInfo[];
  indexes: IndexInfo[];
  rls: boolean;
  access: TableAccess | null;
  /** Billing plans gating end users (the schema definition's `plans`), or null/absent for none. */
  plans?: string[] | null;
  /** Whether its changes are captured for realtime subscribers (the capture triggers exist); readCatalog sets it. */
  realtime?: boolean;
  /** Declared conditions as written, or null/absent for none. */
  conditions?: TableConditions | null;
}

export type Catalog = Map<string, TableInfo>;

/** A pool, a connection or an app database's AppSql: readCatalog only sends queries. */
type Queryable = { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> };

/** Every user table of the app's public schema, read in one round trip. */
const CATALOG_SQL = `
select c.relname as name, c.relrowsecurity as rls,
  -- through jsonb: group settings live in group_access (app migration 5), rules in rules (app migration 10)
  case ta.access when 'group' then to_jsonb(ta) -> 'group_access' when 'rules' then to_jsonb(ta) -> 'rules' else to_jsonb(ta.access) end as access,
  -- through jsonb: apps that never gated a table by plan have no plans column (src/monetization/entitlement.sql.ts)
  to_jsonb(ta) -> 'plans' as plans,
  -- declared conditions as written (app migration 11)
  to_jsonb(ta) -> 'conditions' as conditions,
  exists (select 1 from pg_trigger tg where tg.tgrelid = c.oid and tg.tgname = 'svc_realtime_insert') as realtime,
  coalesce((select json_agg(json_build_object(
      'name', a.attname,
      'type', format_type(a.atttypid, a.atttypmod),
      'udt', coalesce(et.typname, t.typname),
      'isArray', t.typcategory = 'A',
      'nullable', not a.attnotnull,
      'default', pg_get_expr(d.adbin, d.adrelid),
      'identity', a.attidentity <> '') order by a.attnum)
    from pg_attribute a
    join pg_type t on t.oid = a.atttypid
    left join pg_type et on et.oid = t.typelem and t.typcategory = 'A'
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '[]') as columns,
  coalesce((select json_agg(a.attname order by k.ord)
    from pg_constraint pk, unnest(pk.conkey) with ordinality k(attnum, ord)
    join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
    where pk.conrelid = c.oid and pk.contype = 'p'), '[]') as "primaryKey",
  coalesce((select json_agg(json_build_object(
      'name', fk.conname,
      'columns', (select json_agg(a.attname order by k.ord) from unnest(fk.conkey) with ordinality k(attnum, ord)
                  join pg_attribute a on a.attrelid = fk.conrelid and a.attnum = k.attnum),
      'refTable', rc.relname,
      'refColumns', (select json_agg(a.attname order by k.ord) from unnest(fk.confkey) with ordinality k(attnum, ord)
                     join pg_attribute a on a.attrelid = fk.confrelid and a.attnum = k.attnum),
      'onDelete', case fk.confdeltype when 'r' then 'restrict' when 'c' then 'cascade' when 'n' then 'set null' when 'd' then 'set default' else 'no action' end,
      'onUpdate', case fk.confupdtype when 'r' then 'restrict' when 'c' then 'cascade' when 'n' then 'set null' when 'd' then 'set default' else 'no action' end
      ) order by fk.conname)
    from pg_constraint fk join pg_class rc on rc.oid = fk.confrelid
    where fk.conrelid = c.oid and fk.contype = 'f'), '[]') as "foreignKeys",
  -- An enum's values come back through Postgres's own array parser from the literal it prints: the check is written
  -- as col = ANY ('{...}'::text[]) (src/schema/render.ts), which pg_get_constraintdef prints as one quoted literal.
  coalesce((select json_agg(json_build_object(
      'name', ck.conname,
      'columns', (select json_agg(a.attname order by k.ord) from unnest(ck.conkey) with ordinality k(attnum, ord)
                  join pg_attribute a on a.attrelid = ck.conrelid and a.attnum = k.attnum),
      'values', (select to_json(replace(m[1], '''''', '''')::text[])
                 from regexp_match(pg_get_constraintdef(ck.oid), $re$^CHECK \\(\\(+[^']* = ANY \\('((?:[^']|'')*)'::text\\[\\]\\)\\)+$$re$) m)
      ) order by ck.conname)
    from pg_constraint ck
    where ck.conrelid = c.oid and ck.contype = 'c'), '[]') as checks,
  coalesce((select json_agg(json_build_object(
      'name', ic.relname,
      -- an expression index's expressions are no attributes: one of only expressions lists none ([], never null)
      'columns', coalesce((select json_agg(a.attname order by k.ord) from unnest(i.indkey::int2[]) with ordinality k(attnum, ord)
                  join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum), '[]'),
      -- unique over the whole table by plain columns: what a foreign key can point at (partial or expression ones keep
      -- their definition in their comment, see indexes.ts)
      'unique', i.indisunique and i.indpred is null and i.indexprs is null,
      'comment', obj_description(i.indexrelid, 'pg_class'),
      'primary', i.indisprimary,
      -- contype: a foreign key also records the referenced index in conindid; that does not make it a constraint's own index
      'constraint', exists (select 1 from pg_constraint x where x.conindid = i.indexrelid and x.contype in ('p', 'u', 'x'))) order by ic.relname)
    from pg_index i join pg_class ic on ic.oid = i.indexrelid
    where i.indrelid = c.oid), '[]') as indexes
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
left join svc_meta.table_access ta on ta.table_name = c.relname
where n.nspname = 'public' and c.relkind in ('r', 'p')
order by c.relname`;

export async function readCatalog(db: Queryable): Promise<Catalog> {
  const { rows } = await db.query<TableInfo>(CATALOG_SQL);
  return new Map(rows.map((t) => [t.name, t]));
}
