// The AI gateway: OpenAI-compatible chat and embeddings relayed to the configured upstream, with the app's model
// rules, per-end-user budgets, own keys (BYOK) and the account's AI credits (reserve before the call, settle after).
import { retryUnapplied } from '../core/retry-unapplied.ts';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { AppRecord } from '../apps/types.ts';
import { JsonText } from '../core/json-text.ts';
import { StreamBody } from '../core/stream-body.ts';
import { UpstreamError, type AiUpstream, type UpstreamFailure, type UpstreamResponse } from './upstream.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { aiErrors } from './errors.ts';
import { callCostNanos, priceOf, roughTokens, tableCostNanos } from './pricing.ts';
import type { AiSettings, AiSettingsStore } from './settings.ts';
import { relayEvents, type RelayState } from './sse.ts';
import { fromChatCompletion, responsesEvents, toChatRequest } from './responses.ts';
import { advanceMayBeRefused, holdEndUserTokens, releaseEndUserTokens, settleAiCall, startAiCall, usageReport, type AiCallAdvance, type AiCallKind, type AiCallStart, type AiCallStatus, type AiUsageReport, type TokenCounts } from './usage.ts';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';

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
  start: AiCallStart;
  /**
   * The usage row written (and charged) at the worst case: before the upstream is asked when it may be refused, else
   * beside the upstream call; the answer waits for it either way, so no answered call is unbilled. Rejected: the call
   * is answered with its error, and nothing is left to correct.
   */
  advance: Promise<AiCallAdvance>;
  /** End-user tokens held against the daily budget; the record replaces the hold with the real count. */
  userHold: number;
  started: number;
}

/** An OpenAI model entry, as GET /models lists it. */
export interface AiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** How long an upstream's model list is reused. */
const MODELS_TTL_MS = 10 * 60_000;
/** Model lists kept (one per upstream key: the platform's and apps' own). */
const MAX_MODEL_LISTS = 256;

/** Output tokens assumed for a call's worst case when neither the request nor the app caps them. */
const RESERVE_DEFAULT_OUTPUT_TOKENS = 1024;
/** The most output tokens one call's worst case assumes (a huge max_tokens holds no more than this). */
const MAX_RESERVED_OUTPUT_TOKENS = 1_000_000;
/** How long a streamed call's usage row may hold its worst case: streams may run long after their first byte. */
const STREAM_SETTLE_SECONDS = 3600;
/** Waits between tries of a usage write Postgres refused or could not start (about 30 s in all). */
const RECORD_RETRY_DELAYS_MS = [200, 500, 1000, 2000, 4000, 8000, 15_000];

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // Proxies such as nginx would otherwise buffer the stream.
  'x-accel-buffering': 'no',
};

export class AiGateway {
  readonly #db: Kysely<ControlDatabase>;
  readonly #ledger: CreditLedger;
  readonly #settings: AiSettingsStore;
  readonly #config: Config['ai'];
  readonly #upstream: AiUpstream | undefined;
  readonly #log: Logger;
  /** Usage records being written after their answers went out. */
  readonly #recording = new Set<Promise<void>>();
  /** Upstream model lists by the key they were read with. */
  readonly #modelLists = new Map<string, { at: number; models: Promise<AiModel[]> }>();

  constructor(deps: { db: Kysely<ControlDatabase>; ledger: CreditLedger; settings: AiSettingsStore; config: Config['ai']; upstream: AiUpstream | undefined; log: Logger }) {
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
    const call = await this.#prepare(who, settings, body, outputCap, 'chat', streaming);
    body.model = call.model;
    const guard = new UpstreamGuard(opts.signal, this.#config.timeoutMs);
    let response: UpstreamResponse;
    try {
      response = await upstream.chat(body, call.apiKey, guard.signal);
    } catch (err) {
      guard.done();
      throw await this.#failed(who, call, guard.timedOut ? new UpstreamError({ kind: 'timeout' }) : err, opts.signal);
    }
    // A stream may last as long as it keeps sending; it fails when the upstream goes silent for the timeout. Its first
    // byte waits for the call's advance, as a whole answer does.
    if (streaming) {
      await call.advance.catch(async (err: unknown) => {
        guard.done();
        await response.cancel();
        throw err;
      });
      return this.#relay(who, call, response, body, clientWantsUsage, opts.signal, guard);
    }
    return this.#finishJson(who, call, response, opts.signal, guard);
  }

  /**
   * POST responses (OpenAI's Responses API): translated to a chat completion made through chat(), so credits, budgets
   * and usage are chat's, and its answer (or stream) translated back. Nothing is stored.
   */
  async responses(who: AiCaller, request: OpenAiBody, opts: CallOptions): Promise<Record<string, unknown> | StreamBody> {
    const { chat, echo } = toChatRequest(request);
    if (chat.stream === true) {
      if (!opts.canStream) throw aiErrors.streamNotOverMcp('responses');
      // The usage chunk carries the usage of response.completed.
      chat.stream_options = { include_usage: true };
    }
    const out = await this.chat(who, chat, opts);
    if (out instanceof StreamBody) return new StreamBody(responsesEvents(out.chunks, echo), SSE_HEADERS);
    return fromChatCompletion(JSON.parse(out.text) as Parameters<typeof fromChatCompletion>[0], echo);
  }

  /** GET models: the app's allowedModels when set, else the upstream's list (kept 10 minutes per key). */
  async models(who: AiCaller, signal: AbortSignal | undefined): Promise<AiModel[]> {
    const upstream = this.#requireUpstream();
    const settings = await this.#settings.settings(who.app.id);
    if (settings.allowedModels) return settings.allowedModels.map((id) => ({ id, object: 'model', created: 0, owned_by: ownerOf(id) }));
    const apiKey = settings.byokKey ?? this.#config.apiKey;
    if (!apiKey) throw aiErrors.noPlatformKey();
    const cached = this.#modelLists.get(apiKey);
    if (cached && Date.now() - cached.at < MODELS_TTL_MS) return cached.models;
    const models = this.#readModels(upstream, apiKey, settings.byokKey !== null, signal);
    if (this.#modelLists.size >= MAX_MODEL_LISTS) this.#modelLists.delete(this.#modelLists.keys().next().value!);
    this.#modelLists.set(apiKey, { at: Date.now(), models });
    // A failed read is not kept: the next call asks again.
    models.catch(() => {
      if (this.#modelLists.get(apiKey)?.models === models) this.#modelLists.delete(apiKey);
    });
    return models;
  }

  /** GET models/{model}: that entry of models(), or 404 model_not_found. */
  async model(who: AiCaller, id: string, signal: AbortSignal | undefined): Promise<AiModel> {
    const found = (await this.models(who, signal)).find((m) => m.id === id);
    if (!found) throw aiErrors.modelNotFound(id);
    return found;
  }

  async #readModels(upstream: AiUpstream, apiKey: string, ownKey: boolean, signal: AbortSignal | undefined): Promise<AiModel[]> {
    const guard = new UpstreamGuard(signal, this.#config.timeoutMs);
    let body: { data?: unknown };
    try {
      const response = await upstream.models(apiKey, guard.signal);
      body = JSON.parse(await response.text()) as { data?: unknown };
    } catch (err) {
      const failure: UpstreamFailure =
        err instanceof UpstreamError ? err.failure : guard.timedOut ? { kind: 'timeout' } : signal?.aborted ? { kind: 'aborted' } : { kind: 'network', message: String(err) };
      throw aiErrors.upstream(failure, ownKey);
    } finally {
      guard.done();
    }
    if (!Array.isArray(body?.data)) throw aiErrors.malformed('the model list had no data array');
    const models: AiModel[] = [];
    for (const entry of body.data as { id?: unknown; created?: unknown; owned_by?: unknown }[]) {
      if (typeof entry?.id !== 'string' || entry.id === '') continue;
      models.push({
        id: entry.id,
        object: 'model',
        created: typeof entry.created === 'number' && Number.isSafeInteger(entry.created) ? entry.created : 0,
        owned_by: typeof entry.owned_by === 'string' && entry.owned_by !== '' ? entry.owned_by : ownerOf(entry.id),
      });
    }
    return models;
  }

  /** POST embeddings: `model` and `input` required, encoding_format float (default) or base64, passed through. */
  async embed(who: AiCaller, request: OpenAiBody, opts: CallOptions): Promise<JsonText> {
    const upstream = this.#requireUpstream();
    // Explicit, so the upstream answers in the format the client asked for (the openai SDK would default to base64).
    const body = { ...request, encoding_format: request.encoding_format ?? 'float' };
    const settings = await this.#settings.settings(who.app.id);
    const call = await this.#prepare(who, settings, body, 0, 'embedding', false);
    const guard = new UpstreamGuard(opts.signal, this.#config.timeoutMs);
    let response: UpstreamResponse;
    try {
      response = await upstream.embeddings(body, call.apiKey, guard.signal);
    } catch (err) {
      guard.done();
      throw await this.#failed(who, call, guard.timedOut ? new UpstreamError({ kind: 'timeout' }) : err, opts.signal);
    }
    return this.#finishJson(who, call, response, opts.signal, guard);
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
      throw aiErrors.malformed('the embeddings answer did not have one vector of the requested size per input');
    }
    return vectors;
  }

  /** A non-streamed completion for the platform's own features (RAG answers): the assistant's text and the model. */
  async completeText(who: AiCaller, model: string | undefined, messages: readonly { role: string; content: string }[]): Promise<{ content: string; model: string }> {
    const out = await this.chat(who, { ...(model ? { model } : {}), messages: [...messages] }, { signal: undefined, canStream: false });
    const parsed = JSON.parse((out as JsonText).text) as { model?: unknown; choices?: { message?: { content?: unknown } }[] };
    const content = parsed.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw aiErrors.malformed('the completion had no text');
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

  /** Keeps a usage record in flight visible to settled(); its failure is logged (the worst case charged stands). */
  #track(recording: Promise<void>, who: AiCaller): Promise<void> {
    const tracked: Promise<void> = recording
      .catch((err: unknown) => this.#log.error({ err, app_id: who.app.id }, 'recording an AI call failed'))
      .finally(() => this.#recording.delete(tracked));
    this.#recording.add(tracked);
    return tracked;
  }

  #requireUpstream(): AiUpstream {
    if (!this.#upstream) throw aiErrors.providerUnavailable();
    return this.#upstream;
  }

  /**
   * Model rules, the end user's budget, the key, and the usage row with (platform key) its charge in advance, in that
   * order: the advance awaited here when it may be refused (402 before the upstream is asked), else only sent.
   */
  async #prepare(who: AiCaller, settings: AiSettings, body: OpenAiBody, outputCap: number, kind: AiCallKind, streaming: boolean): Promise<Prepared> {
    const model = typeof body.model === 'string' && body.model !== '' ? body.model : kind === 'chat' ? settings.defaultModel : null;
    if (!model) throw aiErrors.noModel();
    if (settings.allowedModels && !settings.allowedModels.includes(model)) throw aiErrors.modelNotAllowed(model, settings.allowedModels);
    const ownKey = settings.byokKey !== null;
    const apiKey = settings.byokKey ?? this.#config.apiKey;
    if (!apiKey) throw aiErrors.noPlatformKey();
    const promptTokens = roughTokens(JSON.stringify(body).length);
    // The end user's estimate is held against their day's budget before the call, like credits, so that parallel
    // calls of one end user cannot all pass a budget that only completed calls had filled.
    let userHold = 0;
    if (who.endUserId && settings.endUserDailyTokenLimit !== null) {
      userHold = Math.min(promptTokens + outputCap, MAX_RESERVED_OUTPUT_TOKENS);
      const held = await holdEndUserTokens(this.#db, who.app.id, who.endUserId, userHold, settings.endUserDailyTokenLimit);
      if (!held) throw aiErrors.endUserBudget(settings.endUserDailyTokenLimit, secondsToUtcMidnight());
    }
    // Held past the upstream timeout (streams: past any reasonable stream), so a live call settles before the meter
    // job takes its row as it is.
    const start: AiCallStart = {
      appId: who.app.id,
      accountId: who.app.account_id,
      endUserId: who.endUserId,
      kind,
      model,
      tokens: { prompt: promptTokens, completion: outputCap },
      costNanos: ownKey ? 0 : tableCostNanos(priceOf(this.#config, model), { prompt: promptTokens, completion: outputCap }),
      ownKey,
      settleWithinSeconds: streaming ? STREAM_SETTLE_SECONDS : Math.ceil(this.#config.timeoutMs / 1000) + 60,
    };
    const releaseHold = () => (userHold ? releaseEndUserTokens(this.#db, who.app.id, who.endUserId!, userHold).catch(() => undefined) : undefined);
    let advance: Promise<AiCallAdvance>;
    try {
      const terms = ownKey ? null : await this.#ledger.advanceTerms(start.accountId, start.costNanos);
      advance = startAiCall(this.#db, this.#ledger, start, terms ?? undefined);
      if (advanceMayBeRefused(terms)) await advance;
    } catch (err) {
      await releaseHold();
      throw err;
    }
    // Handled here (so that a failure before anyone awaits it is not an unhandled rejection); awaited by the answer.
    advance.catch(releaseHold);
    return { model, apiKey, ownKey, start, advance, userHold, started: performance.now() };
  }

  /** A non-streamed answer: read whole, usage taken from it, recorded, then returned as the upstream's bytes. */
  async #finishJson(who: AiCaller, call: Prepared, response: UpstreamResponse, signal: AbortSignal | undefined, guard: UpstreamGuard): Promise<JsonText> {
    let text: string;
    let usage: Record<string, unknown> | undefined;
    try {
      text = await response.text();
      usage = (JSON.parse(text) as { usage?: Record<string, unknown> }).usage;
    } catch (err) {
      // A body cut off, stalled past the timeout or not JSON: the provider failed mid-answer.
      throw await this.#failed(who, call, guard.timedOut ? new UpstreamError({ kind: 'timeout' }) : err, signal);
    } finally {
      guard.done();
    }
    await call.advance;
    // Charged at the worst case before the answer goes out, which goes out while the real cost replaces it: a process
    // killed before that leaves the worst case charged, never an answered call unbilled. The advance was committed
    // without waiting for the WAL flush: Postgres flushes it within a fraction of a second, and should the
    // database crash before, the correction (tried for about half a minute) writes it afresh; only a crash of both
    // the database and this process within that fraction leaves the call unbilled. A correction that fails for good
    // is logged, and the worst case stands.
    void this.#track(this.#record(who, call, tokensOf(usage), usage?.cost, 'ok', response.status), who);
    return new JsonText(text);
  }

  /** Relays the upstream's events; the call is recorded when the stream ends, fails, or the client leaves. */
  #relay(who: AiCaller, call: Prepared, response: UpstreamResponse, body: OpenAiBody, forwardUsage: boolean, signal: AbortSignal | undefined, guard: UpstreamGuard): StreamBody {
    const state: RelayState = { usage: undefined, contentChars: 0, done: false };
    const promptChars = JSON.stringify(body.messages ?? '').length;
    const events = async function* (this: AiGateway): AsyncGenerator<string> {
      let status: AiCallStatus = 'aborted';
      try {
        guard.idle();
        for await (const event of relayEvents(response.chunks(), forwardUsage, state)) {
          guard.idle();
          yield event;
        }
        status = state.done ? 'ok' : 'error';
        if (!state.done) yield errorEvent('The AI provider ended the stream before it was complete. Retry with backoff.');
      } catch (err) {
        if (signal?.aborted) return;
        status = 'error';
        this.#log.warn({ err: String(err), app_id: who.app.id }, 'AI upstream stream failed');
        yield errorEvent(guard.timedOut ? 'The AI provider stopped sending mid-stream. Retry with backoff.' : 'The AI provider connection failed mid-stream. Retry with backoff.');
      } finally {
        guard.done();
        await response.cancel();
        // Without the upstream's report (the client left, or the stream broke) the tokens are estimated from the text.
        const tokens = state.usage ? tokensOf(state.usage) : { prompt: roughTokens(promptChars), completion: roughTokens(state.contentChars) };
        this.#track(this.#record(who, call, tokens, state.usage?.cost, status, status === 'ok' ? 200 : null), who);
      }
    }.call(this);
    return new StreamBody(events, SSE_HEADERS);
  }

  /** Records a failed call (no tokens, its charge in advance given back) and returns the error for the client. */
  async #failed(who: AiCaller, call: Prepared, err: unknown, signal: AbortSignal | undefined): Promise<Error> {
    const failure: UpstreamFailure =
      err instanceof UpstreamError ? err.failure : signal?.aborted ? { kind: 'aborted' } : { kind: 'network', message: String(err) };
    const error = aiErrors.upstream(failure, call.ownKey);
    const status: AiCallStatus = failure.kind === 'aborted' ? 'aborted' : 'error';
    await this.#record(who, call, { prompt: 0, completion: 0 }, undefined, status, failure.kind === 'status' ? failure.status : error.status);
    return error;
  }

  /**
   * The call's usage row and its charge corrected, in one statement. The upstream has answered (and will bill the
   * platform), and a correction applies once however often it runs, so one that failed in any way is tried again for
   * about half a minute rather than leave the call at its worst case (or unbilled, were its advance lost).
   */
  #record(who: AiCaller, call: Prepared, tokens: TokenCounts, reportedCost: unknown, status: AiCallStatus, httpStatus: number | null): Promise<void> {
    const costNanos = tokens.prompt + tokens.completion === 0 ? 0 : callCostNanos(this.#config, call.model, tokens, reportedCost);
    // A call whose advance failed wrote nothing: there is nothing to correct.
    return call.advance.then(
      (advance) => retryUnapplied(() => this.#write(who, call, advance, tokens, costNanos, status, httpStatus), RECORD_RETRY_DELAYS_MS, () => true),
      () => undefined,
    );
  }

  async #write(who: AiCaller, call: Prepared, advance: AiCallAdvance, tokens: TokenCounts, costNanos: number, status: AiCallStatus, httpStatus: number | null): Promise<void> {
    const { shortfallNanos } = await settleAiCall(this.#db, this.#ledger, call.start, advance, {
      tokens,
      costNanos,
      latencyMs: Math.round(performance.now() - call.started),
      status,
      httpStatus,
      userTokensHeld: call.userHold,
    });
    if (shortfallNanos > 0) {
      // The account paid what it had; the rest is ours. A price that keeps under-estimating wants raising.
      this.#log.warn({ app_id: who.app.id, model: call.model, cost_nanos: costNanos, shortfall_nanos: shortfallNanos }, 'AI call cost more than the account could pay: raise this model in SVC_AI_PRICES');
    }
  }
}

/**
 * The upstream call's abort signal: the client leaving, or the timeout. Before the answer starts, and for a whole
 * non-streamed body, the timeout runs once (the openai SDK's own timeout stops at the headers); a stream restarts it
 * on every event (idle), so a long stream lives while the upstream keeps sending.
 */
class UpstreamGuard {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  #timer: NodeJS.Timeout | undefined;
  timedOut = false;

  constructor(client: AbortSignal | undefined, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    if (client?.aborted) this.#controller.abort();
    client?.addEventListener('abort', () => this.#controller.abort(), { once: true });
    this.idle();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  idle(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.timedOut = true;
      this.#controller.abort();
    }, this.#timeoutMs);
    this.#timer.unref();
  }

  done(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * Enforces maxTokensPerRequest on max_tokens and max_completion_tokens (either over it: 400), sends the cap when the
 * request names neither, and returns the output-token bound of the whole call for its worst case: the larger
 * limit times the answers asked for (`n`), never more than MAX_RESERVED_OUTPUT_TOKENS.
 */
function applyTokenCap(body: OpenAiBody, settings: AiSettings): number {
  const cap = settings.maxTokensPerRequest;
  let limit: number | undefined;
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const given = body[field];
    if (typeof given !== 'number') continue;
    if (cap !== null && given > cap) throw aiErrors.maxTokensOverCap(field, given, cap);
    limit = Math.max(limit ?? 0, given);
  }
  if (limit === undefined) {
    limit = cap ?? RESERVE_DEFAULT_OUTPUT_TOKENS;
    if (cap !== null) body.max_tokens = cap;
  }
  const answers = typeof body.n === 'number' && Number.isSafeInteger(body.n) && body.n > 1 ? body.n : 1;
  return Math.min(limit * answers, MAX_RESERVED_OUTPUT_TOKENS);
}

function tokensOf(usage: Record<string, unknown> | undefined): TokenCounts {
  const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return { prompt: count(usage?.prompt_tokens), completion: count(usage?.completion_tokens) };
}

/** An error inside an event stream, as OpenAI sends it (the openai SDK throws it from the stream). */
function errorEvent(message: string): string {
  return `data: ${JSON.stringify({ error: { message, type: 'api_error', code: 'upstream_error' } })}\n\n`;
}

/** A model's vendor: the part of its id before '/', or 'system'. */
function ownerOf(id: string): string {
  const at = id.indexOf('/');
  return at > 0 ? id.slice(0, at) : 'system';
}

function secondsToUtcMidnight(): number {
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}
