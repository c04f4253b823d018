import type { ZodError } from 'zod';

/** The single internal error type; each transport renders it in its documented shape. */
export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly remediation: string;
  readonly details: unknown;
  /**
   * What PostgREST would send for this error (its code, a Postgres SQLSTATE or PGRSTnnn, and where given its own
   * message, details and hint), for the top level of the data API's body; our envelope keeps ours.
   */
  postgrest?: { code: string; message?: string; details?: unknown; hint?: string | null };
  /** What GoTrue would send for this error (its error code, its status where it differs, a weak password's reasons). */
  gotrue?: { code: string; status?: number; weakPassword?: string[] };
  /** What Supabase Storage would send for this error: its code (NoSuchKey, Duplicate, ...) and legacy `error` word. */
  storage?: { code: string; error?: string };
  /**
   * The area (toolset) whose section of the guide documents this error: invoke() names the area of the tool whose
   * call failed, a raw route its own. Unnamed: the error is not one area's (an unknown route, a body that is not
   * JSON), and documentation_url is the guide itself.
   */
  area?: string;

  constructor(status: number, code: string, message: string, remediation: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.remediation = remediation;
    this.details = details;
  }

  /** Names the area whose guide section documents this error, unless one is named already (the innermost wins). */
  inArea(area: string | undefined): this {
    if (area !== undefined) this.area ??= area;
    return this;
  }
}

/** Where the guide is served: GET /llms.txt, and an area's section at /llms.txt?area=<area>. */
export const guidePath = (area?: string): string => (area === undefined ? '/llms.txt' : `/llms.txt?area=${encodeURIComponent(area)}`);

export interface ErrorEnvelope {
  error: { code: string; message: string; remediation: string; documentation_url: string; details?: unknown };
}

/** The standard envelope; documentation_url is the guide section of the error's area (the guide when it has none). */
export function envelope(err: AppError, baseUrl: string): ErrorEnvelope {
  const body: ErrorEnvelope['error'] = { code: err.code, message: err.message, remediation: err.remediation, documentation_url: baseUrl + guidePath(err.area) };
  if (err.details !== undefined) body.details = err.details;
  return { error: body };
}

export const errors = {
  validation: (message: string, details?: unknown) =>
    new AppError(400, 'VALIDATION_FAILED', message, 'Fix the named field and send the request again.', details),
  invalidJson: () =>
    new AppError(400, 'INVALID_JSON', 'The request body is not valid JSON.', 'Send a well-formed JSON body with Content-Type: application/json.'),
  authRequired: () =>
    new AppError(401, 'AUTH_REQUIRED', 'This route needs a credential.', 'Send Authorization: Bearer <key or token>.'),
  invalidToken: () =>
    new AppError(401, 'AUTH_INVALID_TOKEN', 'The credential is invalid, revoked or expired.', 'Use a current key or sign in again for a fresh token.'),
  wrongCredential: (accepted: readonly string[]) =>
    new AppError(403, 'FORBIDDEN', `This route does not accept this kind of credential; it accepts: ${accepted.join(', ')}.`, 'Call it with one of the accepted credentials.'),
  roleTooLow: (required: string, role: string) =>
    new AppError(
      403,
      'FORBIDDEN_ROLE',
      `This call needs the role ${required} or higher in the account; the credential has ${role}.`,
      'Ask an owner or admin of the account for a higher role, or use a credential of a member who has it.',
      { required_role: required, role },
    ),
  otherApp: () =>
    new AppError(403, 'FORBIDDEN', 'The credential does not grant access to this app.', 'Use a credential issued for this app, or the platform key of its owner.'),
  originNotAllowed: (origin: string) =>
    new AppError(
      403,
      'ORIGIN_NOT_ALLOWED',
      `Requests from the web origin '${origin.slice(0, 200)}' may not use /mcp.`,
      'Call /mcp from a client that sends no Origin (any non-browser MCP client), or from an allowed origin; the operator allows origins with SVC_MCP_ALLOWED_ORIGINS.',
    ),
  notFound: (what: string, remediation = 'Check the identifier; list the collection to find valid ones.') =>
    new AppError(404, 'RESOURCE_NOT_FOUND', `${what} not found.`, remediation),
  routeNotFound: (method: string, path: string) =>
    new AppError(404, 'ROUTE_NOT_FOUND', `No route ${method} ${path}.`, 'See /openapi.json for the routes this server offers (one area\'s routes and tools: /llms.txt?area=<area>).'),
  payloadTooLarge: (limit: string) =>
    new AppError(413, 'PAYLOAD_TOO_LARGE', `The request body exceeds the ${limit} limit.`, 'Send a smaller body.'),
  responseTooLarge: (limitBytes: number) =>
    new AppError(
      413,
      'RESPONSE_TOO_LARGE',
      `The response would exceed ${limitBytes} bytes.`,
      'Select fewer columns (select=col1,col2) or fewer rows (limit=, offset= or a Range header) per request.',
      { limit_bytes: limitBytes },
    ),
  conflict: (message: string, remediation: string) => new AppError(409, 'CONFLICT', message, remediation),
  /** A passing condition (a lost or busy database connection): retrying later is the remedy. */
  unavailable: (message: string, retryAfterSeconds = 1) =>
    new AppError(503, 'SERVICE_UNAVAILABLE', message, `Retry in ${retryAfterSeconds} s with backoff; if it persists, the operator should check the database.`, {
      retry_after_seconds: retryAfterSeconds,
    }),
  internal: () =>
    new AppError(500, 'INTERNAL_ERROR', 'An unexpected error occurred.', 'Retry later; if it persists, file a bug report through POST /suggestions with the request id.'),
};

export function fromZod(error: ZodError, where = 'input'): AppError {
  const issues = error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  // An unknown key explains the other issues (`appId` sent for `app_id` is also a missing app_id): name it first.
  const first = issues[error.issues.findIndex((i) => i.code === 'unrecognized_keys')] ?? issues[0];
  const field = first && first.path ? `'${first.path}'` : where;
  return errors.validation(`Invalid ${field}: ${first?.message ?? 'invalid value'}.`, issues);
}
