// The AI gateway: OpenAI-compatible chat and embeddings relayed to the configured upstream, with the app's model
// rules, per-end-user budgets, own keys (BYOK) and the account's AI credits (reserve before the call, settle after).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AppRecord } from '../apps/types.ts';
import { JsonText } from '../core/json-text.ts';
import { StreamBody } from '../core/stream-body.ts';
import { UpstreamError, type OpenAiUpstream, type UpstreamFailure } from '../adapters/openai.ts';
import type { CreditLedger, Reservation } from '../credits/ledger.ts';
import { aiErrors } from './errors.ts';
import { callCostNanos, priceOf, roughTokens, tableCostNanos } from './pricing.ts';
import type { AiSettings, AiSettingsStore } from './settings.ts';
import { relayEvents, type RelayState } from './sse.ts';
import { endUserTokensToday, recordAiCall, usageReport, type AiCallKind, type AiCallStatus, type AiUsageReport, type TokenCounts } from './usage.ts';
import { errors } from '../core/errors.ts';

/** Who a call is for: the app (its account pays) and, for end-user calls, the end user (metered and budgeted). */
export interface AiCaller {
  app: AppRecord;
  endUserId: string | null;
}

export interface CallOptions {
  signal: AbortSignal | undefined;
  /** Whether the transport can relay server-sent events (REST); `stream: true` is refused otherwise. */
  canStream: boolean;
}

/** An OpenAI request body as the client sent it; fields the gateway does not read pass through untouched. */
export type OpenAiBody = Record<string, unknown>;

/** Everything decided before the upstream is called. */
interface Prepared {
  model: string;
  apiKey: string;
  ownKey: boolean;
  reservation: Reservation | undefined;
  started: number;
}

/** Output tokens assumed for a reservation when neither the request nor the app caps them. */
const RESERVE_DEFAULT_OUTPUT_TOKENS = 1024;

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // Proxies such as nginx would otherwise buffer the stream.
  'x-accel-buffering': 'no',
};

export class AiGateway {
  readonly #db: Kysely<any>;
  readonly #ledger: CreditLedger;
  readonly #settings: AiSettingsStore;
  readonly #config: Config['ai'];
  readonly #upstream: OpenAiUpstream | undefined;
  readonly #log: Logger;
  /** Usage records being written after their answers went out. */
  readonly #recording = new Set<Promise<void>>();

  constructor(deps: { db: Kysely<any>; ledger: CreditLedger; settings: AiSettingsStore; config: Config['ai']; upstream: OpenAiUpstream | undefined; log: Logger }) {
    this.#db = deps.db;
    this.#ledger = deps.ledger;
    this.#settings = deps.settings;
    this.#config = deps.config;
    this.#upstream = deps.upstream;
    this.#log = deps.log;
  }

  /** POST chat/completions: the upstream's JSON as it is, or (stream: true) its events as they arrive. */
  async chat(who: AiCaller, request: OpenAiBody, opts: CallOptions): Promise<JsonText | StreamBody> {
    const upstream = this.#requireUpstream();
    const body = { ...request };
    const streaming = body.stream === true;
    if (streaming && !opts.canStream) throw aiErrors.streamNotOverMcp();
    const settings = await this.#settings.settings(who.app.id);
    const outputCap = applyTokenCap(body, settings);
    const clientWantsUsage = streaming && (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    // Usage arrives in a last chunk only when asked for: the gateway always asks, and hides it from clients that did not.
    if (streaming) body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    const call = await this.#prepare(who, settings, body, outputCap, 'chat');
    body.model = call.model;
    let response: Response;
    try {
      response = await upstream.chat(body, call.apiKey, opts.signal);
    } catch (err) {
      throw await this.#failed(who, call, 'chat', err, opts.signal);
    }
    if (streaming && response.body) return this.#relay(who, call, response, body, clientWantsUsage, opts.signal);
    return this.#finishJson(who, call, 'chat', response, opts.signal);
  }

  /** POST embeddings: `model` and `input` required, encoding_format float (default) or base64, passed through. */
  async embed(who: AiCaller, request: OpenAiBody, opts: CallOptions): Promise<JsonText> {
    const upstream = this.#requireUpstream();
    // Explicit, so the upstream answers in the format the client asked for (the openai SDK would default to base64).
    const body = { ...request, encoding_format: request.encoding_format ?? 'float' };
    const settings = await this.#settings.settings(who.app.id);
    const call = await this.#prepare(who, settings, body, 0, 'embedding');
    let response: Response;
    try {
      response = await upstream.embeddings(body, call.apiKey, opts.signal);
    } catch (err) {
      throw await this.#failed(who, call, 'embedding', err, opts.signal);
    }
    return this.#finishJson(who, call, 'embedding', response, opts.signal);
  }

  /**
   * Embeddings for the platform's own features (RAG): float vectors in input order, through the same rules,
   * credits and usage rows as any call (an end user's call counts against their budget).
   */
  async embedTexts(who: AiCaller, model: string, texts: readonly string[], dimensions: number | undefined, signal?: AbortSignal): Promise<number[][]> {
    const body = { model, input: [...texts], encoding_format: 'float', ...(dimensions ? { dimensions } : {}) };
    const out = JSON.parse((await this.embed(who, body, { signal, canStream: false })).text) as { data?: { index?: unknown; embedding?: unknown }[] };
    const vectors: number[][] = [];
    for (const item of out.data ?? []) {
      if (typeof item.index === 'number' && Array.isArray(item.embedding)) vectors[item.index] = item.embedding as number[];
    }
    if (vectors.length !== texts.length || vectors.some((v) => !v || (dimensions !== undefined && v.length !== dimensions))) {
      throw aiErrors.upstream({ kind: 'network', message: 'the embeddings answer did not match the request' });
    }
    return vectors;
  }

  /** A non-streamed completion for the platform's own features (RAG answers): the assistant's text and the model. */
  async completeText(who: AiCaller, model: string | undefined, messages: readonly { role: string; content: string }[]): Promise<{ content: string; model: string }> {
    const out = await this.chat(who, { ...(model ? { model } : {}), messages: [...messages] }, { signal: undefined, canStream: false });
    const parsed = JSON.parse((out as JsonText).text) as { model?: unknown; choices?: { message?: { content?: unknown } }[] };
    const content = parsed.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw aiErrors.upstream({ kind: 'network', message: 'the completion had no text' });
    return { content, model: typeof parsed.model === 'string' ? parsed.model : (model ?? '') };
  }

  /** Waits for the usage records this process is still writing (before a usage report, and at shutdown). */
  async settled(): Promise<void> {
    await Promise.all([...this.#recording]);
  }

  /** Usage between two UTC dates, both inclusive; by default the 30 days ending today. */
  async usage(appId: string, startDate: string | undefined, endDate: string | undefined): Promise<AiUsageReport> {
    await this.settled();
    const end = endDate ?? new Date().toISOString().slice(0, 10);
    const start = startDate ?? new Date(Date.parse(end) - 29 * 86_400_000).toISOString().slice(0, 10);
    if (start > end) throw errors.validation(`'startDate' (${start}) is after 'endDate' (${end}).`, [{ path: 'startDate', message: 'must not be after endDate' }]);
    return usageReport(this.#db, appId, start, end);
  }

  /** Keeps a usage record in flight visible to settled(); its failure is logged (the reservation then expires). */
  #track(recording: Promise<void>, who: AiCaller): void {
    const tracked: Promise<void> = recording
      .catch((err: unknown) => this.#log.error({ err, app_id: who.app.id }, 'recording an AI call failed'))
      .finally(() => this.#recording.delete(tracked));
    this.#recording.add(tracked);
  }

  #requireUpstream(): OpenAiUpstream {
    if (!this.#upstream) throw aiErrors.providerUnavailable();
    return this.#upstream;
  }

  /** Model rules, the end user's budget, the key, and (platform key) the credit reservation; in that order. */
  async #prepare(who: AiCaller, settings: AiSettings, body: OpenAiBody, outputCap: number, kind: AiCallKind): Promise<Prepared> {
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : kind === 'chat' ? settings.defaultModel : null;
    if (!model) throw aiErrors.noModel();
    if (settings.allowedModels && !settings.allowedModels.includes(model)) throw aiErrors.modelNotAllowed(model, settings.allowedModels);
    if (who.endUserId && settings.endUserDailyTokenLimit !== null) {
      const used = await endUserTokensToday(this.#db, who.app.id, who.endUserId);
      if (used >= settings.endUserDailyTokenLimit) throw aiErrors.endUserBudget(settings.endUserDailyTokenLimit, secondsToUtcMidnight());
    }
    const ownKey = settings.byokKey !== null;
    const apiKey = settings.byokKey ?? this.#config.apiKey;
    if (!apiKey) throw aiErrors.noPlatformKey();
    let reservation: Reservation | undefined;
    if (!ownKey) {
      const estimate = tableCostNanos(priceOf(this.#config, model), { prompt: roughTokens(JSON.stringify(body).length), completion: outputCap });
      // Held past the upstream timeout, so that a live call's reservation never lapses before it is settled.
      reservation = await this.#ledger.reserve(who.app.account_id, estimate, Math.ceil(this.#config.timeoutMs / 1000) + 60);
    }
    return { model, apiKey, ownKey, reservation, started: performance.now() };
  }

  /** A non-streamed answer: read whole, usage taken from it, recorded, then returned as the upstream's bytes. */
  async #finishJson(who: AiCaller, call: Prepared, kind: AiCallKind, response: Response, signal: AbortSignal | undefined): Promise<JsonText> {
    let text: string;
    let usage: Record<string, unknown> | undefined;
    try {
      text = await response.text();
      usage = (JSON.parse(text) as { usage?: Record<string, unknown> }).usage;
    } catch (err) {
      // A body cut off or not JSON: the provider failed mid-answer.
      throw await this.#failed(who, call, kind, err, signal);
    }
    // Recorded while the answer goes out: the reservation covers the call until the charge is written.
    this.#track(this.#record(who, call, kind, tokensOf(usage), usage?.cost, 'ok', response.status), who);
    return new JsonText(text);
  }

  /** Relays the upstream's events; the call is recorded when the stream ends, fails, or the client leaves. */
  #relay(who: AiCaller, call: Prepared, response: Response, body: OpenAiBody, forwardUsage: boolean, signal: AbortSignal | undefined): StreamBody {
    const state: RelayState = { usage: undefined, contentChars: 0, done: false };
    const promptChars = JSON.stringify(body.messages ?? '').length;
    const events = async function* (this: AiGateway): AsyncGenerator<string> {
      let status: AiCallStatus = 'aborted';
      try {
        for await (const event of relayEvents(response.body!, forwardUsage, state)) yield event;
        status = state.done ? 'ok' : 'error';
        if (!state.done) yield errorEvent('The AI provider ended the stream before it was complete. Retry with backoff.');
      } catch (err) {
        if (signal?.aborted) return;
        status = 'error';
        this.#log.warn({ err: String(err), app_id: who.app.id }, 'AI upstream stream failed');
        yield errorEvent('The AI provider connection failed mid-stream. Retry with backoff.');
      } finally {
        await response.body?.cancel().catch(() => undefined);
        // Without the upstream's report (the client left, or the stream broke) the tokens are estimated from the text.
        const tokens = state.usage ? tokensOf(state.usage) : { prompt: roughTokens(promptChars), completion: roughTokens(state.contentChars) };
        this.#track(this.#record(who, call, 'chat', tokens, state.usage?.cost, status, status === 'ok' ? 200 : null), who);
      }
    }.call(this);
    return new StreamBody(events, SSE_HEADERS);
  }

  /** Records a failed call (no tokens, reservation released) and returns the error for the client. */
  async #failed(who: AiCaller, call: Prepared, kind: AiCallKind, err: unknown, signal: AbortSignal | undefined): Promise<Error> {
    const failure: UpstreamFailure =
      err instanceof UpstreamError ? err.failure : signal?.aborted ? { kind: 'aborted' } : { kind: 'network', message: String(err) };
    const error = aiErrors.upstream(failure);
    const status: AiCallStatus = failure.kind === 'aborted' ? 'aborted' : 'error';
    await this.#record(who, call, kind, { prompt: 0, completion: 0 }, undefined, status, failure.kind === 'status' ? failure.status : error.status);
    return error;
  }

  #record(who: AiCaller, call: Prepared, kind: AiCallKind, tokens: TokenCounts, reportedCost: unknown, status: AiCallStatus, httpStatus: number | null): Promise<void> {
    const costNanos = tokens.prompt + tokens.completion === 0 ? 0 : callCostNanos(this.#config, call.model, tokens, reportedCost);
    return recordAiCall(this.#db, this.#ledger, {
      appId: who.app.id,
      accountId: who.app.account_id,
      endUserId: who.endUserId,
      kind,
      model: call.model,
      tokens,
      costNanos,
      ownKey: call.ownKey,
      latencyMs: Math.round(performance.now() - call.started),
      status,
      httpStatus,
      reservation: call.reservation,
    });
  }
}

/**
 * Enforces maxTokensPerRequest on max_tokens / max_completion_tokens (over it: 400), sends the cap when the request
 * names none, and returns the output-token bound used for the credit reservation.
 */
function applyTokenCap(body: OpenAiBody, settings: AiSettings): number {
  const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const given = body[field];
  const cap = settings.maxTokensPerRequest;
  if (typeof given === 'number') {
    if (cap !== null && given > cap) throw aiErrors.maxTokensOverCap(field, given, cap);
    return given;
  }
  if (cap === null) return RESERVE_DEFAULT_OUTPUT_TOKENS;
  body.max_tokens = cap;
  return cap;
}

function tokensOf(usage: Record<string, unknown> | undefined): TokenCounts {
  const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return { prompt: count(usage?.prompt_tokens), completion: count(usage?.completion_tokens) };
}

/** An error inside an event stream, as OpenAI sends it (the openai SDK throws it from the stream). */
function errorEvent(message: string): string {
  return `data: ${JSON.stringify({ error: { message, type: 'api_error', code: 'upstream_error' } })}\n\n`;
}

function secondsToUtcMidnight(): number {
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}
