// One error for every call: the platform's and the CRM functions' { error: { code, message } }.
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The error of an answer that was not ok, from its JSON body when it has one. */
export function errorOf(status: number, body: unknown): ApiError {
  const e = (body as { error?: unknown } | null)?.error;
  if (e && typeof e === 'object') {
    const { code, message } = e as { code?: unknown; message?: unknown };
    return new ApiError(status, String(code ?? 'error'), String(message ?? `Request failed (${status}).`));
  }
  if (typeof e === 'string') return new ApiError(status, e, e.replaceAll('_', ' '));
  return new ApiError(status, 'http_' + status, `Request failed (${status}).`);
}

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
