// What the AI gateway asks of its upstream: an OpenAI-compatible API (OpenRouter-style router or OpenAI itself) that
// answers raw responses the gateway passes through untouched, or fails with an UpstreamError. Implemented by
// src/adapters/openai.ts; the composition root (src/composition.ts) builds it when SVC_AI_BASE_URL is set.
// Responses are a small interface rather than web `Response`s so that an adapter needs neither fetch nor web streams
// (the cost of a call through them was the gateway's largest, docs/design/hot-paths.md).

/** Why an upstream call produced no usable response. */
export type UpstreamFailure =
  | { kind: 'status'; status: number; message: string; type: string; code: string | null; param: string | null }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'network'; message: string };

export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;

  constructor(failure: UpstreamFailure) {
    super(failure.kind === 'status' ? failure.message : failure.kind);
    this.failure = failure;
  }
}

/**
 * A 2xx answer whose body has not been read: read it once, whole (text) or as it arrives (chunks). A body cut off,
 * or ended by the call's signal, fails the read.
 */
export interface UpstreamResponse {
  readonly status: number;
  text(): Promise<string>;
  chunks(): AsyncIterable<Uint8Array>;
  /** Stops reading and lets the connection go; never fails, and does nothing once the body was read or cancelled. */
  cancel(): Promise<void>;
}

export interface AiUpstream {
  /** POST /chat/completions with the body as given (streaming or not); a 2xx raw response or an UpstreamError. */
  chat(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse>;
  /** POST /embeddings with the body as given; a 2xx raw response or an UpstreamError. */
  embeddings(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse>;
  /** GET /models: `{ data: [{ id, created, owned_by }] }` as a 2xx raw response, or an UpstreamError. */
  models(apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse>;
}
