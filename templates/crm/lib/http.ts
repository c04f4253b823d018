// Requests and answers of the CRM's functions: JSON in, JSON out, and one error shape { error: { code, message } }.
import type { Ctx, DataResult, Handler } from './ctx.ts';

/** A refusal a function answers with: its status, a stable code and a message for the person. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const json = (body: unknown, status = 200): Response => Response.json(body, { status });

export const fail = (status: number, code: string, message: string): Response => json({ error: { code, message } }, status);

/** A platform refusal (ctx.* rejected with code and status) keeps its code; anything else is the function's bug. */
function answerError(err: unknown): Response {
  if (err instanceof HttpError) return fail(err.status, err.code, err.message);
  const e = err as { code?: unknown; status?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && typeof e.status === 'number') return fail(e.status >= 500 ? 502 : e.status, e.code, String(e.message));
  console.error(err);
  return fail(500, 'internal', 'The CRM function failed; its log says why.');
}

/** The function's default export: refusals thrown anywhere inside become answers. */
export function handler(fn: Handler): Handler {
  return async (request, ctx) => {
    try {
      return await fn(request, ctx);
    } catch (err) {
      return answerError(err);
    }
  };
}

/** The request's JSON object body (an empty body is {}). */
export async function body(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new HttpError(400, 'invalid_body', 'The body must be a JSON object.');
  return parsed as Record<string, unknown>;
}

/** The request's query string. */
export const params = (request: Request): URLSearchParams => new URL(request.url).searchParams;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A text field: trimmed, required unless `optional`, at most `max` characters. */
export function text(input: Record<string, unknown>, key: string, opts: { optional: true; max?: number }): string | undefined;
export function text(input: Record<string, unknown>, key: string, opts?: { optional?: false; max?: number }): string;
export function text(input: Record<string, unknown>, key: string, opts: { optional?: boolean; max?: number } = {}): string | undefined {
  const value = input[key];
  if (value === undefined || value === null || value === '') {
    if (opts.optional) return undefined;
    throw new HttpError(400, 'missing_field', `${key} is required.`);
  }
  if (typeof value !== 'string') throw new HttpError(400, 'invalid_field', `${key} must be a string.`);
  const trimmed = value.trim();
  if (trimmed.length > (opts.max ?? 10_000)) throw new HttpError(400, 'invalid_field', `${key} is longer than ${opts.max ?? 10_000} characters.`);
  if (!trimmed && !opts.optional) throw new HttpError(400, 'missing_field', `${key} is required.`);
  return trimmed || undefined;
}

/** A uuid field (or query parameter), required unless `optional`. */
export function uuid(input: Record<string, unknown> | URLSearchParams, key: string, opts: { optional: true }): string | undefined;
export function uuid(input: Record<string, unknown> | URLSearchParams, key: string, opts?: { optional?: false }): string;
export function uuid(input: Record<string, unknown> | URLSearchParams, key: string, opts: { optional?: boolean } = {}): string | undefined {
  const value = input instanceof URLSearchParams ? input.get(key) : input[key];
  if (value === undefined || value === null || value === '') {
    if (opts.optional) return undefined;
    throw new HttpError(400, 'missing_field', `${key} is required.`);
  }
  if (typeof value !== 'string' || !UUID.test(value)) throw new HttpError(400, 'invalid_field', `${key} must be a uuid.`);
  return value.toLowerCase();
}

/** One of the listed values. */
export function oneOf<T extends string>(input: Record<string, unknown>, key: string, values: readonly T[], fallback?: T): T {
  const value = input[key] ?? fallback;
  if (typeof value === 'string' && (values as readonly string[]).includes(value)) return value as T;
  throw new HttpError(400, 'invalid_field', `${key} must be one of ${values.join(', ')}.`);
}

/** The rows of a data call, or a 502 naming what failed (the platform's message kept). */
export function rows<T>(result: DataResult<T[]>, what: string): T[] {
  if (result.error || !result.data) throw new HttpError(result.status >= 500 || result.status < 400 ? 502 : result.status, result.error?.code ?? 'data_error', `${what}: ${result.error?.message ?? 'no rows'}`);
  return result.data;
}

/** The first row of a data call, or 404 naming what was missing. */
export function one<T>(result: DataResult<T[]>, what: string): T {
  const [row] = rows(result, what);
  if (!row) throw new HttpError(404, 'not_found', `${what} not found.`);
  return row;
}

/** A PostgREST filter value: `eq(id)` is `eq.<id>` with the value escaped for the query string. */
export const eq = (value: string | number | boolean): string => `eq.${encodeURIComponent(String(value))}`;

/** `in.(a,b)` of quoted values, escaped for the query string. */
export const inList = (values: readonly string[]): string => `in.(${values.map((v) => encodeURIComponent(`"${v.replaceAll('"', '\\"')}"`)).join(',')})`;

/** The signed-in end user, or 401. */
export function requireUser(ctx: Ctx): string {
  if (!ctx.user) throw new HttpError(401, 'sign_in_required', 'Sign in first: send the end user\'s access token as Authorization: Bearer.');
  return ctx.user.id;
}
