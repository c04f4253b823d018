// Parser of the PostgREST query-string dialect: filters, or/and trees, select with one level of embedding,
// order, limit/offset. Pure: produces an AST that src/data/compile.ts checks against the catalog.
import { AppError } from '../core/errors.ts';

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'is', 'in', 'fts', 'plfts', 'phfts', 'wfts'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Condition {
  kind: 'cond';
  column: string;
  op: Operator;
  negate: boolean;
  /** Raw value; `in` holds its list, fts ops may carry a language. */
  value: string;
  list?: string[];
  language?: string;
}

export interface Group {
  kind: 'and' | 'or';
  negate: boolean;
  items: Filter[];
}

export type Filter = Condition | Group;

export interface SelectColumn {
  kind: 'column';
  name: string;
  alias?: string;
}

export interface SelectEmbed {
  kind: 'embed';
  relation: string;
  alias?: string;
  /** `!hint`: a foreign key name or column to disambiguate; `!inner` is recorded separately. */
  hint?: string;
  inner: boolean;
  columns: SelectColumn[];
}

export type SelectItem = SelectColumn | SelectEmbed | { kind: 'star' };

export interface OrderTerm {
  column: string;
  descending: boolean;
  nulls?: 'first' | 'last';
}

export interface ParsedQuery {
  select: SelectItem[];
  filters: Filter[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
  onConflict?: string[];
  columns?: string[];
}

/** Per request: embedded resources, and items of one select list (columns and embeds). Beyond them planning alone can outlast the statement timeout. */
export const MAX_EMBEDS = 20;
export const MAX_SELECT_ITEMS = 200;

const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'or', 'and', 'not.or', 'not.and', 'on_conflict', 'columns']);

const bad = (message: string): AppError =>
  new AppError(400, 'INVALID_QUERY', message, 'Use PostgREST syntax: col=op.value (eq, neq, gt, gte, lt, lte, like, ilike, is, in, fts), select=, order=, limit=, offset=.');

export function parseQuery(raw: string): ParsedQuery {
  const params = new URLSearchParams(raw);
  const query: ParsedQuery = { select: [{ kind: 'star' }], filters: [], order: [] };
  for (const [key, value] of params) {
    // Postgres text cannot hold NUL, and the simple protocol would cut the statement at it.
    if (key.includes('\0') || value.includes('\0')) throw bad(`The query parameter '${key.replaceAll('\0', '\\0')}' contains a NUL character (%00), which no value can hold.`);
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
      case 'or':
      case 'and':
      case 'not.or':
      case 'not.and':
        query.filters.push(parseGroupValue(key, value));
        break;
      default:
        if (RESERVED.has(key)) break;
        query.filters.push(parseCondition(key, value));
    }
  }
  return query;
}

export function parseCount(name: string, value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw bad(`'${name}' must be a non-negative integer, got '${value}'.`);
  return Number(value);
}

/** `col=op.value`, `col=not.op.value`, `col=fts(english).term`, `col=in.(a,b)`. */
export function parseCondition(column: string, expr: string): Condition {
  if (column.includes('.')) throw bad(`Filtering on embedded resources ('${column}') is not supported; filter the top-level table.`);
  let rest = expr;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const m = /^([a-z]+)(?:\(([a-z_]+)\))?\.([\s\S]*)$/.exec(rest);
  if (!m || !(OPERATORS as readonly string[]).includes(m[1]!)) {
    throw bad(`Unknown operator in '${column}=${expr}'; use one of ${OPERATORS.join(', ')}.`);
  }
  const op = m[1] as Operator;
  const value = m[3]!;
  const cond: Condition = { kind: 'cond', column, op, negate, value };
  if (m[2]) {
    if (!op.endsWith('fts')) throw bad(`Only full-text operators take a language, in '${column}=${expr}'.`);
    cond.language = m[2];
  }
  if (op === 'in') {
    if (!value.startsWith('(') || !value.endsWith(')')) throw bad(`'in' needs a list in parentheses, e.g. ${column}=in.(1,2,3).`);
    cond.list = splitList(value.slice(1, -1)).map(unquote);
  }
  if (op === 'is' && !['null', 'true', 'false', 'unknown'].includes(value.toLowerCase())) {
    throw bad(`'is' accepts null, true, false or unknown, got '${value}'.`);
  }
  return cond;
}

/** `or=(a.eq.1,b.gt.2,and(c.is.null,d.lt.0))`. */
function parseGroupValue(key: string, value: string): Group {
  const negate = key.startsWith('not.');
  const kind = (negate ? key.slice(4) : key) as 'and' | 'or';
  if (!value.startsWith('(') || !value.endsWith(')')) throw bad(`'${key}' needs a parenthesised list, e.g. ${key}=(a.eq.1,b.eq.2).`);
  return { kind, negate, items: splitList(value.slice(1, -1)).map(parseGroupItem) };
}

function parseGroupItem(item: string): Filter {
  const group = /^(not\.)?(and|or)(\([\s\S]*\))$/.exec(item);
  if (group) return parseGroupValue((group[1] ?? '') + group[2]!, group[3]!);
  const dot = item.indexOf('.');
  if (dot <= 0) throw bad(`Malformed condition '${item}' in a logical group; expected column.op.value.`);
  return parseCondition(item.slice(0, dot), item.slice(dot + 1));
}

/** Splits on top-level commas, respecting parentheses and double quotes. */
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
    else if (!quoted && ch === '(') depth++;
    else if (!quoted && ch === ')') depth--;
    if (ch === ',' && depth === 0 && !quoted) {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (quoted || depth !== 0) throw bad(`Unbalanced quotes or parentheses in '${text}'.`);
  if (current !== '' || out.length) out.push(current);
  return out.map((s) => s.trim());
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) return value.slice(1, -1).replace(/\\(.)/g, '$1');
  return value;
}

export function parseSelect(value: string): SelectItem[] {
  if (value.trim() === '') return [{ kind: 'star' }];
  const items = splitList(value).map((item) => parseSelectItem(item, true));
  const embeds = items.filter((i) => i.kind === 'embed').length;
  const widest = Math.max(items.length, ...items.map((i) => (i.kind === 'embed' ? i.columns.length : 0)));
  if (embeds > MAX_EMBEDS) throw tooWide(`${embeds} embedded resources`, `at most ${MAX_EMBEDS}`);
  if (widest > MAX_SELECT_ITEMS) throw tooWide(`${widest} items in one select list`, `at most ${MAX_SELECT_ITEMS}`);
  return items;
}

const tooWide = (found: string, limit: string) =>
  new AppError(400, 'QUERY_TOO_COMPLEX', `The select has ${found}; ${limit} are allowed per request.`, 'Split the read into several requests, or select only the columns you need.');

function parseSelectItem(item: string, allowEmbed: boolean): SelectItem {
  if (item === '*') return { kind: 'star' };
  const embed = /^(?:([a-z_][a-z0-9_]*):)?([a-z_][a-z0-9_]*)(?:!([a-z_][a-z0-9_]*))?(?:!(inner))?\(([\s\S]*)\)$/.exec(item);
  if (embed) {
    if (!allowEmbed) throw bad(`Only one level of embedding is supported ('${item}').`);
    const [, alias, relation, hintOrInner, inner] = embed;
    const isInner = inner === 'inner' || hintOrInner === 'inner';
    const hint = hintOrInner === 'inner' ? undefined : hintOrInner;
    const columns = (embed[5]!.trim() === '' ? ['*'] : splitList(embed[5]!)).map((c) => {
      const parsed = parseSelectItem(c, false);
      if (parsed.kind === 'embed') throw bad(`Only one level of embedding is supported ('${item}').`);
      return parsed;
    });
    const result: SelectEmbed = { kind: 'embed', relation: relation!, inner: isInner, columns: columns as SelectColumn[] };
    if (alias) result.alias = alias;
    if (hint) result.hint = hint;
    return result;
  }
  const col = /^(?:([a-z_][a-z0-9_]*):)?([a-z_][a-z0-9_]*)$/.exec(item);
  if (!col) throw bad(`Cannot read select item '${item}'; use col, alias:col or relation(cols).`);
  return col[1] ? { kind: 'column', name: col[2]!, alias: col[1] } : { kind: 'column', name: col[2]! };
}

export function parseOrder(value: string): OrderTerm[] {
  return splitList(value).map((term) => {
    const parts = term.split('.');
    const column = parts.shift()!;
    const order: OrderTerm = { column, descending: false };
    for (const p of parts) {
      if (p === 'asc') order.descending = false;
      else if (p === 'desc') order.descending = true;
      else if (p === 'nullsfirst') order.nulls = 'first';
      else if (p === 'nullslast') order.nulls = 'last';
      else throw bad(`Unknown order modifier '${p}' in '${term}'; use asc, desc, nullsfirst, nullslast.`);
    }
    return order;
  });
}

