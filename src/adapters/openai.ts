// An OpenAI-compatible upstream (OpenRouter-style router or OpenAI itself) that the AI gateway relays to, spoken over
// node:http(s) with one keep-alive agent: the openai SDK's fetch (undici and web streams) was the largest share of a
// gateway call's CPU (docs/design/hot-paths.md). Answers come back unread, so the gateway passes the upstream's bytes
// through untouched and reads usage from them; failures are the SDK's, as the gateway and its clients knew them.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { finished } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import { redactSecret } from '../core/redact.ts';
import { UpstreamError, type AiUpstream, type UpstreamFailure, type UpstreamResponse } from '../ai/upstream.ts';

/** Connections kept to the upstream at once: every concurrent call holds one (streams for their whole length). */
const MAX_SOCKETS = 256;
/** Some providers' front ends refuse requests that name no client. */
const USER_AGENT = 'svc-platform';
/**
 * How long an idle kept-alive connection waits for its next call (shorter when the upstream announces its own
 * `Keep-Alive: timeout`): undici's default, so that a call is not sent on a connection the upstream is closing.
 */
const IDLE_SOCKET_MS = 4000;

export class OpenAiUpstream implements AiUpstream {
  readonly #target: http.RequestOptions;
  /** The base URL's path without a trailing slash, and its query: paths are appended as the SDK appended them. */
  readonly #basePath: string;
  readonly #query: string;
  readonly #timeoutMs: number;
  readonly #transport: typeof http | typeof https;

  constructor(options: { baseUrl: string; timeoutMs: number }) {
    const base = new URL(options.baseUrl);
    const secure = base.protocol === 'https:';
    this.#transport = secure ? https : http;
    const agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: MAX_SOCKETS, timeout: IDLE_SOCKET_MS });
    this.#target = { ...urlToHttpOptions(base), agent };
    this.#basePath = base.pathname.replace(/\/$/, '');
    this.#query = base.search;
    this.#timeoutMs = options.timeoutMs;
  }

  /** POST /chat/completions with the body as given (streaming or not); a 2xx response or an UpstreamError. */
  chat(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    return this.#call('POST', '/chat/completions', apiKey, JSON.stringify(body), signal);
  }

  /** POST /embeddings with the body as given (the gateway sets encoding_format). */
  embeddings(body: Record<string, unknown>, apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    return this.#call('POST', '/embeddings', apiKey, JSON.stringify(body), signal);
  }

  /** GET /models (the list is one page: OpenAI-compatible routers do not paginate it). */
  models(apiKey: string, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    return this.#call('GET', '/models', apiKey, undefined, signal);
  }

  /**
   * One exchange. The timeout runs until a 2xx answer's headers (a refusal's body included), as the SDK's did; the
   * signal holds for the whole answer. Its failure has the key it was made with taken out of the provider's words.
   */
  #call(method: string, path: string, apiKey: string, payload: string | undefined, signal: AbortSignal | undefined): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new UpstreamError({ kind: 'aborted' }));
      const req = this.#transport.request({ ...this.#target, method, path: `${this.#basePath}${path}${this.#query}`, headers: headersOf(apiKey, payload) });
      // Before the answer the request is ended; after it, the answer (whose reader then fails).
      let answer: IncomingMessage | undefined;
      const abort = (): void => void (answer ?? req).destroy();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        abort();
      }, this.#timeoutMs);
      signal?.addEventListener('abort', abort, { once: true });
      let settled = false;
      const settle = (outcome: UpstreamResponse | UpstreamFailure): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if ('kind' in outcome) reject(new UpstreamError(withoutKey(outcome, apiKey)));
        else resolve(outcome);
      };
      /** Why the exchange ended early: the caller's signal first, as the SDK put it. */
      const cut = (otherwise: () => UpstreamFailure): UpstreamFailure => (signal?.aborted ? { kind: 'aborted' } : timedOut ? { kind: 'timeout' } : otherwise());
      // Kept for the request's whole life: a connection that fails mid-answer reports it here too (settled by then).
      req.on('error', (err) => settle(cut(() => (isTimeout(err) ? { kind: 'timeout' } : { kind: 'network', message: err.message }))));
      req.on('response', (res) => {
        answer = res;
        res.once('close', () => signal?.removeEventListener('abort', abort));
        const status = res.statusCode!;
        if (status >= 200 && status < 300) return settle(responseOf(status, res));
        readText(res).then(
          (text) => settle(refusalOf(status, text)),
          (err: Error) => settle(cut(() => refusalOf(status, err.message))),
        );
      });
      req.end(payload);
    });
  }
}

function headersOf(apiKey: string, payload: string | undefined): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${apiKey}`, accept: 'application/json', 'user-agent': USER_AGENT };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return headers;
}

function responseOf(status: number, res: IncomingMessage): UpstreamResponse {
  return {
    status,
    text: () => readText(res),
    chunks: () => res,
    // Once the body was read whole the connection is back in the agent's pool, and this leaves it there.
    cancel: async () => void res.destroy(),
  };
}

/** The whole body; fails when it is cut off or destroyed before its end. */
function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    res.on('data', (part: Buffer) => parts.push(part));
    finished(res, (err) => (err ? reject(err) : resolve(Buffer.concat(parts).toString('utf8'))));
  });
}

/** The SDK's reading of connection errors: anything that says it timed out is a timeout. */
function isTimeout(err: Error): boolean {
  return /timed? ?out/i.test(`${err.message} ${(err as NodeJS.ErrnoException).code ?? ''}`);
}

/**
 * A non-2xx answer as the SDK's APIError described it: the provider's `error` object (or the whole JSON body when it
 * has none), its message, else the SDK's "<status> <what it got>".
 */
function refusalOf(status: number, text: string): UpstreamFailure {
  const json = parseJson(text);
  const error = json !== null && typeof json === 'object' && (json as { error?: unknown }).error == null ? json : (json as { error?: unknown } | undefined)?.error;
  const e = (error ?? {}) as { message?: unknown; type?: unknown; code?: unknown; param?: unknown };
  return {
    kind: 'status',
    status,
    message: typeof e.message === 'string' ? e.message : sdkMessage(status, error, json ? undefined : text),
    type: typeof e.type === 'string' ? e.type : 'api_error',
    code: typeof e.code === 'string' ? e.code : null,
    param: typeof e.param === 'string' ? e.param : null,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** APIError.makeMessage of openai 7: the error's message (as JSON unless a string), the error as JSON, or the body. */
function sdkMessage(status: number, error: unknown, body: string | undefined): string {
  const message = (error as { message?: unknown } | undefined)?.message;
  const what = message ? (typeof message === 'string' ? message : JSON.stringify(message)) : error ? JSON.stringify(error) : body;
  return what ? `${status} ${what}` : `${status} status code (no body)`;
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
