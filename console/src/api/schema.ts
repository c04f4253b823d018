// The schema routes (schema_get, schema_apply, schema_migrations): the live schema in the definition's own format,
// with each table's row-level-security policies in force (display only), and the migrations that made it.
import { call, seg } from '../api.ts';

export interface ColumnView {
  type: string;
  primary: boolean;
  nullable: boolean;
  unique: boolean;
  default?: string;
  identity?: true;
  enum?: string[];
  references?: { table: string; column: string; onDelete?: string; onUpdate?: string };
}
export interface Policy {
  name: string;
  command: string;
  permissive: boolean;
  roles: string[];
  using: string | null;
  with_check: string | null;
}
/** Who reads or writes under access rules: a list, or 'service' (keys only). */
type Who = string[] | 'service';
export type Access =
  | 'user'
  | 'public'
  | 'authenticated'
  | 'service'
  | { members: string; column: string; key: string; write: string }
  | { read: Who; write: Who; owners?: string[]; group?: { members: string; column: string; key: string } };
export interface TableView {
  columns: Record<string, ColumnView>;
  indexes: Record<string, { columns: string[]; unique: boolean }>;
  foreignKeys?: Array<{ columns: string[]; references: { table: string; columns: string[] }; onDelete?: string; onUpdate?: string }>;
  access: Access;
  plans?: string[];
  /** Its changes reach realtime subscribers (postgres_changes). */
  realtime?: true;
  policies: Policy[];
}
export interface SchemaView {
  tables: Record<string, TableView>;
}
export interface ApplyResult {
  dry_run: boolean;
  applied: boolean;
  statements: string[];
  migration: { id: number; name: string; checksum: string; applied_at: string } | null;
}
export interface Migration {
  id: number;
  name: string;
  checksum: string;
  applied_at: string;
  statements: string[];
  source: { template_app_id: string; template_version: string; migration_id: number } | null;
}

export const schema = {
  get: (appId: string) => call<SchemaView>('GET', `/v1/${seg(appId)}/schema`),
  /** `definition` is sent as parsed from the person's text, whatever it holds: the API says what is wrong with it. */
  apply: (appId: string, definition: unknown, dryRun: boolean, name?: string) =>
    call<ApplyResult>('POST', `/v1/${seg(appId)}/schema/apply`, { schema: definition, dry_run: dryRun, ...(name ? { name } : {}) }),
  migrations: async (appId: string) => (await call<{ migrations: Migration[] }>('GET', `/v1/${seg(appId)}/migrations`)).migrations,
};

/** A table's primary-key columns, in column order (a definition lists them so). */
export const primaryKey = (table: TableView): string[] => Object.entries(table.columns).filter(([, c]) => c.primary).map(([name]) => name);

/** Each foreign key of the schema, single- and multi-column alike: from table.columns to table.columns. */
export interface Relation {
  from: string;
  fromColumns: string[];
  to: string;
  toColumns: string[];
}
export function relations(view: SchemaView): Relation[] {
  const out: Relation[] = [];
  for (const [name, t] of Object.entries(view.tables)) {
    for (const [col, c] of Object.entries(t.columns)) if (c.references) out.push({ from: name, fromColumns: [col], to: c.references.table, toColumns: [c.references.column] });
    for (const fk of t.foreignKeys ?? []) out.push({ from: name, fromColumns: fk.columns, to: fk.references.table, toColumns: fk.references.columns });
  }
  return out;
}

const whoLabel = (who: Who): string => (who === 'service' ? 'service' : who.join(' + '));
export const accessLabel = (a: Access): string => {
  if (typeof a === 'string') return a;
  if ('members' in a) return `group (${a.members}.${a.key} = ${a.column}, write: ${a.write})`;
  const owners = a.owners ? `, owners: ${a.owners.join(', ')}` : '';
  return `read: ${whoLabel(a.read)}, write: ${whoLabel(a.write)}${owners}`;
};
