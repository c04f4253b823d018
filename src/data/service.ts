import { AppError, errors } from '../core/errors.ts';
import { JsonText } from '../core/json-text.ts';
import type { Caller } from '../core/define.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import type { CatalogCache } from '../schema/catalog-cache.ts';
import type { Catalog } from '../schema/catalog.ts';
import { CatalogMiss, compileRead, idFilter, tableOf } from './compile.ts';
import type { OutputOptions } from './output.ts';
import { compileDelete, compileInsert, compileUpdate, insertColumns, type WriteOutput } from './write.ts';
import { roleFor, runAs, StatementAborted, type StatementResult } from './executor.ts';
import { parsePrefer, parseRange, type Prefer } from './prefer.ts';
import { parseQuery, type ParsedQuery } from './query.ts';

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

export interface DataResult {
  status: number;
  /** Rows, one row (single-object responses and by-id routes), or nothing (return=minimal); JSON text from Postgres. */
  data?: JsonText;
  content_range?: string;
}

const OBJECT_MEDIA_TYPE = 'application/vnd.pgrst.object+json';
const wantsObject = (accept: string | undefined) => accept?.includes(OBJECT_MEDIA_TYPE) ?? false;

const notSingle = (rows: number) =>
  new AppError(406, 'NOT_SINGLE_ROW', `A single row was requested but the result has ${rows} rows.`, 'Narrow the filters to exactly one row, or drop Accept: application/vnd.pgrst.object+json.');
const rowNotFound = (table: string, id: string) =>
  errors.notFound(`Row '${id}' of table '${table}'`, 'The row does not exist or row-level security hides it from this credential.');
const badFullText = (message: string) =>
  new AppError(400, 'INVALID_QUERY', `Invalid full-text query: ${message}.`, 'Use plfts (plain words) or wfts (web-search syntax) for free text; fts expects to_tsquery syntax.');
const filterRequired = () =>
  new AppError(400, 'FILTER_REQUIRED', 'Updating or deleting a whole collection needs at least one filter.', 'Add a filter such as ?id=eq.1, or use the by-id route.');

export interface DataLimits {
  /** Ceiling on one response's JSON (SVC_DATA_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
}

/** The data API: PostgREST semantics over the app's own database, as the caller's role, through RLS. */
export class DataService {
  readonly #databases: AppDatabases;
  readonly #catalogs: CatalogCache;
  readonly #limits: DataLimits;

  constructor(databases: AppDatabases, catalogs: CatalogCache, limits: DataLimits) {
    this.#databases = databases;
    this.#catalogs = catalogs;
    this.#limits = limits;
  }

  async select(req: DataRequest): Promise<DataResult> {
    const query = parseQuery(req.query);
    const prefer = parsePrefer(req.prefer, 'representation');
    const range = parseRange(req.range);
    const offset = query.offset ?? range?.offset ?? 0;
    const limit = query.limit ?? range?.limit;
    const out = this.#out(wantsObject(req.accept));
    const result = await this.#run(req, false, (c) => compileRead(c, req.table, query, { count: prefer.count, offset, out, ...(limit === undefined ? {} : { limit }) }));
    const content_range = `${result.rows ? `${offset}-${offset + result.rows - 1}` : '*'}/${result.total ?? '*'}`;
    return { status: 200, data: out.single ? onlyRow(result) : new JsonText(result.body!), content_range };
  }

  async get(req: DataRequest, id: string): Promise<DataResult> {
    const query = parseQuery(req.query);
    const result = await this.#run(req, false, (c) => compileRead(c, req.table, withId(c, req.table, query, id), { out: this.#out(false) }));
    if (result.rows === 0) throw rowNotFound(req.table, id);
    return { status: 200, data: onlyRow(result) };
  }

  async insert(req: DataRequest, body: unknown): Promise<DataResult> {
    const rows = Array.isArray(body) ? body : [body];
    if (!rows.every(isRecord)) throw errors.validation('The body must be a JSON object or an array of objects.');
    const query = parseQuery(req.query);
    const prefer = parsePrefer(req.prefer, 'minimal');
    if (rows.length === 0) return { status: 201, ...(prefer.return === 'representation' ? { data: new JsonText('[]') } : {}) };
    const out = this.#writeOut(prefer, req.accept);
    const missingDefault = prefer.missing === 'default';
    try {
      const result = await this.#run(req, true, (c) => compileInsert(c, req.table, query, { rows, out, missingDefault, ...(prefer.resolution ? { upsert: prefer.resolution } : {}) }));
      return this.#written(201, result, out);
    } catch (err) {
      throw missingDefault ? err : await this.#explainNotNull(err, req, insertColumns(query, rows), rows);
    }
  }

  async update(req: DataRequest, body: unknown, id?: string): Promise<DataResult> {
    if (!isRecord(body)) throw errors.validation('The body must be a JSON object of the columns to change.');
    const query = parseQuery(req.query);
    if (id === undefined && query.filters.length === 0) throw filterRequired();
    const prefer = parsePrefer(req.prefer, id === undefined ? 'minimal' : 'representation');
    const out = this.#writeOut(prefer, id === undefined ? req.accept : undefined);
    const result = await this.#run(req, true, (c) => compileUpdate(c, req.table, query, body, out, id === undefined ? [] : [idFilter(tableOf(c, req.table), id)]));
    if (id !== undefined) return byId(result, req.table, id);
    return this.#written(out.rows ? 200 : 204, result, out);
  }

  async delete(req: DataRequest, id?: string): Promise<DataResult> {
    const query = parseQuery(req.query);
    if (id === undefined && query.filters.length === 0) throw filterRequired();
    const prefer = parsePrefer(req.prefer, 'minimal');
    const out = this.#writeOut(prefer, id === undefined ? req.accept : undefined);
    const result = await this.#run(req, true, (c) => compileDelete(c, req.table, query, out, id === undefined ? [] : [idFilter(tableOf(c, req.table), id)])).catch(
      (err: unknown) => {
        throw stillReferenced(err) ?? err;
      },
    );
    if (id !== undefined) return byId(result, req.table, id);
    return this.#written(out.rows ? 200 : 204, result, out);
  }

  #out(single: boolean): OutputOptions {
    return { maxBytes: this.#limits.maxResponseBytes, single };
  }

  #writeOut(prefer: Prefer, accept: string | undefined): WriteOutput {
    return { ...this.#out(wantsObject(accept)), rows: prefer.return === 'representation' };
  }

  #written(status: number, result: StatementResult, out: WriteOutput): DataResult {
    if (!out.rows) return { status };
    return { status, data: out.single ? onlyRow(result) : new JsonText(result.body!) };
  }

  /** Compiles against the cached catalog; a name the snapshot lacks, or a stale snapshot, costs one re-read and retry. */
  async #run(req: DataRequest, write: boolean, build: (catalog: Catalog) => string): Promise<StatementResult> {
    const pool = this.#databases.pool(req.appId);
    const role = roleFor(req.caller);
    let statement: string;
    try {
      statement = build(await this.#catalogs.get(req.appId));
    } catch (err) {
      if (!(err instanceof CatalogMiss)) throw err;
      statement = build(await this.#catalogs.refresh(req.appId));
    }
    let result: StatementResult;
    try {
      result = await runAs(pool, role, statement, { write });
    } catch (err) {
      if (err instanceof StatementAborted) throw this.#refused(err.abort);
      const { code, message } = err as { code?: string; message?: string };
      // The only syntax Postgres parses from client text here is a full-text query.
      if (code === '42601' && message?.includes('tsquery')) throw badFullText(message);
      // 21000: one upsert proposed two rows with the same conflict key ("cannot affect row a second time").
      if (code === '21000' && message) throw new AppError(400, 'VALIDATION_FAILED', message, 'Send each on_conflict key at most once per upsert; merge the duplicate rows first.');
      if (code !== '42P01' && code !== '42703') throw err;
      this.#catalogs.invalidate(req.appId);
      result = await runAs(pool, role, build(await this.#catalogs.get(req.appId)), { write });
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

  /** The error for a result the statement refused: 'SV413' (too large) or 'SV406:<rows>' (not one row). */
  #refused(abort: string): AppError {
    if (abort === 'SV413') return errors.responseTooLarge(this.#limits.maxResponseBytes);
    return notSingle(Number(abort.split(':')[1]));
  }
}

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

function withId(catalog: Catalog, table: string, query: ParsedQuery, id: string): ParsedQuery {
  return { ...query, filters: [...query.filters, idFilter(tableOf(catalog, table), id)] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
