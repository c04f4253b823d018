import { AppError } from '../core/errors.ts';

/**
 * Class 42 errors a data statement can meet only through what the client asked for: an operator or aggregate the
 * column's type lacks (`cs` on text, `sum` of text), a cast to an unknown type, a grouping that does not hold, more
 * than Postgres's 1664 output columns (54011, from many `*`). The
 * statement is compiled from the request alone, so they are the request's fault: 400 with Postgres's SQLSTATE.
 */
const CLIENT_CAUSED = new Set(['42883', '42804', '42803', '42704', '42846', '42725', '42P18', '42P10', '54011']);

export function queryTypeError(err: unknown): AppError | undefined {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !CLIENT_CAUSED.has(code) || typeof message !== 'string') return undefined;
  const error = new AppError(400, 'INVALID_QUERY', message, 'Use operators, casts and aggregates that fit the column types (schema_get lists them).');
  error.postgrest = { code, message, details: null, hint: null };
  return error;
}
