// The only module that imports the openai SDK: an OpenAI-compatible upstream (OpenRouter-style router or OpenAI
// itself) that the AI gateway relays to. Responses come back raw (asResponse), so the gateway passes the upstream's
// bytes through untouched and reads usage from them; the SDK contributes auth, timeouts and its error types.
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { redactSecret } from '../core/redact.ts';
import { UpstreamError, type AiUpstream, type UpstreamFailure } from '../ai/upstream.ts';

/** Distinct keys whose clients are kept (the platform key plus apps' own keys); the oldest is dropped past it. */
const MAX_CLIENTS = 256;

export class OpenAiUpstream implements AiUpstream {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #clients = new Map<string, OpenAI>();

  constructor(options: { baseUrl: string; timeoutMs: number }) {
    this.#baseUrl = options.baseUrl;
    this.#timeoutMs = options.timeoutMs;
  }

  /** POST /chat/completions with the body as given (streaming or not); a 2xx raw response or an UpstreamError. */
  chat(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<Response> {
    return this.#raw(apiKey, () => this.#client(apiKey).chat.completions.create(body as never, { signal }).asResponse());
  }

  /** POST /embeddings with the body as given; encoding_format must be set (the SDK would otherwise ask for base64). */
  embeddings(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<Response> {
    return this.#raw(apiKey, () => this.#client(apiKey).embeddings.create(body as never, { signal }).asResponse());
  }

  /** GET /models; the raw response (the list is one page: OpenAI-compatible routers do not paginate it). */
  models(apiKey: string, signal: AbortSignal | undefined): Promise<Response> {
    return this.#raw(apiKey, () => this.#client(apiKey).models.list({ signal }).asResponse());
  }

  /** The call's raw response; its failure with the key it was made with taken out of the provider's words. */
  async #raw(apiKey: string, call: () => Promise<Response>): Promise<Response> {
    try {
      return await call();
    } catch (err) {
      throw new UpstreamError(withoutKey(failureOf(err), apiKey));
    }
  }

  #client(apiKey: string): OpenAI {
    let client = this.#clients.get(apiKey);
    if (client) return client;
    // Clients retry nothing: the caller sees the upstream's answer and decides (the errors say "retry with backoff").
    client = new OpenAI({ apiKey, baseURL: this.#baseUrl, timeout: this.#timeoutMs, maxRetries: 0 });
    if (this.#clients.size >= MAX_CLIENTS) this.#clients.delete(this.#clients.keys().next().value!);
    this.#clients.set(apiKey, client);
    return client;
  }
}

/**
 * Providers echo the key they refused ("Incorrect API key provided: sk-...") and the gateway relays their words to
 * the caller, who may be an end user: neither the platform's key nor an app's own may reach them.
 */
function withoutKey(failure: UpstreamFailure, apiKey: string): UpstreamFailure {
  if (failure.kind === 'status') {
    return { ...failure, message: redactSecret(failure.message, apiKey), param: failure.param === null ? null : redactSecret(failure.param, apiKey) };
  }
  return failure.kind === 'network' ? { ...failure, message: redactSecret(failure.message, apiKey) } : failure;
}

function failureOf(err: unknown): UpstreamFailure {
  if (err instanceof APIUserAbortError) return { kind: 'aborted' };
  if (err instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (err instanceof APIError && typeof err.status === 'number') {
    const e = (err.error ?? {}) as { message?: unknown; type?: unknown; code?: unknown; param?: unknown };
    return {
      kind: 'status',
      status: err.status,
      message: typeof e.message === 'string' ? e.message : err.message,
      type: typeof e.type === 'string' ? e.type : 'api_error',
      code: typeof e.code === 'string' ? e.code : null,
      param: typeof e.param === 'string' ? e.param : null,
    };
  }
  return { kind: 'network', message: err instanceof Error ? err.message : String(err) };
}
