// The three-way diff of a merge: for each unit (state.ts), the branch's change since the common base is carried over
// when production left that unit as it was (or made the same change); when both changed it differently it is a
// conflict, and any conflict blocks the merge. What is carried over becomes a partial schema definition for
// schema_apply (only the tables, columns and functions that changed), the functions to deploy or delete, the site to
// promote and the AI settings, with a note for each change no definition can express.
import type { SchemaDefinitionInput } from '../schema/definition.ts';
import type { Units } from './state.ts';

/** One unit as the three states have it (absent: undefined), with the key that names it. */
export interface UnitDiff {
  key: string;
  base: string | undefined;
  branch: string | undefined;
  production: string | undefined;
}

export interface ThreeWay {
  /** The branch's changes production has not made: what the merge carries over. */
  changes: UnitDiff[];
  /** Units both sides changed, differently. */
  conflicts: UnitDiff[];
}

export function threeWay(base: Units, branch: Units, production: Units): ThreeWay {
  const keys = [...new Set([...Object.keys(base), ...Object.keys(branch), ...Object.keys(production)])].sort();
  const unit = (key: string): UnitDiff => ({ key, base: base[key], branch: branch[key], production: production[key] });
  const contested = contestedTables(keys, base, branch, production);
  const changes: UnitDiff[] = [];
  const conflicts: UnitDiff[] = [...contested].map((t) => unit(`table:${t}`));
  for (const key of keys) {
    if (contested.has(tableOf(key) ?? '')) continue;
    const d = unit(key);
    if (d.branch === d.base || d.branch === d.production) continue;
    (d.production === d.base ? changes : conflicts).push(d);
  }
  return { changes, conflicts };
}

/** The table a unit key belongs to (`table:notes/column:body` -> notes), or undefined for other units. */
function tableOf(key: string): string | undefined {
  if (!key.startsWith('table:')) return undefined;
  const at = key.indexOf('/');
  return key.slice('table:'.length, at < 0 ? undefined : at);
}

/**
 * Tables one side dropped while the other changed something in them: unit by unit these would merge (a column added
 * to a dropped table, a table dropped over production's new columns), so the table as a whole is the conflict.
 */
function contestedTables(keys: readonly string[], base: Units, branch: Units, production: Units): Set<string> {
  const changedUnder = (side: Units, table: string) => keys.some((k) => k.startsWith(`table:${table}/`) && side[k] !== base[k]);
  const out = new Set<string>();
  for (const key of keys) {
    const table = tableOf(key);
    if (table === undefined || key !== `table:${table}` || base[key] === undefined) continue;
    const branchDropped = branch[key] === undefined;
    const productionDropped = production[key] === undefined;
    if (branchDropped !== productionDropped && changedUnder(branchDropped ? production : branch, table)) out.add(table);
  }
  return out;
}

/** A function as a merge deploys it: the branch's code, trigger and limits (its variables stay production's own). */
export interface FunctionSpec {
  code: string;
  description: string | null;
  timeout_ms: number;
  memory_limit_mb: number;
  trigger: { type: string; config: Record<string, unknown> };
}

/** What a merge applies to production. */
export interface MergeChanges {
  /** The partial definition schema_apply runs; null when the schema is unchanged. */
  schema: SchemaDefinitionInput | null;
  functions: { deploy: Record<string, FunctionSpec>; delete: string[] };
  /** Whether production's site becomes the branch's live deployment. */
  site: boolean;
  /** The AI settings production takes; null: unchanged. */
  ai: Record<string, unknown> | null;
  /** Branch changes no merge can apply (e.g. a dropped index), named so that a person can make them by hand. */
  notes: string[];
  /** The unit keys of those changes: production keeps its value, and so does the branch's next base. */
  skipped: string[];
}

type TableInput = Record<string, unknown> & { columns?: Record<string, unknown>; indexes?: Record<string, unknown>; _dropColumns?: string[] };

/** What a removed table attribute is written as, so that applying it removes it. */
const CLEARED: Record<string, unknown> = { conditions: {}, plans: null, realtime: false, foreignKeys: [] };

/** The changes a merge carries over, as the definition, functions, site and settings production takes. */
export function mergeChanges(changes: readonly UnitDiff[]): MergeChanges {
  const out: MergeChanges = { schema: null, functions: { deploy: {}, delete: [] }, site: false, ai: null, notes: [], skipped: [] };
  const skip = (key: string, note: string) => {
    out.notes.push(note);
    out.skipped.push(key);
  };
  const tables: Record<string, TableInput> = {};
  const channels: Record<string, unknown> = {};
  const sqlFunctions: Record<string, unknown> = {};
  const dropped = new Set(changes.filter((c) => /^table:[^/]+$/.test(c.key) && c.branch === undefined).map((c) => c.key.slice('table:'.length)));
  const table = (name: string): TableInput => (tables[name] ??= {});
  for (const c of changes) {
    const value = c.branch === undefined ? undefined : (JSON.parse(c.branch) as unknown);
    const [head, rest] = splitKey(c.key);
    if (head.startsWith('table:')) {
      const name = head.slice('table:'.length);
      if (dropped.has(name)) {
        if (rest === undefined) tables[name] = { _drop: true };
        continue;
      }
      if (rest === undefined) table(name);
      else if (rest.startsWith('column:')) {
        const column = rest.slice('column:'.length);
        if (value === undefined) (table(name)._dropColumns ??= []).push(column);
        else (table(name).columns ??= {})[column] = value;
      } else if (rest.startsWith('index:')) {
        const index = rest.slice('index:'.length);
        if (value === undefined) skip(c.key, `The branch dropped index '${index}' of table '${name}'; a definition cannot drop an index, so production keeps it.`);
        else (table(name).indexes ??= {})[index] = value;
      } else table(name)[rest] = value === undefined ? CLEARED[rest] : value;
    } else if (head.startsWith('channel:')) {
      const pattern = head.slice('channel:'.length);
      if (value === undefined) skip(c.key, `The branch removed channel pattern '${pattern}'; a definition cannot remove one, so production keeps it.`);
      else channels[pattern] = value;
    } else if (head.startsWith('sqlfn:')) {
      sqlFunctions[head.slice('sqlfn:'.length)] = value === undefined ? { _drop: true } : value;
    } else if (head.startsWith('function:')) {
      const name = head.slice('function:'.length);
      if (value === undefined) out.functions.delete.push(name);
      else out.functions.deploy[name] = value as FunctionSpec;
    } else if (head === 'site') {
      if (value === undefined) skip(c.key, "The branch has no live site any more; production's site is kept.");
      else out.site = true;
    } else if (head === 'ai') {
      if (value === undefined) skip(c.key, "The branch has no AI settings any more; production's are kept.");
      else out.ai = value as Record<string, unknown>;
    }
  }
  if (Object.keys(tables).length || Object.keys(channels).length || Object.keys(sqlFunctions).length) {
    out.schema = {
      tables,
      ...(Object.keys(channels).length ? { channels } : {}),
      ...(Object.keys(sqlFunctions).length ? { functions: sqlFunctions } : {}),
    } as SchemaDefinitionInput;
  }
  return out;
}

/** `table:notes/column:body` -> ['table:notes', 'column:body']; a key without a part after the table -> [key]. */
function splitKey(key: string): [string, string | undefined] {
  if (!key.startsWith('table:')) return [key, undefined];
  const at = key.indexOf('/');
  return at < 0 ? [key, undefined] : [key.slice(0, at), key.slice(at + 1)];
}

/** A unit's key in words, for conflicts and summaries: "table notes, column body". */
export function describeKey(key: string): string {
  const [head, rest] = splitKey(key);
  const words = (part: string) => {
    const at = part.indexOf(':');
    return at < 0 ? part : `${part.slice(0, at) === 'sqlfn' ? 'SQL function' : part.slice(0, at)} ${part.slice(at + 1)}`;
  };
  return rest === undefined ? words(head) : `${words(head)}, ${words(rest)}`;
}
