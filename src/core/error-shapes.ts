// Every error body the platform sends is rendered here, in the shape of the route family that sends it.
import { AppError, envelope, type ErrorEnvelope } from './errors.ts';
import type { ErrorShape } from './define.ts';

/** OpenAI's error body, as the openai SDK and every OpenAI-compatible client read it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string | null; param?: string | null; details?: unknown };
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
  AUTH_INVALID_TOKEN: 'invalid_api_key',
  FORBIDDEN: 'not_authorized',
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
  return { error: body };
}

export function renderError(err: AppError, shape: ErrorShape = 'standard'): ErrorEnvelope | OpenAiErrorBody {
  return shape === 'openai' ? openAiError(err) : envelope(err);
}
