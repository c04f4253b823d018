// Buffered responses: test-invoke, cron and websocket invocations collect the function's reply in memory, and a
// failure that happened before the response started is turned into the platform's error for the caller.
import type { AppError } from '../core/errors.ts';
import { functionErrors } from './errors.ts';
import type { ResponseSink, RunOutcome } from './instance.ts';
import type { FunctionMeta } from './types.ts';

export type BodyEncoding = 'json' | 'text' | 'base64' | 'none';

/** Collects a response in memory up to a cap (the rest is read and dropped). */
export class BufferSink implements ResponseSink {
  status = 0;
  headers: Record<string, string> = {};
  truncated = false;
  readonly #max: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(max: number) {
    this.#max = max;
  }

  head(status: number, headers: Array<[string, string]>): void {
    this.status = status;
    for (const [k, v] of headers) {
      const name = k.toLowerCase();
      this.headers[name] = name in this.headers ? `${this.headers[name]}, ${v}` : v;
    }
  }

  chunk(data: Buffer): boolean {
    if (this.#size + data.length > this.#max) {
      this.truncated = this.truncated || this.#max > 0;
      const room = this.#max - this.#size;
      if (room > 0) this.#chunks.push(data.subarray(0, room));
      this.#size = this.#max;
      return true;
    }
    this.#chunks.push(data);
    this.#size += data.length;
    return true;
  }

  body(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/** The error a caller gets for a failed invocation whose response had not started. */
export function failureError(outcome: RunOutcome, meta: FunctionMeta): AppError {
  const kind = outcome.failure?.kind;
  if (kind === 'timeout') return functionErrors.timeout(meta.timeoutMs);
  if (kind === 'memory') return functionErrors.outOfMemory(meta.memoryLimitMb);
  if (kind === 'aborted') return functionErrors.aborted();
  if (kind === 'cpu') return functionErrors.cpuExceeded();
  return functionErrors.failed();
}

/** Content types shown as text when they decode as UTF-8; anything else is returned base64. */
const TEXTUAL = /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

/** A buffered body for JSON output: parsed JSON, UTF-8 text, or base64 when neither fits. */
export function decodeBody(body: Buffer, contentType: string | undefined): { body: unknown; body_encoding: BodyEncoding } {
  if (!body.length) return { body: null, body_encoding: 'none' };
  const type = contentType ?? '';
  if (/json/i.test(type)) {
    try {
      return { body: JSON.parse(body.toString('utf8')), body_encoding: 'json' };
    } catch {
      // not valid JSON after all: fall through to text
    }
  }
  if (!type || TEXTUAL.test(type)) {
    const text = body.toString('utf8');
    if (!text.includes('\uFFFD')) return { body: text, body_encoding: 'text' };
  }
  return { body: body.toString('base64'), body_encoding: 'base64' };
}
