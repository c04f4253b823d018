import { constants } from 'node:buffer';
import { AppError, errors } from './errors.ts';

interface PgLikeError {
  code?: unknown;
  detail?: unknown;
  constraint?: unknown;
  message?: unknown;
}

/** Node and pg failures of the connection itself (not of the statement): the database is, for now, out of reach. */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const CONNECTION_ERROR_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end',
];

/** The one place Postgres (and connection) errors become API errors; anything unmapped stays a 500. */
export function mapPgError(err: unknown): AppError | undefined {
  const mapped = mapPgErrorCode(err);
  const e = err as PgLikeError;
  // PostgREST clients read the SQLSTATE and Postgres's detail (src/core/error-shapes.ts, the data API's shape).
  if (mapped && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) {
    mapped.postgrest = { code: e.code, details: typeof e.detail === 'string' ? e.detail : null };
  }
  return mapped;
}

function mapPgErrorCode(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as PgLikeError;
  if (isConnectionFailure(e)) return errors.unavailable('The database connection was lost or none was free in time.');
  // A result too large for one JavaScript string (a last line of defence: data API queries cap their size in SQL).
  if (e.code === 'ERR_STRING_TOO_LONG') return errors.responseTooLarge(constants.MAX_STRING_LENGTH);
  if (typeof e.code !== 'string' || !/^[0-9A-Z]{5}$/.test(e.code)) return undefined;
  const detail = typeof e.detail === 'string' ? e.detail : undefined;
  const message = typeof e.message === 'string' ? e.message : 'Invalid value.';
  // Class 22 is data exceptions: a value the client sent does not fit its column.
  if (e.code.startsWith('22')) return errors.validation(message);
  // A passing outage.
  if (isOutageCode(e.code)) return errors.unavailable('The database is restarting or the connection was lost.');
  switch (e.code) {
    case '23505':
      return errors.conflict(detail ?? 'A row with this unique value already exists.', 'Use a different value or update the existing row.');
    case '23503':
      return errors.conflict(detail ?? 'A referenced row does not exist or is still referenced.', 'Create the referenced row first, or delete the rows that reference this one.');
    case '23502':
    case '23514':
      return errors.validation(message);
    case '42501':
      return new AppError(403, 'FORBIDDEN', message, 'This credential may not do this; row-level security or table access forbids it.');
    case '3D000':
      // The app's database is gone: the app was deleted (possibly by another instance a moment ago).
      return errors.notFound('App', 'List your apps with apps_list (GET /apps) to find a valid app_id.');
    case '40P01':
    case '40001':
      // A deadlock or a serialization failure: the other transaction went through; this one may simply be retried.
      return errors.unavailable('The write collided with a concurrent one and was rolled back.');
    case '57014':
      return new AppError(504, 'STATEMENT_TIMEOUT', 'The statement took too long and was cancelled.', 'Narrow the query (filters, limit) or add an index.');
    case '53300':
      return errors.unavailable('The database has no free connections.');
    case '54001':
      // stack depth limit exceeded: a value nested too deeply for Postgres to parse.
      return errors.validation('A value is nested too deeply.');
    default:
      return undefined;
  }
}

/**
 * Whether `err` is the database going away (its connection lost or cut, the server shutting down or not yet accepting):
 * a passing outage, not a fault of the statement.
 */
export function isDatabaseOutage(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as PgLikeError;
  return isConnectionFailure(e) || (typeof e.code === 'string' && isOutageCode(e.code));
}

/** Class 08 (connection exception) and 57P01-57P03 (shutdown, crash, not yet accepting). */
function isOutageCode(code: string): boolean {
  return code.startsWith('08') || /^57P0[123]$/.test(code);
}

function isConnectionFailure(e: PgLikeError): boolean {
  if (typeof e.code === 'string' && CONNECTION_ERROR_CODES.has(e.code)) return true;
  return typeof e.code !== 'string' && typeof e.message === 'string' && CONNECTION_ERROR_MESSAGES.some((m) => (e.message as string).startsWith(m));
}
