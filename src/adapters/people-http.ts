// The HTTP exchange both people adapters make: one JSON request with a deadline, its failures as ProviderFailure.
import { ProviderFailure } from '../people/provider.ts';

/** Where a people vendor is and how long one exchange with it may take (SVC_PEOPLE_<slot>_URL, _KEY, SVC_PEOPLE_TIMEOUT_MS). */
export interface VendorOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
}

export interface VendorAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when it was empty or not JSON. */
  body: unknown;
}

/** Bytes of an error body quoted in a failure's message. */
const EXCERPT = 200;

/**
 * Sends the request and reads the whole answer within `timeoutMs` (or until `signal` aborts). 2xx answers and the
 * statuses in `accept` are returned; any other status, a timeout or a network error throws ProviderFailure.
 */
export async function vendorRequest(
  url: URL,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  opts: { timeoutMs: number; signal: AbortSignal; accept?: readonly number[] },
): Promise<VendorAnswer> {
  const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { ...init, headers: { accept: 'application/json', ...init.headers }, signal, redirect: 'error' });
    text = await res.text();
  } catch (err) {
    const why = signal.aborted && !opts.signal.aborted ? `did not answer within ${opts.timeoutMs} ms` : `could not be reached (${(err as Error).message})`;
    throw new ProviderFailure(`The people provider ${why}.`, null);
  }
  if (!res.ok && !opts.accept?.includes(res.status)) {
    throw new ProviderFailure(`The people provider answered ${res.status}: ${text.slice(0, EXCERPT).replace(/\s+/g, ' ')}`, res.status);
  }
  return { status: res.status, headers: res.headers, body: parseJson(text) };
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** A 2xx answer whose body is not the object the call expects: the provider failed. */
export function malformed(what: string, status: number): ProviderFailure {
  return new ProviderFailure(`The people provider's answer was malformed: ${what}.`, status);
}

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string field, or null when absent or of another type (vendors omit and null fields freely). */
export function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** A finite number field, or null. */
export function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
