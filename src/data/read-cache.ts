// Reads parsed and compiled once: clients repeat the same few query strings, and parsing one and compiling it
// against the catalog was a third of the data service's own work on a read (issue 46). A statement is kept per
// catalog snapshot (the snapshot a refresh or an invalidation replaces is a new object, so nothing compiled from an
// old one is used again). A by-id read is kept with a placeholder for the id's literal, which each request splices
// in: the same text compileRead writes for that id, as the id reaches the statement only as that literal.
import type { Catalog } from '../schema/catalog.ts';
import { flat } from './executor.ts';
import { lit } from './filters.ts';
import { parseQuery, type ParsedQuery } from './query.ts';

/** Query strings kept parsed, and statements kept per catalog snapshot; past it the oldest is dropped. */
const MAX_ENTRIES = 256;
/** Longer query strings are parsed and compiled on every request: 256 of them could hold megabytes. */
const MAX_CACHED_QUERY = 2048;
/** The id a by-id read is compiled with: no query value (parseQuery refuses NUL) and no catalog name holds NUL. */
const ID_PLACEHOLDER = '\0svc-id\0';
const ID_LITERAL = lit(ID_PLACEHOLDER);

/** Shared: a parsed query is only read (compiling it, the service's paging), never changed. */
const parsed = new Map<string, ParsedQuery>();
/** A read's statement as one part, a by-id read's as the text before and after the id's literal. */
const compiled = new WeakMap<Catalog, Map<string, readonly string[]>>();

/** parseQuery, once per query string. */
export function parsedQuery(raw: string): ParsedQuery {
  const hit = parsed.get(raw);
  if (hit) return hit;
  const query = parseQuery(raw);
  if (raw.length <= MAX_CACHED_QUERY) remember(parsed, raw, query);
  return query;
}

/**
 * The statement `compile` writes from `catalog`, once per snapshot and `key`: the key names everything the statement
 * depends on besides the catalog (table, query string, paging, output). A compile that throws is not kept.
 */
export function compiledRead(catalog: Catalog, key: string, compile: () => string): string {
  const statements = statementsOf(catalog);
  const hit = statements.get(key);
  if (hit) return hit[0]!;
  const text = flat(compile());
  if (key.length <= MAX_CACHED_QUERY * 2) remember(statements, key, [text]);
  return text;
}

/** A by-id read: `compile(id)` for this id, compiled once per snapshot and `key` (as compiledRead) for every id. */
export function compiledById(catalog: Catalog, key: string, id: string, compile: (id: string) => string): string {
  const statements = statementsOf(catalog);
  let parts = statements.get(key);
  if (!parts) {
    parts = compile(ID_PLACEHOLDER).split(ID_LITERAL).map(flat);
    // Anything but exactly one literal of the id (never seen) is compiled for each id.
    if (parts.length !== 2) return compile(id);
    if (key.length <= MAX_CACHED_QUERY * 2) remember(statements, key, parts);
  }
  return parts[0] + lit(id) + parts[1];
}

function statementsOf(catalog: Catalog): Map<string, readonly string[]> {
  let statements = compiled.get(catalog);
  if (!statements) compiled.set(catalog, (statements = new Map()));
  return statements;
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}
