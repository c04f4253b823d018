// The platform channel of a running function: ctx.data, ctx.billing and ctx.integrations calls (run through the tools' invoke(), as REST
// and MCP run them), ctx.data.transaction (function-transactions.ts), ctx.substrate calls and fetch() to the platform's own URL, forwarded
// to this process's HTTP listener. The runner asks over stdio (protocol.ts, PlatformCall); nothing here trusts what it names beyond the
// function's own app and the invocation's own transactions.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { AppError, errors, fromZod } from '../core/errors.ts';
import type { AnyTool } from '../core/define.ts';
import type { Caller } from '../core/caller.ts';
import { invoke as invokeTool, screenInput } from '../core/invoke.ts';
import { mapPgError } from '../core/pg-errors.ts';
import type { Services } from '../services.ts';
import { entitledPlan, type SubscriptionLike } from '../monetization/entitlement.ts';
import { functionErrors } from '../functions/errors.ts';
import { substrateErrors } from '../substrate/service.ts';
import { APP_TOOLS, type DataOp, type EndUser, type PlatformCall, type PlatformCallAnswer, type PlatformCallResult } from '../functions/protocol.ts';
import { platformOrigins, type FunctionMeta, type InvocationChannel, type PlatformChannel } from '../functions/types.ts';
import { InvocationTransactions } from './function-transactions.ts';

/** What ctx.data and fetch() to the platform's own URL need, wired once the platform is built (src/composition.ts). */
interface PlatformAccess {
  services: Services;
  tools: readonly AnyTool[];
  /** This process's HTTP listener (http://127.0.0.1:port) when it serves HTTP; else calls go to config.baseUrl. */
  listenUrl?: string | undefined;
}

/** What one call needs besides the access itself. */
interface ChannelContext {
  access: PlatformAccess;
  config: Config;
  log: Logger;
  /** The invocation's open transactions. */
  txs: InvocationTransactions;
}

type FetchCall = Extract<PlatformCall, { kind: 'fetch' }>;
type DataCall = Extract<PlatformCall, { kind: 'data' }>;
type TxCall = Extract<PlatformCall, { kind: 'tx' }>;
type SubstrateCall = Extract<PlatformCall, { kind: 'substrate' }>;
type IntegrationsCall = Extract<PlatformCall, { kind: 'integrations' }>;
type AppToolCall = Extract<PlatformCall, { kind: 'app' }>;

/** The data tools behind ctx.data, by operation (run through invoke(), as REST and MCP run them). */
const DATA_TOOLS: Record<DataOp, string> = { select: 'data_select', insert: 'data_insert', update: 'data_update', delete: 'data_delete', rpc: 'data_rpc' };
/** The tool behind ctx.billing.subscription(). */
const SUBSCRIPTION_TOOL = 'billing_subscription_get';
/** The tool behind ctx.integrations.execute(). */
const EXECUTE_TOOL = 'integrations_execute';

/** Headers a function may not set on a forwarded fetch: forwarding headers are the platform's to set, or a function could pose as any client address. */
const HOP_HEADERS = ['host', 'content-length', 'connection', 'transfer-encoding', 'forwarded'];
/** Response headers that describe the hop to the listener, not the platform's answer. */
const HOP_RESPONSE_HEADERS = ['connection', 'keep-alive', 'transfer-encoding'];
const FORWARD_TIMEOUT_MS = 60_000;

/**
 * One call of a running invocation to its own platform. The app is always the function's own (the runner names
 * none), and the caller is the invocation's: the verified end user whose token reached the function, else the app
 * itself as a service caller (all rows of this app, like a service key of it; never another app).
 * A platform error becomes the call's result (the function sees it as a response), anything else rejects.
 */
async function platformCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: PlatformCall): Promise<PlatformCallAnswer> {
  try {
    if (call.kind === 'fetch') return await platformFetch(ctx, call);
    if (call.kind === 'substrate') return { status: 200, result: await substrateCall(ctx, meta, user, call) };
    if (call.kind === 'billing') return { status: 200, result: await billingCall(ctx, meta, user) };
    if (call.kind === 'integrations') return { status: 200, result: await integrationsCall(ctx, meta, user, call) };
    if (call.kind === 'app') return { status: 200, result: await appToolCall(ctx, meta, user, call) };
    if (call.kind === 'tx') return { status: 200, result: await txCall(ctx, meta, user, call) };
    return await dataCall(ctx, meta, user, call);
  } catch (err) {
    const known = err instanceof AppError ? err : mapPgError(err);
    if (!known) throw err;
    return { status: known.status, error: { code: known.code, message: known.message, remediation: known.remediation } };
  }
}

/**
 * One tool run through invoke(), as REST and MCP run it, on behalf of an invocation of the function; `services` replaces
 * the platform's (a data service bound to a transaction).
 */
async function runTool(ctx: ChannelContext, meta: FunctionMeta, caller: Caller, name: string, input: Record<string, unknown>, services = ctx.access.services): Promise<unknown> {
  const tool = ctx.access.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`tool ${name} is not registered`);
  return invokeTool(tool, input, { services, admission: ctx.access.services.admission, audit: ctx.access.services.audit, caller, requestId: randomUUID(), clientId: `function:${meta.id}`, log: ctx.log });
}

type DataOutput = { status: number; data?: unknown; content_range?: string };

/** ctx.data: one data tool run through invoke() as the invocation's caller, or in one of its transactions. */
async function dataCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: DataCall): Promise<PlatformCallResult> {
  const input: Record<string, unknown> = { app_id: meta.appId, query: call.query, ...(call.op === 'rpc' ? rpcInput(call) : { table: call.table }) };
  if (call.prefer !== undefined) input.prefer = call.prefer;
  if ((call.op === 'insert' || call.op === 'update') && call.body !== undefined) input.body = call.body;
  const out =
    call.tx === undefined
      ? await runTool(ctx, meta, await callerOf(ctx.access, meta, call.asApp ? null : user), DATA_TOOLS[call.op], input)
      : await dataInTransaction(ctx, meta, call.tx, DATA_TOOLS[call.op], input);
  const { status, data, content_range } = out as DataOutput;
  return { status, data: data ?? null, ...(content_range ? { contentRange: content_range } : {}) };
}

/** data_rpc's input of ctx.data.rpc(fn, args, { get }): the function, its arguments, and GET's read-only mode. */
function rpcInput(call: DataCall): Record<string, unknown> {
  return { function: call.table, ...(call.body === undefined ? {} : { args: call.body }), ...(call.get ? { read_only: true } : {}) };
}

/**
 * A data tool in the invocation's transaction `id`, as the caller it was begun as (the call's own asApp cannot change
 * that). Any failure rolls the whole transaction back: its later calls and its commit are refused with the reason.
 */
function dataInTransaction(ctx: ChannelContext, meta: FunctionMeta, id: number, tool: string, input: Record<string, unknown>): Promise<unknown> {
  return ctx.txs.inTurn(id, async (open) => {
    try {
      return await runTool(ctx, meta, open.caller, tool, input, { ...ctx.access.services, data: open.data });
    } catch (err) {
      await open.tx.abort(err instanceof AppError ? err : (mapPgError(err) ?? errors.internal()));
      throw err;
    }
  });
}

/** ctx.data.transaction's begin (as the invocation's caller, or the app), commit and rollback. */
async function txCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: TxCall): Promise<unknown> {
  if (call.op === 'begin') return { tx: await ctx.txs.begin(meta.appId, await callerOf(ctx.access, meta, call.asApp ? null : user)) };
  if (call.op === 'commit') await ctx.txs.commit(call.tx);
  else await ctx.txs.rollback(call.tx);
  return null;
}

/**
 * ctx.billing: the invoking end user's current subscription, read by billing_subscription_get as that user, and the
 * plan it entitles them to (what public.current_user_plan() answers in SQL). An invocation without an end user
 * (a key, cron, a test invoke) has neither: the app itself subscribes to nothing.
 */
async function billingCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null): Promise<{ subscription: SubscriptionLike | null; plan: string | null }> {
  if (!user) return { subscription: null, plan: null };
  const out = (await runTool(ctx, meta, await callerOf(ctx.access, meta, user), SUBSCRIPTION_TOOL, { app_id: meta.appId })) as { subscription: SubscriptionLike | null };
  const subscription = out.subscription ?? null;
  return { subscription, plan: entitledPlan(subscription) };
}

/**
 * ctx.integrations.execute: integrations_execute as the invoking end user. Without one (a key, cron, a test invoke)
 * the function runs as its app, which, like a key of the app, must name the user ({ userId }).
 */
async function integrationsCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: IntegrationsCall): Promise<unknown> {
  if (!user && call.userId === undefined) {
    throw errors.validation('ctx.integrations.execute acts for an end user: invoke the function with their access token, or pass { userId }.', [
      { path: 'userId', message: 'required without an end user' },
    ]);
  }
  const input: Record<string, unknown> = { app_id: meta.appId, toolName: call.toolName, params: call.params ?? {} };
  if (call.userId !== undefined) input.userId = call.userId;
  return runTool(ctx, meta, await callerOf(ctx.access, meta, user), EXECUTE_TOOL, input);
}

/**
 * ctx.ai, ctx.rag, ctx.storage, ctx.people, ctx.meetings: the tool on the function's own app (whatever app_id the
 * function named), as its caller or as the app (APP_TOOLS). A streamed chat is a StreamBody, which a frame cannot
 * carry: streaming goes through fetch() to ctx.env.SVC_API_URL.
 */
async function appToolCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: AppToolCall): Promise<unknown> {
  if (call.tool === 'ai_chat' && call.input.stream === true) {
    throw errors.validation('ctx.ai.chat answers whole; to stream, fetch() SVC_API_URL + "/chat/completions" with stream: true.', [
      { path: 'stream', message: 'not supported by ctx.ai.chat' },
    ]);
  }
  const caller = await callerOf(ctx.access, meta, APP_TOOLS[call.tool] === 'app' || call.asApp ? null : user);
  return runTool(ctx, meta, caller, call.tool, { ...call.input, app_id: meta.appId });
}

/**
 * ctx.substrate: for the substrate user the app is linked to, as an agent with source_app_id set (whoever called the
 * function). Writes go through propose, like every other proposer's.
 */
async function substrateCall(ctx: ChannelContext, meta: FunctionMeta, user: EndUser | null, call: SubstrateCall): Promise<unknown> {
  // The same screen as every tool input (NUL, non-finite numbers, nesting past 100): these calls skip invoke().
  screenInput(call.args);
  const substrate = ctx.access.services.substrate;
  const actor = await substrate.actorForApp(meta.appId, 'function');
  const [a, b, c] = call.args;
  const text = (v: unknown, name: string) => {
    if (typeof v !== 'string') throw errors.validation(`ctx.substrate.${call.op}: '${name}' must be a string.`);
    return v;
  };
  const options = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
  switch (call.op) {
    case 'propose':
      return substrate.propose(actor, {
        capability: text(a, 'capability'),
        payload: options(b),
        idempotency_key: typeof options(c).idempotency_key === 'string' ? (options(c).idempotency_key as string) : undefined,
        require_approval: options(c).require_approval === true,
      });
    case 'patchEntity':
      return substrate.propose(actor, { capability: 'patch_entity', payload: { id: text(a, 'id'), attrs_patch: b } });
    case 'mergeEntities':
      return substrate.propose(actor, { capability: 'merge_entities', payload: { loser_id: text(a, 'loser'), winner_id: text(b, 'winner'), reason: text(c, 'reason') } });
    case 'deleteEntity':
      return substrate.propose(actor, { capability: 'delete_entity', payload: { id: text(a, 'id'), reason: text(b, 'reason') } });
    case 'wsTicket':
      return substrate.stream.mintTicket(actor.accountId, actor.userId, { kind: 'app', id: meta.appId });
    case 'actions':
      return substrate.list(actor, { ...appActionsQuery(a), source_app_id: meta.appId });
    case 'action': {
      const action = await substrate.get(actor, text(a, 'action_id'));
      if (action.source_app_id !== meta.appId) throw substrateErrors.actionNotFound(action.action_id);
      return action;
    }
    case 'approve':
    case 'reject':
      if (!user) throw substrateErrors.personRequired(call.op, '/approve/{action_id}');
      return substrate.decideForApp(meta.appId, user.id, text(a, 'action_id'), call.op, typeof b === 'string' ? b : undefined);
    default:
      return substrate.read(actor, call.op, call.args);
  }
}

/** ctx.substrate.actions' query, as substrate_actions_list takes it (an unknown key is refused, like every input). */
const AppActionsQuery = z.strictObject({
  status: z.enum(['proposed', 'executed', 'rejected', 'all']).optional(),
  capability: z.string().max(100).optional(),
  limit: z.number().int().min(1).max(100).default(20),
  before: z.iso.datetime({ offset: true }).optional(),
});

function appActionsQuery(value: unknown): z.output<typeof AppActionsQuery> {
  const parsed = AppActionsQuery.safeParse(value ?? {});
  if (!parsed.success) throw fromZod(parsed.error);
  return parsed.data;
}

/** The end user whose token reached the function, else the function's own app as a service caller. */
async function callerOf(access: PlatformAccess, meta: FunctionMeta, user: EndUser | null): Promise<Caller> {
  if (user) return { kind: 'user', appId: meta.appId, userId: user.id, claims: user.claims };
  const app = await access.services.apps.get(meta.appId);
  if (!app) throw functionErrors.gone(meta.name);
  return { kind: 'service', accountId: app.account_id, appId: meta.appId, keyId: `function:${meta.id}` };
}

/**
 * fetch() to a URL under the platform's own origin, sent to this process's HTTP listener (or to config.baseUrl
 * when it serves none) with the function's headers as given: the route then authenticates whatever credential the
 * function holds, exactly as for any client. Redirects are not followed; request and response bodies are capped.
 */
async function platformFetch(ctx: ChannelContext, call: FetchCall): Promise<PlatformCallAnswer> {
  const { access, config } = ctx;
  const url = parsePlatformUrl(config, call.url);
  const body = call.body ? Buffer.from(call.body, 'base64') : null;
  const maxBody = config.functions.maxBodyBytes;
  if (body && body.length > maxBody) throw errors.payloadTooLarge(`${Math.round(maxBody / 1024 / 1024)} MB`);
  const target = new URL(url.pathname + url.search, access.listenUrl ?? config.baseUrl);
  const headers = forwardedHeaders(call.headers, url.host, body);
  return sendForwarded(target, call.method, headers, body, config.dataMaxResponseBytes);
}

/** Never trust the runner: only the platform's own origins are forwarded, and only to the platform. */
function parsePlatformUrl(config: Config, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.validation(`Invalid URL '${raw.slice(0, 200)}'.`);
  }
  if (!platformOrigins(config.baseUrl).includes(url.origin)) throw errors.validation(`'${url.origin}' is not this platform's address.`);
  return url;
}

/** The function's headers (repeated names kept) minus the hop and forwarding ones, with Host the platform's own. */
function forwardedHeaders(given: Array<[string, string]>, host: string, body: Buffer | null): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [key, value] of given) {
    const lower = key.toLowerCase();
    if (HOP_HEADERS.includes(lower) || lower.startsWith('x-forwarded-')) continue;
    const prev = headers[lower];
    headers[lower] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  headers.host = host;
  if (body) headers['content-length'] = String(body.length);
  return headers;
}

/**
 * One request to the platform; a response past `max` bytes becomes a 502 RESPONSE_TOO_LARGE result. Server-sent events
 * (a streamed chat completion) are answered at their head and their bytes streamed as they come, to the same cap.
 */
function sendForwarded(target: URL, method: string, headers: Record<string, string | string[]>, body: Buffer | null, max: number): Promise<PlatformCallAnswer> {
  return new Promise<PlatformCallAnswer>((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(target, { method, headers, timeout: FORWARD_TIMEOUT_MS }, (res) => {
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 502, headers: responseHeaders(res.rawHeaders), body: null, streamed: true, stream: capped(res, max) });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > max) {
          res.destroy();
          resolve({ status: 502, error: { code: 'RESPONSE_TOO_LARGE', message: `The platform's response exceeds ${max} bytes (SVC_DATA_MAX_RESPONSE_BYTES).`, remediation: 'Ask for fewer rows or columns per request.' } });
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 502, headers: responseHeaders(res.rawHeaders), body: size ? Buffer.concat(chunks).toString('base64') : null });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('the platform did not answer within 60 s')));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** The response's bytes, failing past `max` (the response is then dropped). */
function capped(res: http.IncomingMessage, max: number): AsyncIterable<Uint8Array> & { destroy(): void } {
  async function* read(): AsyncGenerator<Uint8Array> {
    let size = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) {
        res.destroy();
        throw new Error(`it exceeds ${max} bytes (SVC_DATA_MAX_RESPONSE_BYTES)`);
      }
      yield chunk;
    }
  }
  return Object.assign(read(), { destroy: () => void res.destroy() });
}

function responseHeaders(raw: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!.toLowerCase();
    if (HOP_RESPONSE_HEADERS.includes(key)) continue;
    out.push([key, raw[i + 1]!]);
  }
  return out;
}

/**
 * The functions area's port to the platform, as a transport: a running function's calls enter the tools' invoke()
 * (or this process's HTTP listener) like any client's. Built by the composition root once services exist.
 */
export class FunctionsPlatformChannel implements PlatformChannel {
  #access: PlatformAccess;
  readonly #config: Config;
  readonly #log: Logger;

  constructor(access: { services: Services; tools: readonly AnyTool[] }, config: Config, log: Logger) {
    this.#access = access;
    this.#config = config;
    this.#log = log;
  }

  /** From now on platform fetches go to this process's own listener (http://127.0.0.1:port). */
  listen(listenUrl: string): void {
    this.#access = { ...this.#access, listenUrl };
  }

  substrateLinked(appId: string): boolean | Promise<boolean> {
    return this.#access.services.substrate.isLinked(appId);
  }

  open(meta: FunctionMeta, user: EndUser | null): InvocationChannel {
    // Made on the invocation's first call: most invocations make none, and their end then has nothing to wait for.
    let ctx: ChannelContext | undefined;
    let ended = false;
    const context = (): ChannelContext => {
      if (ctx) return ctx;
      const txs = new InvocationTransactions(this.#access.services.data);
      // A call after the invocation ended (its code went on in the background) begins nothing that would stay open.
      if (ended) void txs.end();
      return (ctx = { access: this.#access, config: this.#config, log: this.#log, txs });
    };
    return {
      call: (call) => platformCall(context(), meta, user, call),
      end: () => {
        ended = true;
        return ctx?.txs.end().catch((err: unknown) => {
          this.#log.error({ err, function_id: meta.id }, 'rolling back the transactions of an invocation failed');
        });
      },
    };
  }
}
