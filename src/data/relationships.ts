// Relationships between tables, as PostgREST finds them from foreign keys: many-to-one, one-to-many, one-to-one
// (a foreign key whose columns are unique) and many-to-many (through a join table whose key holds both foreign keys).
import { AppError } from '../core/errors.ts';
import type { Catalog, ForeignKeyInfo, TableInfo } from '../schema/catalog.ts';
import { q } from './filters.ts';


export type Cardinality = 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many';

export interface Relationship {
  target: TableInfo;
  cardinality: Cardinality;
  /** Yields one row (an object) rather than many (an array). */
  toOne: boolean;
  /** The condition joining the target's rows (alias `child`) to the parent's row (alias `parent`). */
  on(parent: string, child: string): string;
  /** PostgREST's description, for the ambiguity error. */
  describe: string;
  /** The hint that selects this relationship when several match. */
  hintName: string;
}

/** The relationship `relation[!hint]` names from `parent`: a table, a foreign key's column, or a foreign key's name. */
export function resolveRelationship(catalog: Catalog, parent: TableInfo, relation: string, hint?: string): Relationship {
  const target = catalog.get(relation);
  // A hint only ever narrows an embed named by its table (PostgREST's findRel): `client_id!hint(*)` finds nothing.
  const found = target ? byTable(catalog, parent, target, hint) : hint === undefined ? byColumnOrKey(catalog, parent, relation) : [];
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw notFound(parent.name, relation, hint);
  throw ambiguous(parent.name, relation, found);
}

function byTable(catalog: Catalog, parent: TableInfo, target: TableInfo, hint: string | undefined): Relationship[] {
  if (target.name === parent.name) return selfChildren(parent, hint);
  const found: Relationship[] = [];
  for (const fk of parent.foreignKeys) if (fk.refTable === target.name) found.push(manyToOne(fk, parent, target));
  for (const fk of target.foreignKeys) if (fk.refTable === parent.name) found.push(oneToMany(fk, parent, target));
  for (const junction of catalog.values()) found.push(...manyToMany(parent, target, junction));
  return hint === undefined ? found : found.filter((r) => matchesHint(r, hint));
}

/**
 * A table embedding itself, as PostgREST's findRel resolves it (a self-referencing foreign key gives two relationships,
 * told apart by convention): by the table's name, its children (one-to-many), which a hint picks only by the key's
 * column (`collections!parent_id`, not the constraint's name); by the key's column alone, its parent row
 * (byColumnOrKey). A unique self-referencing key (one-to-one) and a join table linking a table to itself
 * (many-to-many) embed nothing: PostgREST leaves both unresolved, 400 PGRST200.
 */
function selfChildren(table: TableInfo, hint: string | undefined): Relationship[] {
  const picked = (fk: ForeignKeyInfo) => hint === undefined || (fk.columns.length === 1 && fk.columns[0] === hint);
  return selfKeys(table).filter(picked).map((fk) => oneToMany(fk, table, table));
}

/** The table's many-to-one keys onto itself (a unique one would make them one-to-one). */
const selfKeys = (table: TableInfo) => table.foreignKeys.filter((fk) => fk.refTable === table.name && !isUnique(table, fk.columns));

function byColumnOrKey(catalog: Catalog, parent: TableInfo, name: string): Relationship[] {
  const byColumn = (fk: ForeignKeyInfo) => fk.columns.length === 1 && fk.columns[0] === name;
  // A self-referencing key is found by its column only (its parent row), never by its constraint's name.
  const forward = parent.foreignKeys.filter((fk) => (fk.refTable === parent.name ? selfKeys(parent).includes(fk) && byColumn(fk) : fk.name === name || byColumn(fk)));
  const found = forward.flatMap((fk) => {
    const target = catalog.get(fk.refTable);
    return target ? [manyToOne(fk, parent, target)] : [];
  });
  if (found.length) return found;
  for (const table of catalog.values()) {
    if (table.name === parent.name) continue;
    for (const fk of table.foreignKeys) if (fk.name === name && fk.refTable === parent.name) found.push(oneToMany(fk, parent, table));
  }
  return found;
}

function matchesHint(rel: Relationship & { keys?: ForeignKeyInfo[]; junction?: string }, hint: string): boolean {
  if (rel.junction === hint || rel.hintName === hint) return true;
  return (rel.keys ?? []).some((fk) => fk.name === hint || (fk.columns.length === 1 && fk.columns[0] === hint) || (fk.refColumns.length === 1 && fk.refColumns[0] === hint));
}

const pairs = (fk: ForeignKeyInfo, fkSide: string, refSide: string) =>
  fk.columns.map((c, i) => `${fkSide}.${q(c)} = ${refSide}.${q(fk.refColumns[i]!)}`).join(' and ');

const using = (fk: ForeignKeyInfo, table: string) => `${fk.name} using ${table}(${fk.columns.join(', ')}) and ${fk.refTable}(${fk.refColumns.join(', ')})`;

function manyToOne(fk: ForeignKeyInfo, owner: TableInfo, target: TableInfo): Relationship & { keys: ForeignKeyInfo[] } {
  return {
    target,
    cardinality: 'many-to-one',
    toOne: true,
    on: (parent, child) => pairs(fk, parent, child),
    describe: using(fk, owner.name),
    hintName: fk.name,
    keys: [fk],
  };
}

/** `fk` belongs to `child` and points at `parent`; unique foreign key columns make it one-to-one. */
function oneToMany(fk: ForeignKeyInfo, parent: TableInfo, child: TableInfo): Relationship & { keys: ForeignKeyInfo[] } {
  const unique = isUnique(child, fk.columns);
  return {
    target: child,
    cardinality: unique ? 'one-to-one' : 'one-to-many',
    toOne: unique,
    on: (parentAlias, childAlias) => pairs(fk, childAlias, parentAlias),
    // Seen from the parent, as PostgREST prints it: the referenced side first.
    describe: `${fk.name} using ${parent.name}(${fk.refColumns.join(', ')}) and ${child.name}(${fk.columns.join(', ')})`,
    hintName: fk.name,
    keys: [fk],
  };
}

/** Every join table linking `parent` and `target`: both its foreign keys lie within its primary key (or a unique key). */
function manyToMany(parent: TableInfo, target: TableInfo, junction: TableInfo): Array<Relationship & { keys: ForeignKeyInfo[]; junction: string }> {
  if (junction.name === parent.name || junction.name === target.name) return [];
  const keyed = (fk: ForeignKeyInfo) => fk.columns.every((c) => junction.primaryKey.includes(c)) || isUnique(junction, fk.columns, true);
  const toParent = junction.foreignKeys.filter((fk) => fk.refTable === parent.name && keyed(fk));
  const toTarget = junction.foreignKeys.filter((fk) => fk.refTable === target.name && keyed(fk));
  return toParent.flatMap((a) =>
    toTarget
      .filter((b) => b !== a)
      .map((b) => ({
        target,
        cardinality: 'many-to-many' as const,
        toOne: false,
        on: (parentAlias: string, child: string) => {
          const j = `${child}_j`;
          return `exists (select 1 from public.${q(junction.name)} ${j} where ${pairs(a, j, parentAlias)} and ${pairs(b, j, child)})`;
        },
        describe: `${junction.name} using ${a.name}(${a.columns.join(', ')}) and ${b.name}(${b.columns.join(', ')})`,
        hintName: junction.name,
        keys: [a, b],
        junction: junction.name,
      })),
  );
}

/** The columns are the primary key or a unique index (or, with `within`, contain one). */
function isUnique(table: TableInfo, columns: readonly string[], within = false): boolean {
  const same = (key: readonly string[]) => (within ? key.every((c) => columns.includes(c)) : key.length === columns.length && key.every((c) => columns.includes(c)));
  if (table.primaryKey.length && same(table.primaryKey)) return true;
  return table.indexes.some((i) => i.unique && same(i.columns));
}

function notFound(parent: string, relation: string, hint: string | undefined): AppError {
  const err = new AppError(
    400,
    'UNKNOWN_RELATIONSHIP',
    `No foreign key links '${parent}' and '${relation}'${hint ? ` through '${hint}'` : ''}.`,
    'Embed only tables joined by a foreign key (declare one with references in schema_apply).',
  );
  err.postgrest = {
    code: 'PGRST200',
    message: `Could not find a relationship between '${parent}' and '${relation}' in the schema cache`,
    details: `Searched for a foreign key relationship between '${parent}' and '${relation}'${hint ? ` using the hint '${hint}'` : ''} in the schema 'public', but no matches were found.`,
    hint: null,
  };
  return err;
}

function ambiguous(parent: string, relation: string, found: readonly Relationship[]): AppError {
  const options = found.map((r) => `'${relation}!${r.hintName}'`).join(', ');
  const err = new AppError(300, 'AMBIGUOUS_RELATIONSHIP', `Several foreign keys link '${parent}' and '${relation}'.`, `Name one: ${options}.`);
  err.postgrest = {
    code: 'PGRST201',
    message: `Could not embed because more than one relationship was found for '${parent}' and '${relation}'`,
    details: found.map((r) => ({
      cardinality: r.cardinality,
      embedding: `${parent} with ${relation}`,
      relationship: r.describe,
    })),
    hint: `Try changing '${relation}' to one of the following: ${options}. Find the desired relationship in the 'details' key.`,
  };
  return err;
}
