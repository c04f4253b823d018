import { AppError, errors } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import type { Caller } from '../core/caller.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import type { CatalogCache } from '../schema/catalog-cache.ts';
import type { Catalog } from '../schema/catalog.ts';
import { CatalogMiss, compileRead, compileReadFrom, idFilter, tableOf } from './compile.ts';
import { callSql, checkAccess, functionsOf, resolveCall, returnedTable, rpcMethodRefused, splitQueryArgs, valueStatement, type DeclaredFunction, type RpcArgs } from './rpc.ts';
import { countTotal, MediaText, type OutputOptions } from './output.ts';
import { compileDelete, compileInsert, compileUpdate, insertColumns, type WriteOutput } from './write.ts';
import { roleFor, runAs, StatementAborted, type StatementResult } from './executor.ts';
import { DataTransaction, TransactionSlots } from './transaction.ts';
import { checkStrict, JSON_MEDIA, maxAffected, negotiate, parsePrefer, parseRange, preferenceApplied, type Media, type Operation, type Prefer } from './prefer.ts';
import { queryTypeError } from './statement-errors.ts';
import { parseQuery, type ParsedQuery } from './query.ts';
import { compiledById, compiledRead, parsedQuery } from './read-cache.ts';

export interface DataRequest {
  appId: string;
  caller: Caller;
  table: string;
  /** The raw PostgREST query string. */
  query: string;
  prefer?: string | undefined;
  range?: string | undefined;
  accept?: string | undefined;
}

/**
 * Response headers that only the REST wire carries (Preference-Applied): JSON serialization leaves them out, so an MCP
 * result never shows them.
 */
export class RestHeaders {
  readonly values: Readonly<Record<string, string>>;

  constructor(values: Record<string, string>) {
    this.values = values;
  }

  toJSON(): undefined {
    return undefined;
  }
}

/** A call of a declared function: POST (args in the body) or, with `get`, GET/HEAD (args in the query string). */
export interface RpcRequest extends Omit<DataRequest, 'table' | 'range'> {
  fn: string;
  get: boolean;
  body?: unknown;
}

export interface DataResult {
  status: number;
  /**
   * Rows, one row (single-object responses and by-id routes), or nothing (return=minimal); JSON text from Postgres,
   * or a MediaText for another media type (CSV, the vnd.pgrst types).
   */
  data?: JsonText;
  /** PostgREST's Content-Range: `0-9/42`, `*\/42`; on writes only with a count or the rows a PATCH changed (REST sends `*\/*` otherwise). */
  content_range?: string;
  /** Prefer: return=headers-only on an insert of one row into a table with a primary key: `/table?pk=eq.value`. */
  location?: string;
  headers?: RestHeaders;
}

/** PGRST116 in the words of PostgREST 12 (the release postgrest-js's suite and Supabase answer with; 13 says "Cannot coerce the result to a single JSON object"). */
function notSingle(rows: number): AppError {
  const err = new AppError(406, 'NOT_SINGLE_ROW', `A single row was requested but the result has ${rows} rows.`, 'Narrow the filters to exactly one row, or drop Accept: application/vnd.pgrst.object+json.');
  err.postgrest = { code: 'PGRST116', message: 'JSON object requested, multiple (or no) rows returned', details: `The result contains ${rows} rows`, hint: null };
  return err;
}
const rowNotFound = (table: string, id: string) =>
  errors.notFound(`Row '${id}' of table '${table}'`, 'The row does not exist or row-level security hides it from this credential.');
const badFullText = (message: string) =>
  new AppError(400, 'INVALID_QUERY', `Invalid full-text query: ${message}.`, 'Use plfts (plain words) or wfts (web-search syntax) for free text; fts expects to_tsquery syntax.');
const filterRequired = () =>
  new AppError(400, 'FILTER_REQUIRED', 'Updating or deleting a whole collection needs at least one filter.', 'Add a filter such as ?id=eq.1, or use the by-id route.');

/** PostgREST's 416 for an offset past the counted rows; the REST wire adds `Content-Range: *\/<total>`. */
export class RangeNotSatisfiable extends AppError {
  readonly total: number;

  constructor(offset: number, total: number) {
    super(416, 'INVALID_RANGE', 'Requested range not satisfiable', `Request an offset below ${total}: the count found ${total} rows.`);
    this.total = total;
    this.postgrest = { code: 'PGRST103', details: `An offset of ${offset} was requested, but there are only ${total} rows.`, hint: null };
  }
}

function tooManyAffected(rows: number): AppError {
  const err = new AppError(
    400,
    'MAX_AFFECTED_EXCEEDED',
    'Query result exceeds max-affected preference constraint',
    'Nothing was changed. Narrow the filters, or raise max-affected in Prefer.',
  );
  err.postgrest = { code: 'PGRST124', details: `The query affects ${rows} rows`, hint: null };
  return err;
}

export interface DataLimits {
  /** Ceiling on one response's JSON (SVC_DATA_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
}

/** Counts of writes: PostgREST reports the affected rows as the total for count=exact and count=estimated (not planned). */
const countsWrites = (prefer: Prefer) => prefer.count === 'exact' || prefer.count === 'estimated';

/** The data API: PostgREST semantics over the app's own database, as the caller's role, through RLS. */
export class DataService {
  readonly #databases: AppDatabases;
  readonly #catalogs: CatalogCache;
  readonly #limits: DataLimits;
  readonly #slots: TransactionSlots;
  /** Set on a service bound to one transaction (in()): every statement runs in it. */
  readonly #tx: DataTransaction | undefined;

  constructor(databases: AppDatabases, catalogs: CatalogCache, limits: DataLimits, bound?: { slots: TransactionSlots; tx: DataTransaction }) {
    this.#databases = databases;
    this.#catalogs = catalogs;
    this.#limits = limits;
    this.#slots = bound?.slots ?? new TransactionSlots();
    this.#tx = bound?.tx;
  }

  /**
   * Opens a transaction on the app's database as the caller, for statements run through in(tx); refused (429) while
   * the app holds its share of the pool's connections in transactions (transaction.ts).
   */
  async begin(appId: string, caller: Caller): Promise<DataTransaction> {
    const pool = this.#databases.pool(appId);
    this.#slots.take(appId, pool.options.max ?? 1);
    try {
      return await DataTransaction.begin(pool, appId, roleFor(caller), () => this.#slots.give(appId));
    } catch (err) {
      this.#slots.give(appId);
      throw err;
    }
  }

  /** This service with every statement run in `tx` (its app's, as its role): the same requests, one transaction. */
  in(tx: DataTransaction): DataService {
    return new DataService(this.#databases, this.#catalogs, this.#limits, { slots: this.#slots, tx });
  }

  async select(req: DataRequest): Promise<DataResult> {
    const query = parsedQuery(req.query);
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const media = negotiate(req.accept);
    const range = parseRange(req.range);
    const offset = query.offset ?? range?.offset ?? 0;
    const limit = query.limit ?? range?.limit;
    // Everything the statement depends on besides the catalog.
    const key = `${req.table}\0${req.query}\0${prefer.count ?? ''}\0${offset}\0${limit ?? ''}\0${media.format}${media.single}${media.stripNulls}\0${this.#limits.maxResponseBytes}`;
    const result = await this.#run(req, prefer, false, (c) =>
      compiledRead(c, key, () => compileRead(c, req.table, query, { count: prefer.count, offset, out: this.#out(media), ...(limit === undefined ? {} : { limit }) })),
    );
    const rows = result.rows;
    const total = prefer.count === undefined ? null : countTotal(prefer.count, result.total, result.planned);
    // PostgREST's status: 416 for an offset past the total, 206 when the rows returned are fewer than the total.
    let status = 200;
    if (total !== null) {
      if (offset > total) throw new RangeNotSatisfiable(offset, total);
      if (rows < total) status = 206;
    }
    return withHeaders({ status, data: bodyOf(result, media), content_range: contentRange(rows, offset, total) }, prefer, 'read');
  }

  /**
   * /rpc/{fn}: the declared function called with the request's arguments as the caller, in one statement whose
   * result is shaped as PostgREST 13 shapes it (rpc.ts); GET and stable functions run in a read-only transaction.
   */
  async rpc(req: RpcRequest): Promise<DataResult> {
    const split = req.get ? splitQueryArgs(req.query) : { values: new Map<string, string>(), rest: req.query };
    const args: RpcArgs = req.get ? { via: 'query', values: split.values } : { via: 'body', body: req.body ?? {} };
    const db = this.#databases.sql(req.appId);
    let resolved;
    try {
      resolved = resolveCall(await functionsOf(await this.#catalogs.get(req.appId), db), req.fn, args);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 404) throw err;
      // Another instance's apply may have declared it: one re-read (rate-limited by the cache).
      resolved = resolveCall(await functionsOf(await this.#catalogs.refresh(req.appId), db), req.fn, args);
    }
    const { fn, single } = resolved;
    checkAccess(fn, req.caller);
    // A held transaction reads and writes: a GET call there could not be kept from writing (a stable function cannot
    // write: its body was checked so).
    if (this.#tx && req.get && fn.volatility === 'volatile') {
      throw errors.validation(`'${fn.name}' may write, so it cannot be called read-only (get) inside a transaction.`);
    }
    const query = parseQuery(split.rest);
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const sets = fn.returns.kind === 'set' || fn.returns.kind === 'table';
    if (prefer.handling === 'strict' && prefer.maxAffected !== undefined && !sets) throw notSetReturning();
    const media = negotiate(req.accept);
    const offset = query.offset ?? 0;
    const call = callSql(fn, args, single);
    const run = { readOnly: req.get || fn.volatility === 'stable', write: !req.get && fn.volatility === 'volatile' };
    const result = await this.#run({ ...req, table: fn.name }, prefer, run, (c) => {
      const table = returnedTable(c, fn);
      if (!table) return valueStatement(fn, call, this.#out(media).maxBytes);
      const source = call.from ? `${call.from} cross join lateral ${call.call} _m` : `${call.call} _m`;
      const out = { ...this.#out(fn.returns.kind === 'row' ? JSON_MEDIA : media), ...(sets ? { maxAffected: maxAffected(prefer) } : {}) };
      if (out.maxAffected === undefined) delete out.maxAffected;
      // A count reads its source a second time: a function that writes would run (and write) twice, so it has none.
      const count = fn.volatility === 'volatile' ? undefined : prefer.count;
      return compileReadFrom(c, table, source, query, { count, offset, out, ...(query.limit === undefined ? {} : { limit: query.limit }) });
    });
    return withHeaders(rpcResult(fn, result, prefer, offset, media), prefer, 'read');
  }

  async get(req: DataRequest, id: string): Promise<DataResult> {
    const query = parsedQuery(req.query);
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const key = `by id\0${req.table}\0${req.query}\0${this.#limits.maxResponseBytes}`;
    const result = await this.#run(req, prefer, false, (c) =>
      compiledById(c, key, id, (value) => compileRead(c, req.table, withId(c, req.table, query, value), { out: this.#out(JSON_MEDIA) })),
    );
    if (result.rows === 0) throw rowNotFound(req.table, id);
    return withHeaders({ status: 200, data: onlyRow(result) }, prefer, 'read');
  }

  async insert(req: DataRequest, body: unknown): Promise<DataResult> {
    const rows = Array.isArray(body) ? body : [body];
    if (!rows.every(isRecord)) throw errors.validation('The body must be a JSON object or an array of objects.');
    const query = parseQuery(req.query);
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const media = negotiate(req.accept);
    const returned = prefer.return ?? 'minimal';
    // PostgREST: a merging upsert that inserted nothing is 200.
    const merging = prefer.resolution === 'merge-duplicates';
    if (rows.length === 0) {
      if (media.single) throw notSingle(0);
      const empty: DataResult = { status: merging ? 200 : 201 };
      if (returned === 'representation') empty.data = bodyOf({ body: media.format === 'csv' ? '\n' : '[]', rows: 0, total: null, abort: '' }, media);
      if (countsWrites(prefer)) empty.content_range = '*/0';
      return withHeaders(empty, prefer, 'insert');
    }
    const out = this.#writeOut(media, returned === 'representation');
    const missingDefault = prefer.missing === 'default';
    let keys: string[] = [];
    const build = (c: Catalog) => {
      let select = query;
      let written = out;
      if (returned === 'headers-only') {
        // The Location of the one inserted row: its primary key, in the table's column order, as PostgREST.
        const table = tableOf(c, req.table);
        keys = table.columns.filter((col) => table.primaryKey.includes(col.name)).map((col) => col.name);
        if (keys.length) {
          select = { ...query, select: keys.map((name) => ({ kind: 'column' as const, name })) };
          written = { ...out, rows: true, format: 'json', stripNulls: false };
        }
      }
      return compileInsert(c, req.table, select, { rows, out: written, missingDefault, ...(prefer.resolution ? { upsert: prefer.resolution } : {}) });
    };
    let result: StatementResult;
    try {
      result = await this.#run(req, prefer, true, build);
    } catch (err) {
      throw missingDefault ? err : await this.#explainNotNull(err, req, insertColumns(query, rows), rows);
    }
    const inserted = result.rows - (result.updated ?? 0);
    const written: DataResult = { status: merging && inserted <= 0 ? 200 : 201 };
    if (out.rows) written.data = bodyOf(result, media);
    if (countsWrites(prefer)) written.content_range = `*/${result.rows}`;
    if (returned === 'headers-only' && keys.length && result.rows === 1) written.location = locationOf(req.table, keys, result.body!);
    return withHeaders(written, prefer, 'insert');
  }

  async update(req: DataRequest, body: unknown, id?: string): Promise<DataResult> {
    if (id !== undefined && req.table === 'rpc') throw rpcMethodRefused('PATCH');
    if (!isRecord(body)) throw errors.validation('The body must be a JSON object of the columns to change.');
    const query = parseQuery(req.query);
    if (id === undefined && query.filters.length === 0) throw filterRequired();
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const media = id === undefined ? negotiate(req.accept) : JSON_MEDIA;
    const out = this.#writeOut(media, (prefer.return ?? (id === undefined ? 'minimal' : 'representation')) === 'representation', maxAffected(prefer));
    const result = await this.#run(req, prefer, true, (c) =>
      compileUpdate(c, req.table, query, body, out, id === undefined ? [] : [idFilter(tableOf(c, req.table), id)], prefer.missing === 'default'),
    );
    if (id !== undefined) return withHeaders(byId(result, req.table, id), prefer, 'update');
    const total = countsWrites(prefer) ? result.rows : '*';
    const content_range = result.rows && total !== 0 ? `0-${result.rows - 1}/${total}` : `*/${total}`;
    return withHeaders({ ...this.#written(out.rows ? 200 : 204, result, out, media), content_range }, prefer, 'update');
  }

  async delete(req: DataRequest, id?: string): Promise<DataResult> {
    if (id !== undefined && req.table === 'rpc') throw rpcMethodRefused('DELETE');
    const query = parseQuery(req.query);
    if (id === undefined && query.filters.length === 0) throw filterRequired();
    const prefer = parsePrefer(req.prefer);
    checkStrict(prefer);
    const media = id === undefined ? negotiate(req.accept) : JSON_MEDIA;
    const out = this.#writeOut(media, prefer.return === 'representation', maxAffected(prefer));
    const result = await this.#run(req, prefer, true, (c) => compileDelete(c, req.table, query, out, id === undefined ? [] : [idFilter(tableOf(c, req.table), id)])).catch(
      (err: unknown) => {
        throw stillReferenced(err) ?? err;
      },
    );
    if (id !== undefined) return withHeaders(byId(result, req.table, id), prefer, 'delete');
    const written = this.#written(out.rows ? 200 : 204, result, out, media);
    if (countsWrites(prefer)) written.content_range = `*/${result.rows}`;
    return withHeaders(written, prefer, 'delete');
  }

  #out(media: Media): OutputOptions {
    if (media === JSON_MEDIA) return { maxBytes: this.#limits.maxResponseBytes, single: false };
    return { maxBytes: this.#limits.maxResponseBytes, single: media.single, format: media.format, stripNulls: media.stripNulls };
  }

  #writeOut(media: Media, rows: boolean, affected?: number): WriteOutput {
    const out: WriteOutput = { ...this.#out(media), rows };
    if (affected !== undefined) out.maxAffected = affected;
    return out;
  }

  #written(status: number, result: StatementResult, out: WriteOutput, media: Media): DataResult {
    if (!out.rows) return { status };
    return { status, data: bodyOf(result, media) };
  }

  /** Compiles against the cached catalog; a name the snapshot lacks, or a stale snapshot, costs one re-read and retry. */
  async #run(req: DataRequest | (RpcRequest & { table: string }), prefer: Prefer, mode: boolean | { write: boolean; readOnly: boolean }, build: (catalog: Catalog) => string): Promise<StatementResult> {
    // The pool itself, not databases.sql(): runAs sends BEGIN, the role, the statement and COMMIT in one round trip.
    const pool = this.#databases.pool(req.appId);
    const role = roleFor(req.caller);
    const access = typeof mode === 'boolean' ? { write: mode } : mode;
    const run = { ...access, rollback: prefer.tx === 'rollback', timezone: prefer.timezone };
    let statement: string;
    try {
      statement = build(await this.#catalogs.get(req.appId));
    } catch (err) {
      if (!(err instanceof CatalogMiss)) throw err;
      statement = build(await this.#catalogs.refresh(req.appId));
    }
    const execute = (text: string) => (this.#tx ? this.#tx.run(req.appId, role, text, run) : runAs(pool, role, text, run));
    let result: StatementResult;
    try {
      result = await execute(statement);
    } catch (err) {
      if (err instanceof StatementAborted) throw this.#refused(err.abort);
      const { code, message } = err as { code?: string; message?: string };
      // The only syntax Postgres parses from client text here is a full-text query.
      if (code === '42601' && message?.includes('tsquery')) throw badFullText(message);
      const typeError = queryTypeError(err);
      if (typeError) throw typeError;
      // 21000: one upsert proposed two rows with the same conflict key ("cannot affect row a second time").
      if (code === '21000' && message) throw new AppError(400, 'VALIDATION_FAILED', message, 'Send each on_conflict key at most once per upsert; merge the duplicate rows first.');
      if (code === '25006' && message) throw readOnlyWrite(message);
      if (code !== '42P01' && code !== '42703') throw err;
      this.#catalogs.invalidate(req.appId);
      // A transaction's failed statement ended it: no second try there.
      if (this.#tx) throw err;
      result = await execute(build(await this.#catalogs.get(req.appId)));
    }
    if (result.abort) throw this.#refused(result.abort);
    return result;
  }

  /**
   * A NOT NULL violation on a column that some rows of the insert lack: without Prefer: missing=default the missing
   * key was written as null, so the fix is that preference (when the column has a default) or the key in every row.
   */
  async #explainNotNull(err: unknown, req: DataRequest, names: readonly string[], rows: readonly Record<string, unknown>[]): Promise<unknown> {
    const { code, column: name, message } = err as { code?: string; column?: string; message?: string };
    if (code !== '23502' || !name || !names.includes(name)) return err;
    const lacking = rows.filter((r) => !Object.hasOwn(r, name)).length;
    if (lacking === 0) return err;
    const column = (await this.#catalogs.get(req.appId)).get(req.table)?.columns.find((c) => c.name === name);
    const hasDefault = column !== undefined && (column.default !== null || column.identity === true);
    const rowsLacking = `${lacking} of the ${rows.length} rows lack the key '${name}', so it was written as null`;
    return new AppError(
      400,
      'VALIDATION_FAILED',
      `${message ?? `null value in column "${name}" violates not-null constraint`}: ${rowsLacking}.`,
      hasDefault
        ? `Send Prefer: missing=default (over MCP: prefer "missing=default") so that a key a row lacks takes the column's default, or give '${name}' in every row.`
        : `'${name}' has no default: give it a value in every row.`,
    );
  }

  /** The error for a result the statement refused: 'SV413' (too large), 'SV406:<rows>' (not one row), 'SV124:<rows>' (max-affected). */
  #refused(abort: string): AppError {
    if (abort === 'SV413') return errors.responseTooLarge(this.#limits.maxResponseBytes);
    const rows = Number(abort.split(':')[1]);
    return abort.startsWith('SV124') ? tooManyAffected(rows) : notSingle(rows);
  }
}

const contentRange = (rows: number, offset: number, total: number | null) => `${rows && total !== 0 ? `${offset}-${offset + rows - 1}` : '*'}/${total ?? '*'}`;

/** A write in a read-only transaction (/rpc's GET or HEAD of a function that writes): PostgREST's 405. */
function readOnlyWrite(message: string): AppError {
  const err = new AppError(405, 'METHOD_NOT_ALLOWED', message, 'Call a function that writes with POST.');
  err.postgrest = { code: '25006', message, details: null, hint: null };
  return err;
}

function notSetReturning(): AppError {
  const message = 'Function must return SETOF or TABLE when max-affected preference is used with handling=strict';
  const err = new AppError(400, 'INVALID_PREFERENCES', message, 'Drop max-affected, or call a function that returns a set.');
  err.postgrest = { code: 'PGRST128', message, details: null, hint: null };
  return err;
}

/** PostgREST's answer of a call: void 204, a scalar bare, one row an object (or null), a set as a read's rows. */
function rpcResult(fn: DeclaredFunction, result: StatementResult, prefer: Prefer, offset: number, media: Media): DataResult {
  const kind = fn.returns.kind;
  if (kind === 'void') return { status: 204 };
  if (kind === 'scalar') return { status: 200, data: new JsonText(result.body ?? 'null'), content_range: prefer.count ? '0-0/1' : '0-0/*' };
  if (kind === 'row') return { status: 200, data: new JsonText(result.rows ? result.body!.slice(1, -1) : 'null'), content_range: prefer.count ? '0-0/1' : '0-0/*' };
  const total = prefer.count === undefined ? null : countTotal(prefer.count, result.total, result.planned);
  const status = total !== null && result.rows < total ? 206 : 200;
  if (!returnsRows(fn)) return { status, data: new JsonText(result.body!), content_range: contentRange(result.rows, 0, total) };
  return { status, data: bodyOf(result, media), content_range: contentRange(result.rows, offset, total) };
}

const returnsRows = (fn: DeclaredFunction) => fn.returns.kind === 'table' || fn.returns.table !== undefined;

/**
 * A delete refused because rows elsewhere still point at the row. Foreign keys are checked without row-level
 * security, so those rows may be ones this caller cannot see (another end user's): say so, and how to change it.
 */
function stillReferenced(err: unknown): AppError | undefined {
  const { code, detail } = err as { code?: string; detail?: string };
  if (code !== '23503') return undefined;
  return errors.conflict(
    detail ?? 'The row is still referenced from another table.',
    'Rows of another table still reference this row; they may be rows this credential cannot see (foreign keys are checked without ' +
      "row-level security). Delete those rows first, or declare references.onDelete 'cascade' or 'set null' on the referencing column with schema_apply.",
  );
}

function byId(result: StatementResult, table: string, id: string): DataResult {
  if (result.rows === 0) throw rowNotFound(table, id);
  return result.body === null ? { status: 204 } : { status: 200, data: onlyRow(result) };
}

/** The one element of a one-row array, as text: `[{...}]` -> `{...}`. */
function onlyRow(result: StatementResult): JsonText {
  return new JsonText(result.body!.slice(1, -1));
}

/** The body in the negotiated media type: the rows, or the one row of a single-object response. */
function bodyOf(result: StatementResult, media: Media): JsonText {
  if (media === JSON_MEDIA) return new JsonText(result.body!);
  const text = media.single ? result.body!.slice(1, -1) : result.body!;
  return media.contentType ? new MediaText(text, media.contentType, media.format === 'json') : new JsonText(text);
}

/** Preference-Applied, when the request gave preferences this operation honored. */
function withHeaders(result: DataResult, prefer: Prefer, op: Operation): DataResult {
  const applied = preferenceApplied(prefer, op);
  if (applied) result.headers = new RestHeaders({ 'Preference-Applied': applied });
  return result;
}

/**
 * PostgREST's Location: `/<table>?<key>=eq.<value>` for each primary key column (`is.null` for a null), the values
 * as JSON renders them (numbers with all their digits) and percent-encoded as in a query string.
 */
function locationOf(table: string, keys: readonly string[], body: string): string {
  const parse = JSON.parse as (text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown) => unknown;
  const row = (parse(body, (_key, value, context) => (typeof value === 'number' ? context.source : value)) as Record<string, unknown>[])[0]!;
  const pairs = keys.map((k) => {
    const v = row[k];
    const value = v === null || v === undefined ? 'is.null' : `eq.${typeof v === 'object' ? JSON.stringify(v) : String(v)}`;
    return `${queryEncode(k)}=${queryEncode(value)}`;
  });
  return `/${table}?${pairs.join('&')}`;
}

/** Percent-encoding of a query string component, leaving only letters, digits and -_.~ as they are. */
function queryEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function withId(catalog: Catalog, table: string, query: ParsedQuery, id: string): ParsedQuery {
  return { ...query, filters: [...query.filters, idFilter(tableOf(catalog, table), id)] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
