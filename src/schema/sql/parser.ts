// Reads declared SQL with Postgres's own grammar: libpg_query compiled to WebAssembly (npm libpg-query). Loaded on the
// first schema apply that needs it (≈15-70 ms, +15 MB), never per request. Everything a text can cost is bounded
// before the parse: its bytes, then its tokens (the scanner is a loop; the parser's output step recurses once per
// nesting level on the process's stack).
import { createRequire } from 'node:module';
import type { ParseResult, RawStmt, ScanToken } from 'libpg-query';
import { errors } from '../../core/errors.ts';

type PgQuery = typeof import('libpg-query');

let parser: PgQuery | undefined;
let loading: Promise<PgQuery> | undefined;

/** Loads the parser once; checkCondition and checkFunctionBody need it loaded. Cheap once loaded. */
export async function loadSqlParser(): Promise<void> {
  if (parser) return;
  loading ??= instantiate().finally(() => {
    loading = undefined;
  });
  parser = await loading;
}

/**
 * A fresh module instance. The package creates its WASM instance when it is first required (so it is required here,
 * lazily), and one whose stack overflowed keeps a corrupt stack pointer and leaked memory (measured: later parses fail
 * with "memory access out of bounds"), so a parser that overflowed is dropped and a new one is made from scratch.
 */
function instantiate(): Promise<PgQuery> {
  const require = createRequire(import.meta.url);
  delete require.cache[require.resolve('libpg-query')];
  const mod = require('libpg-query') as PgQuery;
  return mod.loadModule().then(() => mod);
}

function loaded(): PgQuery {
  if (!parser) throw new Error('await loadSqlParser() before checking declared SQL');
  return parser;
}

/** A token without whitespace; comments are tokens too (SQL_COMMENT, C_COMMENT). */
export type Token = ScanToken;

export interface SqlLimits {
  /** Names the declaration in every refusal: "Function 'request_booking'". */
  label: string;
  /** What the text is, in refusals: "the condition", "the body". */
  what: string;
  /** Text put before the author's (conditions are read as `select <condition>`); positions exclude it. */
  prefix: string;
  maxBytes: number;
  maxTokens: number;
}

export interface ReadSql {
  /** The statements; their locations are UTF-8 byte offsets into `bytes`. */
  stmts: RawStmt[];
  /** Every token of prefix + text, comments included, with byte offsets. */
  tokens: Token[];
  /** prefix + text as UTF-8. */
  bytes: Buffer;
}

/** Reads prefix + text: sizes first, then tokens, then the parse. Every refusal is a 400 naming limits.label. */
export function readSql(text: string, limits: SqlLimits): ReadSql {
  const { label, what } = limits;
  if (text.trim() === '') throw errors.validation(`${label}: ${what} is empty; write SQL.`);
  const size = Buffer.byteLength(text, 'utf8');
  if (size > limits.maxBytes) {
    throw errors.validation(`${label}: ${what} is ${size} bytes, more than ${limits.maxBytes}; shorten it.`);
  }
  // The parser reads a C string: text after a NUL would be checked by nobody.
  if (text.includes('\u0000')) throw errors.validation(`${label}: ${what} contains a NUL character; remove it.`);
  const source = limits.prefix + text;
  const tokens = scan(source, limits);
  const counted = tokens.filter((t) => !isComment(t)).length;
  if (counted > limits.maxTokens) {
    throw errors.validation(`${label}: ${what} has ${counted} tokens, more than ${limits.maxTokens}; shorten or split it.`);
  }
  return { stmts: parse(source, limits).stmts ?? [], tokens, bytes: Buffer.from(source, 'utf8') };
}

/** Parses SQL the checks produced themselves (the qualified text), with the same overflow guard. */
export function reparse(source: string, label: string): RawStmt[] {
  return parse(source, { label, prefix: '' }).stmts ?? [];
}

export function isComment(token: Token): boolean {
  return token.tokenName === 'SQL_COMMENT' || token.tokenName === 'C_COMMENT';
}

function scan(source: string, limits: SqlLimits): Token[] {
  try {
    return loaded().scanSync(source).tokens;
  } catch {
    // The scanner throws a bare error on an unterminated string or comment; the parser names it and its position.
    parse(source, limits);
    throw errors.validation(`${limits.label}: ${limits.what} could not be read; check its quotes and comments.`);
  }
}

function parse(source: string, limits: Pick<SqlLimits, 'label' | 'prefix'>): ParseResult {
  const pg = loaded();
  try {
    return pg.parseSync(source);
  } catch (err) {
    if (pg.hasSqlDetails(err)) throw syntaxError(err, source, limits);
    if (err instanceof RangeError) {
      parser = undefined; // its stack overflowed: the next loadSqlParser() makes a new one
      throw errors.validation(`${limits.label}: the SQL is nested too deeply to read; flatten it.`);
    }
    throw err;
  }
}

function syntaxError(err: { message: string; sqlDetails?: { cursorPosition: number } }, source: string, limits: Pick<SqlLimits, 'label' | 'prefix'>) {
  // cursorPosition counts characters (code points) from 0 over prefix + text.
  const at = (err.sqlDetails?.cursorPosition ?? 0) - [...limits.prefix].length;
  const length = [...source].length - [...limits.prefix].length;
  const where = at >= length ? 'at the end' : `at character ${at + 1}`;
  return errors.validation(`${limits.label}: ${err.message} (${where}); fix the SQL there.`);
}
