// Small readers of libpg_query's JSON parse tree: a node is { <Kind>: { ...fields } }, a list is an array of nodes,
// names are lists of { String: { sval } }. Defaults are omitted (0, false, ''), so a missing number is 0.

export type Fields = Record<string, unknown>;

/** A node's kind and fields, or undefined when the value is not a one-kind node object. */
export function unwrap(node: unknown): [string, Fields] | undefined {
  if (!isObject(node)) return undefined;
  const keys = Object.keys(node);
  if (keys.length !== 1) return undefined;
  const kind = keys[0]!;
  const body = node[kind];
  return isObject(body) ? [kind, body] : undefined;
}

export function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The strings of a name list (["public", "bookings"]), or undefined when an element is not a String node. */
export function names(value: unknown): string[] | undefined {
  const out: string[] = [];
  for (const item of list(value)) {
    const node = unwrap(item);
    if (!node || node[0] !== 'String' || typeof node[1].sval !== 'string') return undefined;
    out.push(node[1].sval);
  }
  return out;
}

export function stringNode(sval: string): Fields {
  return { String: { sval } };
}

/** A node's location as a byte offset (an omitted one is 0; -1 means the parser does not know it). */
export function location(fields: Fields): number {
  return typeof fields.location === 'number' ? fields.location : 0;
}

/** The operands of a chain of ANDs (a BoolExpr AND is flat: a and b and c is one node). */
export function conjuncts(expr: unknown): unknown[] {
  const node = unwrap(expr);
  if (node && node[0] === 'BoolExpr' && node[1].boolop === 'AND_EXPR') return list(node[1].args);
  return [expr];
}

/** Fields that say where a node was written, not what it is: ignored when two trees are compared. */
const POSITIONS = new Set(['location', 'stmt_location', 'stmt_len', 'list_start', 'list_end', 'rexpr_list_start', 'rexpr_list_end']);

/**
 * A tree as text with positions dropped and keys sorted, so that two parses of the same SQL written differently
 * (spacing, added schema names) compare equal exactly when they mean the same. Only called on checked trees, whose
 * depth the checks bounded.
 */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  const keys = Object.keys(value)
    .filter((k) => !POSITIONS.has(k))
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
}
