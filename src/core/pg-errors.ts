import { AppError, errors } from './errors.ts';

interface PgLikeError {
  code?: unknown;
  detail?: unknown;
  constraint?: unknown;
  message?: unknown;
}

/** The one place Postgres error codes become API errors; anything unmapped stays a 500. */
export function mapPgError(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as PgLikeError;
  if (typeof e.code !== 'string' || e.code.length !== 5) return undefined;
  const detail = typeof e.detail === 'string' ? e.detail : undefined;
  // Class 22 is data exceptions: a value the client sent does not fit its column.
  if (e.code.startsWith('22')) return errors.validation(typeof e.message === 'string' ? e.message : 'Invalid value.');
  switch (e.code) {
    case '23505':
      return errors.conflict(detail ?? 'A row with this unique value already exists.', 'Use a different value or update the existing row.');
    case '23503':
      return errors.conflict(detail ?? 'A referenced row does not exist or is still referenced.', 'Create the referenced row first, or delete the rows that reference this one.');
    case '23502':
    case '23514':
      return errors.validation(typeof e.message === 'string' ? e.message : 'Invalid value.');
    case '42501':
      return new AppError(403, 'FORBIDDEN', typeof e.message === 'string' ? e.message : 'Permission denied.', 'This credential may not do this; row-level security or table access forbids it.');
    case '3D000':
      // The app's database is gone: the app was deleted (possibly by another instance a moment ago).
      return errors.notFound('App', 'List your apps with apps_list (GET /apps) to find a valid app_id.');
    case '57014':
      return new AppError(504, 'STATEMENT_TIMEOUT', 'The statement took too long and was cancelled.', 'Narrow the query (filters, limit) or add an index.');
    case '53300':
      return errors.unavailable('The database has no free connections.');
    default:
      return undefined;
  }
}
