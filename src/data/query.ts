// Parser of the PostgREST query-string dialect: filters (top-level and on embedded resources), or/and trees,
// select with nested embedding, spreads, JSON paths, casts and aggregates, order, limit/offset. Pure: produces an
// AST that src/data/compile.ts checks against the catalog.
import { AppError } from '../core/errors.ts';
import { parseSelect } from './select.ts';

export { MAX_EMBEDS, MAX_SELECT_ITEMS, parseSelect } from './select.ts';
export type { AggregateFn, SelectColumn, SelectCount, SelectEmbed, SelectItem } from './select.ts';
import type { SelectItem } from './select.ts';

export const OPERATORS = [
  'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'is', 'isdistinct', 'in',
  'cs', 'cd', 'ov', 'sl', 'sr', 'nxl', 'nxr', 'adj', 'fts', 'plfts', 'phfts', 'wfts',
] as const;
export type Operator = (typeof OPERATORS)[number];
const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);
/** Operators that take `(any)` or `(all)` and a `{a,b}` list. */
const QUANTIFIABLE: ReadonlySet<string> = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch']);

/** One step of a JSON path: `->key` (json) or `->>key` (text); an integer key indexes an array. */
export interface JsonStep {
  arrow: '->' | '->>';
  key: string;
}

export interface Condition {
  kind: 'cond';
  column: string;
  /** `col->a->>b`: the JSON path after the column. */
  path?: JsonStep[];
  op: Operator;
  negate: boolean;
  /** Raw value; `in` and quantified operators hold their list, fts ops may carry a language. */
  value: string;
  list?: string[];
  language?: string;
  quantifier?: 'any' | 'all';
}

export interface Group {
  kind: 'and' | 'or';
  negate: boolean;
  items: Filter[];
}

export type Filter = Condition | Group;

export interface OrderTerm {
  column: string;
  path?: JsonStep[];
  /** `order=rel(col)`: the column of a to-one embedded resource. */
  relation?: string;
  descending: boolean;
  nulls?: 'first' | 'last';
}

/** Filters and paging of one embedded resource (`messages.channel_id=eq.1`, `messages.order=id`, `messages.limit=1`). */
export interface EmbedParams {
  filters: Filter[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
}

export interface ParsedQuery {
  select: SelectItem[];
  filters: Filter[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
  onConflict?: string[];
  columns?: string[];
  /** Keyed by the embed path: names (or aliases) joined by '.', e.g. 'messages' or 'messages.channels'. */
  embedded?: Map<string, EmbedParams>;
}

const LOGICAL = new Set(['or', 'and', 'not.or', 'not.and']);

export const badQuery = (message: string): AppError =>
  new AppError(
    400,
    'INVALID_QUERY',
    message,
    'Use PostgREST syntax: col=op.value (eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, is, isdistinct, in, cs, cd, ov, sl, sr, nxl, nxr, adj, fts), select=, order=, limit=, offset=.',
  );

export function parseQuery(raw: string): ParsedQuery {
  const query: ParsedQuery = { select: [{ kind: 'star' }], filters: [], order: [] };
  if (raw === '') return query;
  for (const [key, value] of new URLSearchParams(raw)) {
    // Postgres text cannot hold NUL, and the simple protocol would cut the statement at it.
    if (key.includes('\0') || value.includes('\0')) throw badQuery(`The query parameter '${key.replaceAll('\0', '\\0')}' contains a NUL character (%00), which no value can hold.`);
    switch (key) {
      case 'select':
        query.select = parseSelect(value);
        break;
      case 'order':
        query.order = parseOrder(value);
        break;
      case 'limit':
        query.limit = parseCount('limit', value);
        break;
      case 'offset':
        query.offset = parseCount('offset', value);
        break;
      case 'on_conflict':
        query.onConflict = splitList(value).map(unquote);
        break;
      case 'columns':
        query.columns = splitList(value).map(unquote);
        break;
      default:
        addParam(query, key, value);
    }
  }
  return query;
}

/** A filter, logical group or paging parameter, of the table itself or (with a dotted key) of an embedded resource. */
function addParam(query: ParsedQuery, key: string, value: string): void {
  const { path, name } = splitKey(key);
  if (path === '') {
    query.filters.push(LOGICAL.has(name) ? parseGroupValue(name, value) : parseCondition(name, value));
    return;
  }
  query.embedded ??= new Map();
  let params = query.embedded.get(path);
  if (!params) query.embedded.set(path, (params = { filters: [], order: [] }));
  if (name === 'order') params.order = parseOrder(value);
  else if (name === 'limit') params.limit = parseCount(key, value);
  else if (name === 'offset') params.offset = parseCount(key, value);
  else if (LOGICAL.has(name)) params.filters.push(parseGroupValue(name, value));
  else params.filters.push(parseCondition(name, value));
}

/** `messages.channels.id` -> path 'messages.channels', name 'id'; dots inside a JSON path (after `->`) do not split. */
function splitKey(key: string): { path: string; name: string } {
  const arrow = key.indexOf('->');
  const head = arrow < 0 ? key : key.slice(0, arrow);
  const tail = arrow < 0 ? '' : key.slice(arrow);
  const logical = tail === '' ? splitLogicalKey(key) : undefined;
  if (logical) return logical;
  const dot = head.lastIndexOf('.');
  if (dot < 0) return { path: '', name: key };
  if (dot === 0 || dot === head.length - 1) throw badQuery(`Cannot read the query parameter '${key}'.`);
  return { path: head.slice(0, dot), name: head.slice(dot + 1) + tail };
}

/**
 * A logical group's key, read as PostgREST's pLogicPath reads it: the last word is `and` or `or`, the words before it
 * but `not` are the embed path, and a `not` among them negates the group (`not.or`, `messages.not.and`).
 */
function splitLogicalKey(key: string): { path: string; name: string } | undefined {
  const words = key.split('.');
  const op = words.pop()!;
  if (op !== 'and' && op !== 'or') return undefined;
  if (words.includes('')) throw badQuery(`Cannot read the query parameter '${key}'.`);
  const negate = words.includes('not');
  return { path: words.filter((w) => w !== 'not').join('.'), name: negate ? `not.${op}` : op };
}

export function parseCount(name: string, value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw badQuery(`'${name}' must be a non-negative integer, got '${value}'.`);
  return Number(value);
}

/**
 * A JSON key: a negative array index, a double-quoted key, or a plain one (digits too). The alternatives never match
 * the same text, so a path that fails to match is rejected in linear time (overlapping ones backtracked
 * exponentially: `->1->1...` froze the process).
 */
const KEY = String.raw`(?:-\d+|"[^"]*"|[A-Za-z0-9_$ ]+)`;
const FIELD = new RegExp(String.raw`^([A-Za-z_][A-Za-z0-9_]*)((?:->>?${KEY})*)$`);
const STEP = new RegExp(String.raw`(->>?)(${KEY})`, 'g');
const FIELD_PREFIX = new RegExp(String.raw`^[A-Za-z_][A-Za-z0-9_]*(?:->>?${KEY})*`);

/** `col`, `col->a->>b`, `col->0`: the column and its JSON path. */
export function parseField(text: string, context: string): { column: string; path?: JsonStep[] } {
  const m = FIELD.exec(text);
  if (!m) throw badQuery(`Cannot read the column '${text}' in '${context}'.`);
  if (!m[2]) return { column: m[1]! };
  const path = [...m[2].matchAll(STEP)].map((step) => ({ arrow: step[1] as JsonStep['arrow'], key: unquote(step[2]!) }));
  return { column: m[1]!, path };
}

/** `col=op.value`, `col=not.op.value`, `col=fts(english).term`, `col=in.(a,b)`, `col=like(any).{a*,b*}`. */
export function parseCondition(field: string, expr: string): Condition {
  let rest = expr;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const m = /^([a-z]+)(?:\(([a-z_]+)\))?\.([\s\S]*)$/.exec(rest);
  if (!m || !OPERATOR_SET.has(m[1]!)) throw badQuery(`Unknown operator in '${field}=${expr}'; use one of ${OPERATORS.join(', ')}.`);
  const op = m[1] as Operator;
  const value = m[3]!;
  const cond: Condition = { kind: 'cond', ...parseField(field, `${field}=${expr}`), op, negate, value };
  const modifier = m[2];
  if (modifier === 'any' || modifier === 'all') {
    if (!QUANTIFIABLE.has(op)) throw badQuery(`'${op}' takes no (${modifier}) modifier, in '${field}=${expr}'.`);
    if (!value.startsWith('{') || !value.endsWith('}')) throw badQuery(`'${op}(${modifier})' needs a list in braces, e.g. ${field}=${op}(${modifier}).{a,b}.`);
    cond.quantifier = modifier;
    cond.list = splitList(value.slice(1, -1)).map(unquote);
  } else if (modifier) {
    if (!op.endsWith('fts')) throw badQuery(`Only full-text operators take a language, in '${field}=${expr}'.`);
    cond.language = modifier;
  }
  if (op === 'in') {
    if (!value.startsWith('(') || !value.endsWith(')')) throw badQuery(`'in' needs a list in parentheses, e.g. ${field}=in.(1,2,3).`);
    cond.list = splitList(value.slice(1, -1)).map(unquote);
  }
  if (op === 'is' && !['null', 'not_null', 'true', 'false', 'unknown'].includes(value.toLowerCase())) {
    throw badQuery(`'is' accepts null, not_null, true, false or unknown, got '${value}'.`);
  }
  return cond;
}

/**
 * Logical groups nested deeper than this are refused: each level scans what is inside it again (quadratic in the
 * depth), and the parser and compiler recurse per level (thousands of levels overflowed the stack).
 */
export const MAX_GROUP_DEPTH = 32;

/** `or=(a.eq.1,b.gt.2,and(c.is.null,d.lt.0))`. */
function parseGroupValue(key: string, value: string, depth = 1): Group {
  if (depth > MAX_GROUP_DEPTH) throw badQuery(`Logical groups are nested more than ${MAX_GROUP_DEPTH} deep; flatten the condition.`);
  const negate = key.startsWith('not.');
  const kind = (negate ? key.slice(4) : key) as 'and' | 'or';
  if (!value.startsWith('(') || !value.endsWith(')')) throw badQuery(`'${key}' needs a parenthesised list, e.g. ${key}=(a.eq.1,b.eq.2).`);
  const items = splitList(value.slice(1, -1));
  // An empty group would be `true` (or `false`), and `and=()` would pass for the filter a collection write needs.
  if (items.length === 0) throw badQuery(`'${key}' needs at least one condition, e.g. ${key}=(a.eq.1,b.eq.2).`);
  return { kind, negate, items: items.map((item) => parseGroupItem(item, depth)) };
}

function parseGroupItem(item: string, depth: number): Filter {
  const group = /^(not\.)?(and|or)(\([\s\S]*\))$/.exec(item);
  if (group) return parseGroupValue((group[1] ?? '') + group[2]!, group[3]!, depth + 1);
  const { column, rest } = splitFieldAndRest(item);
  if (!column) throw badQuery(`Malformed condition '${item}' in a logical group; expected column.op.value.`);
  return parseCondition(column, rest);
}

/** `data->a->>b.eq.1` -> field `data->a->>b`, rest `eq.1`: the field ends at the first dot after its JSON path. */
function splitFieldAndRest(item: string): { column: string; rest: string } {
  const m = FIELD_PREFIX.exec(item);
  if (!m || item[m[0].length] !== '.') return { column: '', rest: item };
  return { column: m[0], rest: item.slice(m[0].length + 1) };
}

/** Splits on top-level commas, respecting parentheses, braces inside values and double quotes. */
export function splitList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && quoted && i + 1 < text.length) {
      current += ch + text[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '(' || ch === '{')) depth++;
    else if (!quoted && (ch === ')' || ch === '}')) depth--;
    if (ch === ',' && depth === 0 && !quoted) {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (quoted || depth !== 0) throw badQuery(`Unbalanced quotes or parentheses in '${text}'.`);
  if (current !== '' || out.length) out.push(current);
  return out.map((s) => s.trim());
}

export function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1).replace(/\\(.)/g, '$1');
  return value;
}

/** `col.desc.nullslast`, `data->a.asc`, `rel(col).desc`. */
export function parseOrder(value: string): OrderTerm[] {
  return splitList(value).map((term) => {
    const related = /^([A-Za-z_][A-Za-z0-9_]*)\(([^()]*)\)(.*)$/.exec(term);
    const { column: fieldText, rest } = related ? { column: related[2]!, rest: related[3]!.replace(/^\./, '') } : splitOrderField(term);
    const field = parseField(fieldText, `order=${value}`);
    const order: OrderTerm = { ...field, descending: false };
    if (related) order.relation = related[1]!;
    for (const p of rest === '' ? [] : rest.split('.')) {
      if (p === 'asc') order.descending = false;
      else if (p === 'desc') order.descending = true;
      else if (p === 'nullsfirst') order.nulls = 'first';
      else if (p === 'nullslast') order.nulls = 'last';
      else throw badQuery(`Unknown order modifier '${p}' in '${term}'; use asc, desc, nullsfirst, nullslast.`);
    }
    return order;
  });
}

function splitOrderField(term: string): { column: string; rest: string } {
  const split = splitFieldAndRest(term);
  return split.column ? split : { column: term, rest: '' };
}
