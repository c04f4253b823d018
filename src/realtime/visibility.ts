// Which subscribers may see a changed row: the table's row-level security as each subscriber, applied to the row as the
// change captured it (not as the table holds it now, so a row deleted or changed since is judged as it was). The
// policies in force (pg_policies) are combined per role as Postgres combines them for a SELECT, and evaluated over the
// captured rows under the subscriber's role and claims, in one statement per table and subscriber group.
import pg from 'pg';
import type { AppDatabases } from '../apps/app-databases.ts';
import { DATA_STATEMENT_TIMEOUT_MS } from '../data/executor.ts';

export type ViewerRole = 'svc_anon' | 'svc_user' | 'svc_service';

/** A subscriber as row-level security sees it: its role, and the JWT claims the policies read (JSON). */
export interface Viewer {
  role: ViewerRole;
  claims: string;
}

/**
 * What a role may read of a table: every row, none, or the rows a condition (SQL over the row's columns) admits; `test`
 * is that condition in JavaScript when every policy in it has a form known exactly (row ownership), so that a batch
 * costs no query per subscriber.
 */
type Reach = { kind: 'all' } | { kind: 'none' } | { kind: 'some'; qual: string; test?: RowTest; owner?: string; group?: GroupRule };

/** A condition over a captured row and the viewer's `sub` claim. */
type RowTest = (row: Record<string, unknown>, sub: string | undefined) => boolean;

/** `<column> = current_user_id()`, as pg_policies prints the policy of a `user` table (render.ts's svc_user_own). */
const OWN_ROW = /^\(("?)([a-z_][a-z0-9_]*)\1 = (?:public\.)?current_user_id\(\)\)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A policy condition as JavaScript, when it is one whose meaning is known exactly; else undefined (SQL decides). */
export function compileQual(qual: string): RowTest | undefined {
  if (qual === 'true') return () => true;
  const own = OWN_ROW.exec(qual);
  if (!own) return undefined;
  const column = own[2]!;
  // current_user_id() is the claims' sub as a uuid; a row's uuid is compared as Postgres compares uuids.
  return (row, sub) => {
    const value = row[column];
    return typeof value === 'string' && sub !== undefined && UUID.test(sub.toLowerCase()) && value.toLowerCase() === sub.toLowerCase();
  };
}

interface PolicyRow {
  name?: string;
  permissive: 'PERMISSIVE' | 'RESTRICTIVE';
  roles: string[];
  cmd: string;
  qual: string | null;
}

/** A group access (svc_meta.table_access): rows whose `column` is the `key` of one of the end user's `members` rows. */
interface GroupRule {
  members: string;
  column: string;
  key: string;
}

interface RulesRow {
  rls: boolean;
  policies: PolicyRow[];
  privileges: Record<ViewerRole, boolean>;
  /** The table's declared group access, when it has one. */
  group?: GroupRule | null;
}

/** The policy a group access makes (src/schema/render.ts GROUP_POLICY). */
const GROUP_POLICY = 'svc_group_member';

const RULES_SQL = `
  select c.relrowsecurity as rls,
    coalesce((select json_agg(json_build_object('name', p.policyname, 'permissive', p.permissive, 'roles', p.roles, 'cmd', p.cmd, 'qual', p.qual))
      from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname), '[]') as policies,
    (select case when ta.access = 'group' then to_jsonb(ta) -> 'group_access' end from svc_meta.table_access ta where ta.table_name = c.relname) as "group",
    json_build_object('svc_anon', has_table_privilege('svc_anon', c.oid, 'SELECT'),
      'svc_user', has_table_privilege('svc_user', c.oid, 'SELECT'),
      'svc_service', has_table_privilege('svc_service', c.oid, 'SELECT')) as privileges
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relname = $1 and c.relkind in ('r', 'p')`;

/** How long a table's rules are trusted: policies change only by a schema apply. */
const RULES_TTL_MS = 5_000;
/** Aliases that no column of a definition can take (svc_ names are the platform's). */
const ROWS = 'svc_rt_rows';

/** The reach of a role, as Postgres combines policies for a SELECT: any permissive one, and every restrictive one. */
export function reachOf(rules: RulesRow, role: ViewerRole): Reach {
  if (!rules.privileges[role]) return { kind: 'none' };
  if (!rules.rls) return { kind: 'all' };
  const applies = (p: PolicyRow) => (p.cmd === 'ALL' || p.cmd === 'SELECT') && (p.roles.includes(role) || p.roles.includes('public'));
  const permissive = rules.policies.filter((p) => p.permissive === 'PERMISSIVE' && applies(p)).map((p) => p.qual ?? 'true');
  if (!permissive.length) return { kind: 'none' };
  // A group access and nothing else: the viewer's groups, read once for all viewers, decide (visibleTo).
  const own = rules.policies.filter((p) => applies(p));
  if (rules.group && own.length === 1 && own[0]!.name === GROUP_POLICY && own[0]!.permissive === 'PERMISSIVE') {
    return { kind: 'some', qual: permissive[0]!, group: rules.group };
  }
  const restrictive = rules.policies.filter((p) => p.permissive === 'RESTRICTIVE' && applies(p)).map((p) => p.qual ?? 'true');
  if (restrictive.length === 0 && permissive.includes('true')) return { kind: 'all' };
  const qual = [`(${permissive.map((q) => `(${q})`).join(' OR ')})`, ...restrictive.map((q) => `(${q})`)].join(' AND ');
  const anyOf = permissive.map(compileQual);
  const allOf = restrictive.map(compileQual);
  if (anyOf.some((t) => !t) || allOf.some((t) => !t)) return { kind: 'some', qual };
  const test: RowTest = (row, sub) => anyOf.some((t) => t!(row, sub)) && allOf.every((t) => t!(row, sub));
  // Ownership alone: a viewer sees the rows whose owner column holds its sub.
  const owner = restrictive.length === 0 && permissive.length === 1 ? OWN_ROW.exec(permissive[0]!)?.[2] : undefined;
  return owner ? { kind: 'some', qual, test, owner } : { kind: 'some', qual, test };
}

function subOf(claims: string): string | undefined {
  const sub = (JSON.parse(claims) as { sub?: unknown }).sub;
  return typeof sub === 'string' ? sub : undefined;
}

export class RowVisibility {
  readonly #databases: AppDatabases;
  readonly #rules = new Map<string, { rules: Promise<RulesRow | undefined>; until: number }>();

  constructor(databases: AppDatabases) {
    this.#databases = databases;
  }

  /** The indexes of `rows` (captured rows of `table`) the viewer may see. */
  async visible(appId: string, table: string, viewer: Viewer, rows: readonly Record<string, unknown>[]): Promise<Set<number>> {
    return (await this.visibleTo(appId, table, [viewer], rows))[0]!;
  }

  /**
   * For each viewer, the indexes of `rows` it may see. Conditions known in JavaScript run over the rows (ownership by an
   * index of the rows' owners, so that many viewers cost one pass); the others run in SQL, a query per viewer, as many
   * at once as the app's pool serves. (One round trip for many viewers, each statement after its own set_config of the
   * claims, measured four times slower on the bench's group workload: left for a later change.)
   */
  async visibleTo(appId: string, table: string, viewers: readonly Viewer[], rows: readonly Record<string, unknown>[]): Promise<Set<number>[]> {
    const out = viewers.map(() => new Set<number>());
    const rules = await this.#rulesOf(appId, table);
    if (!rules || rows.length === 0) return out;
    const bySql: Promise<void>[] = [];
    const byGroup: Array<{ v: number; group: GroupRule }> = [];
    const owners = new Map<string, Map<string, number[]>>();
    viewers.forEach((viewer, v) => {
      const reach = reachOf(rules, viewer.role);
      if (reach.kind === 'all') rows.forEach((_r, i) => out[v]!.add(i));
      else if (reach.kind === 'some' && reach.owner) {
        const index = owners.get(reach.owner) ?? owners.set(reach.owner, ownerIndex(rows, reach.owner)).get(reach.owner)!;
        const sub = subOf(viewer.claims)?.toLowerCase();
        for (const i of (sub !== undefined && UUID.test(sub) && index.get(sub)) || []) out[v]!.add(i);
      } else if (reach.kind === 'some' && reach.group) {
        byGroup.push({ v, group: reach.group });
      } else if (reach.kind === 'some' && reach.test) {
        const sub = subOf(viewer.claims);
        rows.forEach((row, i) => reach.test!(row, sub) && out[v]!.add(i));
      } else if (reach.kind === 'some') {
        bySql.push(this.#evaluate(appId, table, viewer, reach.qual, rows).then((seen) => void (out[v] = seen)));
      }
    });
    if (byGroup.length) bySql.push(this.#judgeGroups(appId, viewers, byGroup, rows, out));
    await Promise.all(bySql);
    return out;
  }

  /**
   * Group access for many viewers with one query: each viewer's keys in the members table (read as the platform, as the
   * policy's security-definer function reads it: the rows whose user_id is the viewer's sub), then the rows whose
   * column holds one of them.
   */
  async #judgeGroups(appId: string, viewers: readonly Viewer[], asked: Array<{ v: number; group: GroupRule }>, rows: readonly Record<string, unknown>[], out: Set<number>[]): Promise<void> {
    const { members, column, key } = asked[0]!.group;
    const subs = new Map(asked.map(({ v }) => [v, subOf(viewers[v]!.claims)?.toLowerCase()]));
    const valid = [...new Set([...subs.values()].filter((s): s is string => s !== undefined && UUID.test(s)))];
    if (!valid.length) return;
    const { rows: memberships } = await this.#databases
      .sql(appId)
      .query<{ u: string; k: string }>(`select user_id::text as u, ${pg.escapeIdentifier(key)}::text as k from public.${pg.escapeIdentifier(members)} where user_id = any($1::uuid[])`, [valid]);
    const keysOf = new Map<string, Set<string>>();
    for (const m of memberships) (keysOf.get(m.u) ?? keysOf.set(m.u, new Set()).get(m.u)!).add(m.k);
    // The key as Postgres prints it (::text): a uuid lower-cased, a number as is, as to_jsonb gave the row's value.
    const byKey = ownerIndex(rows, column, (value) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined));
    for (const { v } of asked) {
      for (const k of keysOf.get(subs.get(v) ?? '') ?? []) for (const i of byKey.get(k) ?? []) out[v]!.add(i);
    }
  }

  /** Forgets an app's rules (its schema changed). */
  forget(appId: string): void {
    for (const key of this.#rules.keys()) if (key.startsWith(`${appId}:`)) this.#rules.delete(key);
  }

  #rulesOf(appId: string, table: string): Promise<RulesRow | undefined> {
    const key = `${appId}:${table}`;
    const hit = this.#rules.get(key);
    if (hit && hit.until > Date.now()) return hit.rules;
    const rules = this.#databases
      .sql(appId)
      .query<RulesRow>(RULES_SQL, [table])
      .then((r) => r.rows[0]);
    rules.catch(() => this.#rules.delete(key));
    this.#rules.set(key, { rules, until: Date.now() + RULES_TTL_MS });
    return rules;
  }

  /**
   * The condition over the captured rows, each made a row of the table's type and named as the table (so the policy's
   * column references, qualified or not, resolve to it), under the viewer's role and claims, in one round trip.
   */
  async #evaluate(appId: string, table: string, viewer: Viewer, qual: string, rows: readonly Record<string, unknown>[]): Promise<Set<number>> {
    const t = pg.escapeIdentifier(table);
    const text =
      // Read only, and bounded as the data API's statements are: a declared condition may be costly on purpose.
      `begin read only; set local role ${viewer.role}; select set_config('request.jwt.claims', ${pg.escapeLiteral(viewer.claims)}, true), ` +
      `set_config('statement_timeout', '${DATA_STATEMENT_TIMEOUT_MS}', true); ` +
      `select (${ROWS}.svc_rt_n - 1)::int as i from jsonb_array_elements(${pg.escapeLiteral(JSON.stringify(rows))}::jsonb) with ordinality as ${ROWS}(svc_rt_row, svc_rt_n), ` +
      `lateral jsonb_populate_record(null::public.${t}, ${ROWS}.svc_rt_row) as ${t} where ${qual}; commit;`;
    const client = await this.#databases.pool(appId).connect();
    let results: pg.QueryResult<{ i: number }>[];
    try {
      results = (await client.query(text)) as unknown as pg.QueryResult<{ i: number }>[];
    } catch (err) {
      await client.query('rollback').then(
        () => client.release(),
        (rollbackErr: Error) => client.release(rollbackErr),
      );
      throw err;
    }
    client.release();
    return new Set(results[3]!.rows.map((r) => r.i));
  }
}

/** The rows' indexes by a column's value (by default a uuid's, lower-cased). */
function ownerIndex(rows: readonly Record<string, unknown>[], column: string, keyOf = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : undefined)): Map<string, number[]> {
  const index = new Map<string, number[]>();
  rows.forEach((row, i) => {
    const key = keyOf(row[column]);
    if (key === undefined) return;
    const list = index.get(key);
    if (list) list.push(i);
    else index.set(key, [i]);
  });
  return index;
}
