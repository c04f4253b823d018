// Every error body the platform sends is rendered here, in the shape of the route family that sends it.
import { AppError, envelope, type ErrorEnvelope } from './errors.ts';
import type { ErrorShape } from './define.ts';

/** OpenAI's error body, as the openai SDK and every OpenAI-compatible client read it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string | null; param?: string | null; details?: unknown; balance_usd?: number; credit_floor_usd?: number };
}

/**
 * An error that came from an upstream vendor and is relayed with the vendor's own type, code and param (an
 * OpenAI-compatible upstream's 4xx), so that a client sees what the upstream said.
 */
export class RelayedError extends AppError {
  readonly type: string;
  readonly vendorCode: string | null;
  readonly param: string | null;

  constructor(status: number, code: string, message: string, remediation: string, vendor: { type: string; code: string | null; param: string | null }) {
    super(status, code, message, remediation);
    this.type = vendor.type;
    this.vendorCode = vendor.code;
    this.param = vendor.param;
  }
}

/** Our codes whose OpenAI-world name differs from their lower-cased form. */
const OPENAI_CODES: Readonly<Record<string, string>> = {
  VALIDATION_FAILED: 'invalid_request',
  INVALID_JSON: 'invalid_request',
  AUTH_REQUIRED: 'missing_credentials',
  // The spec's OpenAI-shaped table (Meetings): 401 missing_credentials for a missing or an invalid credential alike.
  AUTH_INVALID_TOKEN: 'missing_credentials',
  FORBIDDEN: 'not_authorized',
  // The only resource an app-scoped OpenAI-shaped route looks up before its handler is the app (invoke's authorizeApp).
  RESOURCE_NOT_FOUND: 'app_not_found',
};

function openAiType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** The first field a validation error names: OpenAI's `param`. */
function paramOf(err: AppError): string | null {
  const first = Array.isArray(err.details) ? (err.details[0] as { path?: unknown } | undefined) : undefined;
  return typeof first?.path === 'string' && first.path !== '' ? first.path : null;
}

export function openAiError(err: AppError): OpenAiErrorBody {
  if (err instanceof RelayedError) return { error: { message: err.message, type: err.type, code: err.vendorCode, param: err.param } };
  // The remediation is part of the message: OpenAI clients show only `message`.
  const message = err.remediation ? `${err.message} ${err.remediation}` : err.message;
  const body: OpenAiErrorBody['error'] = { message, type: openAiType(err.status), code: OPENAI_CODES[err.code] ?? err.code.toLowerCase(), param: paramOf(err) };
  if (err.details !== undefined) body.details = err.details;
  // The spec's 402 names the balance beside the code: error.balance_usd and error.credit_floor_usd.
  const { balance_usd, credit_floor_usd } = (err.details ?? {}) as { balance_usd?: number; credit_floor_usd?: number };
  if (err.status === 402 && typeof balance_usd === 'number') Object.assign(body, { balance_usd, credit_floor_usd: credit_floor_usd ?? 0 });
  return { error: body };
}

/**
 * The people routes' body (spec: Errors, People): `{ error: "<code>" }`, with `slot` on the two slot errors. Codes the
 * spec does not list (validation, app paused, ...) add `message` and `details`; a 502 is a transient description.
 */
export interface PeopleErrorBody {
  error: string;
  slot?: string;
  message?: string;
  details?: unknown;
}

/** Our codes under the names the people table gives them. */
const PEOPLE_CODES: Readonly<Record<string, string>> = {
  AUTH_REQUIRED: 'forbidden',
  AUTH_INVALID_TOKEN: 'forbidden',
  FORBIDDEN: 'forbidden',
  // The only resource an app-scoped people route looks up before its handler is the app.
  RESOURCE_NOT_FOUND: 'app_not_found',
};

/** The people table's codes: their bodies are exactly `{ error }` (and `slot`), nothing more. */
const PEOPLE_TABLE = new Set([
  'insufficient_credits',
  'forbidden',
  'app_not_found',
  'people_disabled',
  'people_unavailable',
  'provider_not_registered',
  'provider_action_unsupported',
]);

export function peopleError(err: AppError): { status: number; body: PeopleErrorBody } {
  // Authentication rule 3: whoever is not the app's owner gets 403, without a credential or with an invalid one too.
  const status = err.status === 401 ? 403 : err.status;
  if (status === 502) return { status, body: { error: `${err.message} ${err.remediation}` } };
  const code = PEOPLE_CODES[err.code] ?? err.code.toLowerCase();
  if (!PEOPLE_TABLE.has(code)) {
    const body: PeopleErrorBody = { error: code, message: err.message };
    if (err.details !== undefined) body.details = err.details;
    return { status, body };
  }
  const slot = (err.details as { slot?: unknown } | undefined)?.slot;
  return { status, body: typeof slot === 'string' ? { error: code, slot } : { error: code } };
}

/**
 * The data API's body: PostgREST's `code`, `message`, `details` and `hint` at the top level (postgrest-js and
 * supabase-js read them: `error.message`, `throwOnError()`), with our envelope beside them for other clients.
 */
export interface PostgrestErrorBody extends ErrorEnvelope {
  code: string;
  message: string;
  details: unknown;
  hint: string | null;
}

/** Our codes under PostgREST's names, and the status PostgREST answers with where it differs from ours. */
const POSTGREST_CODES: Readonly<Record<string, { code: string; status?: number }>> = {
  NOT_SINGLE_ROW: { code: 'PGRST116' },
  INVALID_QUERY: { code: 'PGRST100' },
  QUERY_TOO_COMPLEX: { code: 'PGRST100' },
  INVALID_RANGE: { code: 'PGRST103' },
  UNKNOWN_RELATIONSHIP: { code: 'PGRST200' },
  AMBIGUOUS_RELATIONSHIP: { code: 'PGRST201', status: 300 },
  UNKNOWN_COLUMN: { code: '42703' },
  AUTH_INVALID_TOKEN: { code: 'PGRST301' },
};

export function postgrestError(err: AppError, baseUrl: string): { status: number; body: PostgrestErrorBody } {
  const named = POSTGREST_CODES[err.code];
  const code = err.postgrest?.code ?? named?.code ?? err.code;
  const pg = err.postgrest;
  const hint = pg && 'hint' in pg ? (pg.hint ?? null) : err.remediation || null;
  return { status: named?.status ?? err.status, body: { code, message: pg?.message ?? err.message, details: pg?.details ?? null, hint, ...envelope(err, baseUrl) } };
}

/**
 * The status and body of an error in the shape of the route family that sends it; the envelope's documentation_url
 * (standard and PostgREST shapes) starts with `baseUrl`.
 */
export function errorWire(
  err: AppError,
  baseUrl: string,
  shape: ErrorShape = 'standard',
): { status: number; body: ErrorEnvelope | OpenAiErrorBody | PeopleErrorBody | PostgrestErrorBody | GotrueErrorBody | StorageErrorBody | RealtimeErrorBody } {
  if (shape === 'people') return peopleError(err);
  if (shape === 'realtime') return { status: err.status, body: realtimeError(err) };
  if (shape === 'storage') return storageError(err);
  if (shape === 'gotrue') return gotrueError(err);
  if (shape === 'postgrest') return postgrestError(err, baseUrl);
  return { status: err.status, body: shape === 'openai' ? openAiError(err) : envelope(err, baseUrl) };
}

/** GoTrue's error body as auth-js reads it: `code` (API version 2024-01-01 on), `error_code` before it, `msg`/`message`. */
export interface GotrueErrorBody {
  code: string;
  error_code: string;
  msg: string;
  message: string;
  weak_password?: { reasons: string[] };
}

/** Our codes as GoTrue names them, with GoTrue's status for each (auth-js maps the codes to its error classes). */
const GOTRUE_CODES: Readonly<Record<string, { code: string; status: number }>> = {
  VALIDATION_FAILED: { code: 'validation_failed', status: 400 },
  INVALID_JSON: { code: 'bad_json', status: 400 },
  AUTH_REQUIRED: { code: 'no_authorization', status: 401 },
  AUTH_INVALID_TOKEN: { code: 'bad_jwt', status: 403 },
  AUTH_INVALID_CREDENTIALS: { code: 'invalid_credentials', status: 400 },
  FORBIDDEN: { code: 'bad_jwt', status: 403 },
  CONFLICT: { code: 'user_already_exists', status: 422 },
  RESOURCE_NOT_FOUND: { code: 'user_not_found', status: 404 },
  RATE_LIMITED: { code: 'over_request_rate_limit', status: 429 },
};

function gotrueError(err: AppError): { status: number; body: GotrueErrorBody } {
  const named = err.gotrue ?? GOTRUE_CODES[err.code];
  const code = named?.code ?? (err.status >= 500 ? 'unexpected_failure' : err.code.toLowerCase());
  const status = named?.status ?? err.status;
  const body: GotrueErrorBody = { code, error_code: code, msg: err.message, message: err.message };
  if (err.gotrue?.weakPassword) body.weak_password = { reasons: err.gotrue.weakPassword };
  return { status, body };
}

/** Supabase Storage's error body as storage-js reads it: `statusCode` (the status as text), `code`, `error`, `message`. */
export interface StorageErrorBody {
  statusCode: string;
  code: string;
  error: string;
  message: string;
}

/** Our codes as Supabase Storage names them, with its legacy `error` word and the status we answer with. */
const STORAGE_CODES: Readonly<Record<string, { code: string; error: string; status?: number }>> = {
  FILE_TOO_LARGE: { code: 'EntityTooLarge', error: 'Payload too large', status: 413 },
  STORAGE_QUOTA_EXCEEDED: { code: 'EntityTooLarge', error: 'Payload too large', status: 413 },
  UPLOAD_TOO_LARGE: { code: 'EntityTooLarge', error: 'Payload too large', status: 413 },
  CONTENT_TYPE_NOT_ALLOWED: { code: 'InvalidMimeType', error: 'invalid_mime_type', status: 415 },
  RESOURCE_NOT_FOUND: { code: 'NoSuchKey', error: 'not_found' },
  AUTH_REQUIRED: { code: 'InvalidJWT', error: 'Unauthorized' },
  AUTH_INVALID_TOKEN: { code: 'InvalidJWT', error: 'Unauthorized' },
  FORBIDDEN: { code: 'AccessDenied', error: 'Unauthorized' },
  CONFLICT: { code: 'Duplicate', error: 'Duplicate' },
  VALIDATION_FAILED: { code: 'InvalidRequest', error: 'InvalidRequest' },
  INVALID_JSON: { code: 'InvalidRequest', error: 'InvalidRequest' },
  RANGE_NOT_SATISFIABLE: { code: 'InvalidRange', error: 'InvalidRange' },
  STORAGE_PENDING_LIMIT_EXCEEDED: { code: 'SlowDown', error: 'SlowDown' },
  RATE_LIMITED: { code: 'SlowDown', error: 'SlowDown' },
};

function storageError(err: AppError): { status: number; body: StorageErrorBody } {
  const named = STORAGE_CODES[err.code];
  const status = named?.status ?? err.status;
  const code = err.storage?.code ?? named?.code ?? (status >= 500 ? 'InternalError' : err.code);
  const error = err.storage?.error ?? named?.error ?? code;
  return { status, body: { statusCode: String(status), code, error, message: err.message } };
}

/**
 * Supabase Realtime's error body (its API's `{ message }`, which realtime-js's httpSend shows), with our code beside it;
 * the remediation is part of the message, the only text the client shows.
 */
export interface RealtimeErrorBody {
  code: string;
  message: string;
}

function realtimeError(err: AppError): RealtimeErrorBody {
  return { code: err.code, message: err.remediation ? `${err.message} ${err.remediation}` : err.message };
}
