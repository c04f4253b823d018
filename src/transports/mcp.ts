import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import type { Logger } from 'pino';
import {
  classifyInboundRequest,
  createMcpHandler,
  isInitializeRequest,
  LOG_LEVEL_META_KEY,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type CallToolResult,
  type InitializeRequest,
  type InputRequiredResult,
  type LoggingLevel,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { nodeMcpHandler } from './mcp-node.ts';
import { AppError, envelope, errors } from '../core/errors.ts';
import { invoke, MAX_INPUT_DEPTH, nestsDeeperThan, screenInput, toAppError } from '../core/invoke.ts';
import { inputJsonSchema } from '../core/schema.ts';
import type { AnyTool, SessionToolsets, ToolContext } from '../core/define.ts';
import type { Caller } from '../core/caller.ts';
import type { Services } from '../services.ts';
import { prompts } from '../../prompts/index.ts';
import { CORE_TOOLSET } from '../../tools/index.ts';
import { resourceTemplates, type TemplateContext } from '../../resources/templates.ts';
import { resolveMcpCaller } from './credentials.ts';
import { completeArgument, DEFAULT_LOG_LEVEL, observeToolCall, type SessionLogLevel } from './mcp-utilities.ts';
import { MCP_SESSION_IDLE_MS, resumeSession, type StoredSession } from './mcp-sessions.ts';
import { SessionEvents } from './mcp-events.ts';
import { canElicitUrl, elicitUrl, ModernPages } from './mcp-pages.ts';
import { McpTasks } from './mcp-tasks.ts';
import { INVALID_PARAMS, registerPrompts, registerResources, rpcError, updatedBy } from './mcp-resources.ts';
import { oauthIssuer, resourceMetadataUrl } from './raw/oauth-provider.ts';
import { sendNodeError, writeJson } from './rest.ts';
import { CORE, requestedAreas, TOOLSETS_AREA, TOOLSETS_HEADER, TOOLSETS_HEADER_NAME, TOOLSETS_TOOL, toolsetAreas } from './mcp-toolsets.ts';

/**
 * What every MCP session is told first: enough to build without reading /llms.txt (the guide for every reader, with the
 * index of the areas), which an agent pays for in its context: the flow, where an area's rules are, the pitfalls.
 */
const INSTRUCTIONS =
  'Backend platform for apps: each app has its own Postgres database, REST data API under row-level security, end-user auth, ' +
  'storage, functions and hosting. Flow: apps_create (keep app_id) -> schema_apply (dry_run: true shows the SQL) -> auth_signup ' +
  'two test users -> data_insert/data_select with user_token act as each -> functions_deploy, functions_invoke -> ' +
  "frontend_deploy_files. Before relying on an area's rules (schema: access, conditions, indexes; functions: ctx, transactions), " +
  "read its notes: resource svc://guide/<area>/notes, or platform_guide { area, tools: false }. svc://guide/llms.txt is the " +
  'guide for every reader, with all areas. Pitfalls: a table without a user_id uuid column is the service\'s alone unless its ' +
  'access says otherwise; unknown arguments are refused, named; follow an error\'s remediation before retrying.';

/** A session as this process holds it; its row (mcp-sessions.ts) is what every api process shares. */
interface Session {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  /** The transport behind a Node request and response. */
  node: NodeMcpRequestHandler;
  /** Settles once the transport is connected (and, for a session rebuilt here, initialized as stored). */
  ready: Promise<void>;
  state: SessionState;
  /** The last request of the session on this process. */
  lastSeen: number;
  /** The stored toolsets `state.areas` was last made from. */
  toolsets: readonly string[];
}

/**
 * What a server's handlers read when they run, not when they are built. A 2025-11-25 session's is refreshed from the
 * session's row on each request, so toolsets grown and a log level set on another process hold here too; a
 * 2026-07-28 request's is its own (toolsets from its URL or header, no session).
 */
interface SessionState {
  /** The session's id; undefined for a 2026-07-28 request, which has no session. */
  readonly id: string | undefined;
  areas: ReadonlySet<string>;
  readonly logLevel: SessionLogLevel;
}

/** What /mcp hands the SDK with each request (AuthInfo.extra): the caller and the toolsets the request names. */
interface McpAuth {
  caller: PlatformCaller;
  areas: ReadonlySet<string>;
}

/** Distinct 2026-07-28 instructions kept; real clients name a handful of toolset sets. */
const MAX_CACHED_INSTRUCTIONS = 256;

/** The levels of a JSON-RPC message around a tool's arguments (message, params, arguments). */
const MESSAGE_DEPTH = 3;

/** How long a 2025-11-25 client waits before reconnecting a dropped SSE stream (the priming event's `retry`). */
const SSE_RETRY_MS = 1_000;

/** What a session's row keeps of the client's initialize (capabilities, clientInfo): real clients send under 2 KB. */
const MAX_STORED_INITIALIZE_BYTES = 16 * 1024;

type PlatformCaller = Extract<Caller, { kind: 'platform' }>;

/** An HTTP request of /mcp as handle() takes it: node's, with its JSON body parsed and the request log's logger. */
type McpHttpRequest = IncomingMessage & { body?: unknown; log?: Logger; auth?: AuthInfo };

/**
 * Streamable HTTP MCP at /mcp, both revisions on one URL, chosen per request as the SDK classifies it: 2025-11-25
 * (and earlier) clients get sessions (one SDK server per session, its row shared by every api process); 2026-07-28
 * clients are served statelessly, one SDK server per request. Every descriptor is a tool on both.
 */
export class McpTransport {
  readonly #tools: ReadonlyMap<string, AnyTool>;
  /** Every registered tool, REST-only ones too: the resource templates read through them (data_openapi). */
  readonly #registry: ReadonlyMap<string, AnyTool>;
  /** Each tool's toolset (area): its tools/<area> folder, else its name's prefix. */
  readonly #areaOf: ReadonlyMap<string, string>;
  readonly #areas: readonly string[];
  readonly #listed: ReadonlyMap<string, Record<string, unknown>>;
  /** tools/list answers per set of areas, computed once per distinct set. */
  readonly #listCache = new Map<string, ReadonlyArray<Record<string, unknown>>>();
  /** 2026-07-28 instructions per set of areas: every request builds a server, the text depends on its areas only. */
  readonly #modernInstructions = new Map<string, string>();
  readonly #services: Services;
  readonly #log: Logger;
  readonly #sessions = new Map<string, Session>();
  readonly #sweeper: NodeJS.Timeout;
  readonly #pages: ModernPages;
  readonly #tasks: McpTasks;
  /** The 2026-07-28 revision: a server per request, no sessions (2025 requests never reach it). */
  readonly #modern: McpHttpHandler;
  readonly #modernNode: NodeMcpRequestHandler;
  #unwatch: (() => void) | undefined;

  constructor(allTools: readonly AnyTool[], services: Services, log: Logger, requestStateKey: Uint8Array) {
    const tools = allTools.filter((t) => t.mcp !== false);
    this.#sweeper = setInterval(() => this.#closeIdle(Date.now() - MCP_SESSION_IDLE_MS), 60_000);
    this.#sweeper.unref();
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#registry = new Map(allTools.map((t) => [t.name, t]));
    this.#services = services;
    this.#log = log;
    this.#areaOf = new Map(tools.map((t) => [t.name, t.area ?? t.name.split('_')[0]!]));
    this.#areas = [...new Set(this.#areaOf.values())];
    // Computed once: the JSON Schemas never change while the process runs. No outputSchema: it was 40% of
    // tools/list. Without one the specification makes structuredContent optional, so results carry their JSON once,
    // as text content (see #call).
    this.#listed = new Map(
      tools.map((t) => [
        t.name,
        { name: t.name, title: t.title, description: t.description, inputSchema: inputJsonSchema(t), ...(t.annotations ? { annotations: t.annotations } : {}) },
      ]),
    );
    this.#pages = new ModernPages(requestStateKey);
    this.#tasks = new McpTasks(requestStateKey);
    this.#modern = createMcpHandler(({ authInfo }) => this.#modernServer(authInfo), {
      legacy: 'reject',
      onerror: (err) => log.debug({ err: err.message }, 'mcp request refused'),
    });
    this.#modernNode = nodeMcpHandler(this.#modern);
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** Tells the sessions this process holds when a resource they subscribed to may have changed, until close(). */
  start(): void {
    this.#unwatch = this.#services.appChanges.subscribe(
      (appId) => void this.#resourcesChanged((subscriptions) => updatedBy(appId, subscriptions)),
      (uri) => void this.#resourcesChanged((subscriptions) => subscriptions.filter((s) => s === uri)),
    );
  }

  /**
   * An app's definition changed, or work moved on: each session held here that subscribed to a resource it updated
   * (`updated` picks them from the session's subscriptions) gets notifications/resources/updated, on its standalone
   * stream (which this process holds, if any does). Its subscriptions are read from its row, as the subscribe may have
   * reached another process.
   */
  async #resourcesChanged(updated: (subscriptions: readonly string[]) => string[]): Promise<void> {
    for (const [id, session] of this.#sessions) {
      const stored = await this.#services.mcpSessions.find(id, { use: false }).catch(() => undefined);
      for (const uri of updated(stored?.subscriptions ?? [])) await session.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  }

  /**
   * Serves one HTTP request of /mcp: node's request with its parsed JSON body (and the request log's `log`), from
   * express or from the hot path before it (mcp-hot-path.ts), so only node's API is used here.
   */
  handle = async (req: McpHttpRequest, res: ServerResponse): Promise<void> => {
    try {
      const caller = await this.#platformCaller(req);
      const areas = requestedAreas(queryToolsets(req.url), req.headers[TOOLSETS_HEADER], this.#areas);
      // The caller is re-resolved on every HTTP request, so a revoked key or token stops an open session too.
      const extra: McpAuth = { caller, areas };
      req.auth = { token: '', clientId: caller.accountId, scopes: [], extra: extra as unknown as Record<string, unknown> };
      // Refused before the SDK parses it: its schemas recurse, and a message nested deep enough overflows them.
      if (nestsDeeperThan(req.body, MAX_INPUT_DEPTH + MESSAGE_DEPTH)) return this.#tooDeep(req.body, res);
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string') return await this.#serve(sessionId, caller, req, res);
      if (req.method === 'POST' && isInitializeRequest(req.body)) {
        // Later requests' toolsets are ignored: a session grows only through platform_toolsets_enable, which tells
        // the client (notifications/tools/list_changed).
        return await this.#open(caller, new Set(areas), req.body as InitializeRequest, req, res);
      }
      if (isLegacy(req)) {
        return sendRpcError(res, 400, 'No session: send an initialize request first (without Mcp-Session-Id), or speak MCP 2026-07-28 (every request carries its _meta).');
      }
      const problem = inputResponsesProblem(req.body);
      if (problem) return writeJson(res, 200, { jsonrpc: '2.0', id: (req.body as { id?: unknown }).id ?? null, error: { code: INVALID_PARAMS, message: problem } });
      await this.#modernNode(req, res, req.body);
    } catch (err) {
      const failure = toAppError(err, req.log ?? this.#log, 'mcp');
      const challenge = failure.status === 401 ? bearerChallenge(this.#services.config.baseUrl, failure) : undefined;
      if (challenge) res.setHeader('WWW-Authenticate', challenge);
      sendNodeError(res, failure, this.#services.config.baseUrl);
    }
  };

  /**
   * The answer to a message nested deeper than any input may be: a tool call's is the tool's VALIDATION_FAILED
   * result naming the field, as invoke() would give it; any other message's is invalid params.
   */
  #tooDeep(body: unknown, res: ServerResponse): void {
    const { id = null, method, params } = (body ?? {}) as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    try {
      if (method === 'tools/call') screenInput(params?.arguments);
    } catch (err) {
      const area = this.#areaOf.get(String(params?.name));
      const failure = area ? (err as AppError).inArea(area) : (err as AppError);
      return writeJson(res, 200, { jsonrpc: '2.0', id, result: errorResult(failure, this.#services.config.baseUrl) });
    }
    writeJson(res, 200, { jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid params: values may nest at most ${MAX_INPUT_DEPTH} levels deep.` } });
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#unwatch?.();
    const open = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all([this.#modern.close(), ...open.map((s) => s.transport.close().catch(() => {}))]);
  }

  /** Closes this process's copies of sessions it has not served lately; their rows stay for the other processes. */
  #closeIdle(before: number): void {
    for (const [id, session] of this.#sessions) {
      if (session.lastSeen < before) this.#forget(id);
    }
  }

  #forget(id: string): void {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    void session.transport.close().catch(() => {});
  }

  async #platformCaller(req: McpHttpRequest): Promise<PlatformCaller> {
    const caller = await resolveMcpCaller(req.headers.authorization, this.#services);
    if (caller.kind === 'none') throw errors.authRequired();
    if (caller.kind !== 'platform') throw errors.wrongCredential(['platform API key', 'OAuth access token']);
    return caller;
  }

  /** A new session: its row first, so that any api process can serve the client once it has the session's id. */
  async #open(caller: PlatformCaller, areas: Set<string>, init: InitializeRequest, req: McpHttpRequest, res: ServerResponse): Promise<void> {
    const { protocolVersion, capabilities, clientInfo } = init.params;
    const size = Buffer.byteLength(JSON.stringify({ protocolVersion, capabilities, clientInfo }));
    if (size > MAX_STORED_INITIALIZE_BYTES) {
      // Kept in the session's row for every api process: a client may not park megabytes there per session.
      throw errors.validation(`The initialize request's capabilities and clientInfo are ${size} bytes; at most ${MAX_STORED_INITIALIZE_BYTES} are accepted.`, [
        { path: 'params.capabilities', message: `at most ${MAX_STORED_INITIALIZE_BYTES} bytes with clientInfo` },
      ]);
    }
    const stored: StoredSession = {
      id: randomUUID(),
      accountId: caller.accountId,
      toolsets: [...areas],
      logLevel: DEFAULT_LOG_LEVEL,
      initialize: { protocolVersion, capabilities, clientInfo },
      subscriptions: [],
    };
    await this.#services.mcpSessions.open(stored);
    const session = this.#hold(stored, (server, transport) => server.connect(transport));
    await session.ready;
    await session.node(req, res, req.body);
    // Refused before initializing (a bad Accept header, say): no client holds the id.
    if (session.transport.sessionId === undefined) {
      this.#forget(stored.id);
      await this.#services.mcpSessions.end(stored.id);
    }
  }

  /**
   * A request of an open session, on whichever api process it reaches: the session's row (cached while this process
   * hears of every change to it) says whether it is still open and whose it is, and refreshes what its handlers
   * read; a process without the session rebuilds it.
   */
  async #serve(id: string, caller: PlatformCaller, req: McpHttpRequest, res: ServerResponse): Promise<void> {
    let stored = await this.#services.mcpSessions.find(id);
    // The notice of toolsets grown on another process may still be on its way here when the client, answered there,
    // already asks this one: what growth changes is read from the row itself (a tools/list is rare next to calls).
    if (stored && this.#mayHaveGrown(req.body, stored.toolsets)) stored = await this.#services.mcpSessions.find(id, { use: false, fresh: true });
    if (!stored) {
      // Ended (DELETE) or expired, possibly on another process: this one's copy goes too.
      this.#forget(id);
      return sendRpcError(res, 404, 'Session not found; initialize a new session.');
    }
    if (stored.accountId !== caller.accountId) throw errors.wrongCredential(['a credential of the account that opened this session']);
    const session = this.#sessions.get(id) ?? this.#hold(stored, (server, transport) => resumeSession(server, transport, stored.initialize));
    // A new Set only when the row's toolsets changed (a fresh row after a notice): most requests change nothing.
    if (session.toolsets !== stored.toolsets) session.state.areas = new Set((session.toolsets = stored.toolsets));
    session.state.logLevel.level = stored.logLevel;
    session.lastSeen = Date.now();
    await session.ready;
    await session.node(req, res, req.body);
  }

  /** Whether a request reads what platform_toolsets_enable grows: tools/list, or a call of a tool outside `toolsets`. */
  #mayHaveGrown(body: unknown, toolsets: readonly string[]): boolean {
    const { method, params } = (body ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method === 'tools/list') return true;
    if (method !== 'tools/call' || typeof params?.name !== 'string' || !this.#tools.has(params.name)) return false;
    return !this.#inToolsets(params.name, new Set(toolsets));
  }

  /**
   * Holds a session in this process: its SDK server and transport, kept at once (before `start` settles) so that
   * concurrent requests share one. DELETE ends the session's row for every process; closing the transport (DELETE,
   * the idle sweep, shutdown) forgets it here only.
   */
  #hold(stored: StoredSession, start: (server: Server, transport: WebStandardStreamableHTTPServerTransport) => Promise<void>): Session {
    const { id } = stored;
    const state: SessionState = { id, areas: new Set(stored.toolsets), logLevel: { level: stored.logLevel } };
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: () => this.#services.mcpSessions.end(id),
      // Every SSE stream starts with an event id and a retry interval, so a client whose stream dropped resumes it.
      eventStore: new SessionEvents(),
      retryInterval: SSE_RETRY_MS,
    });
    transport.onclose = () => {
      if (this.#sessions.get(id)?.transport === transport) this.#sessions.delete(id);
    };
    const node = nodeMcpHandler({ fetch: (request, options) => transport.handleRequest(request, options) });
    const server = this.#server(state);
    const session: Session = { server, transport, node, state, lastSeen: Date.now(), toolsets: stored.toolsets, ready: start(server, transport) };
    session.ready.catch(() => this.#forget(id));
    this.#sessions.set(id, session);
    return session;
  }

  /** The server of one 2026-07-28 request: its caller and toolsets come with the request. */
  #modernServer(authInfo: AuthInfo | undefined): Server {
    const { areas } = authInfo?.extra as unknown as McpAuth;
    return this.#server({ id: undefined, areas, logLevel: { level: undefined } });
  }

  /** Whether a session with these toolsets lists the tool: its area is loaded, or `core` and it is a core tool. */
  #inToolsets(name: string, toolsets: ReadonlySet<string>): boolean {
    return toolsets.has(this.#areaOf.get(name)!) || (toolsets.has(CORE) && CORE_TOOLSET.includes(name));
  }

  /** The tools/list answer for a set of toolsets, in registry order. */
  listFor(areas: ReadonlySet<string>): ReadonlyArray<Record<string, unknown>> {
    const key = [...areas].sort().join(',');
    let listed = this.#listCache.get(key);
    if (!listed) {
      listed = [...this.#listed.entries()].filter(([name]) => this.#inToolsets(name, areas)).map(([, t]) => t);
      this.#listCache.set(key, listed);
    }
    return listed;
  }

  /**
   * The instructions (initialize, or server/discover), naming the toolsets and how to load others: grown within a
   * 2025-11-25 session, named on every request on 2026-07-28, which has no session.
   */
  #instructions(state: SessionState): string {
    return this.instructionsFor(state.areas, state.id !== undefined);
  }

  /** The instructions of a session (or, without one, a 2026-07-28 request) with these toolsets. */
  instructionsFor(areas: ReadonlySet<string>, session: boolean): string {
    const others = this.#areas.filter((a) => !areas.has(a));
    if (others.length === 0) return INSTRUCTIONS;
    if (!session) {
      return `${INSTRUCTIONS} This request has the toolsets ${[...areas].join(', ')}; for the others (${others.join(', ')}) send every request to /mcp?toolsets=<comma-separated names> (or with the ${TOOLSETS_HEADER_NAME} header).`;
    }
    const how = this.#inToolsets(TOOLSETS_TOOL, areas)
      ? `add them to this session with ${TOOLSETS_TOOL} { toolsets: [...] } (tools/list then includes them), or connect to /mcp?toolsets=<comma-separated names> to start every session with them`
      : `open a new session with /mcp?toolsets=<comma-separated names> (with ${TOOLSETS_AREA}, ${TOOLSETS_TOOL} adds more later)`;
    return `${INSTRUCTIONS} This session has the toolsets ${[...areas].join(', ')}; for the others (${others.join(', ')}) ${how}.`;
  }

  /** A 2026-07-28 request's instructions, computed once per distinct set of areas. */
  #requestInstructions(state: SessionState): string {
    // In the order named: the text lists them so.
    const key = [...state.areas].join(',');
    let text = this.#modernInstructions.get(key);
    if (text === undefined) {
      // Bounded: a caller may name its toolsets in any order and combination.
      if (this.#modernInstructions.size >= MAX_CACHED_INSTRUCTIONS) this.#modernInstructions.clear();
      this.#modernInstructions.set(key, (text = this.#instructions(state)));
    }
    return text;
  }

  /**
   * The server of a 2025-11-25 session (`state.areas` is the session's own set, which platform_toolsets_enable grows)
   * or of one 2026-07-28 request.
   */
  #server(state: SessionState): Server {
    const sessionId = state.id;
    const server = new Server(
      { name: 'svc-platform', version: '0.1.0' },
      {
        // Resource subscriptions and logging are a session's (2025-11-25): the 2026-07-28 revision has neither to keep.
        capabilities: {
          // A session's tool list grows (platform_toolsets_enable); a 2026-07-28 request's is what it names.
          tools: sessionId !== undefined ? { listChanged: true } : {},
          prompts: {},
          completions: {},
          ...(sessionId !== undefined ? { resources: { subscribe: true }, logging: {} } : { resources: {} }),
        },
        instructions: sessionId !== undefined ? this.#instructions(state) : this.#requestInstructions(state),
        ...(sessionId === undefined ? { requestState: { verify: this.#pages.verify } } : {}),
      },
    );
    if (sessionId !== undefined) {
      // Replaces the SDK's own setLevel handler, which keeps no level until one is set and so sends every level.
      server.setRequestHandler('logging/setLevel', async (request) => {
        state.logLevel.level = request.params.level;
        await this.#services.mcpSessions.setLogLevel(sessionId, request.params.level);
        return {};
      });
    }
    server.setRequestHandler('completion/complete', async (request, ctx) => ({
      completion: await this.#complete(request.params, ctx),
    }));
    server.setRequestHandler('tools/list', async () => ({ tools: this.listFor(state.areas) as never }));
    // The tasks extension is defined on 2026-07-28 only; a 2025-11-25 session never sees it.
    if (sessionId === undefined) this.#tasks.register(server, (ctx) => this.#templateContext(ctx).call);
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const caller = callerOf(ctx);
      const { name, arguments: args } = request.params;
      if (sessionId === undefined) return this.#tasks.call(server, ctx, name, args, () => this.#modernCall(server, ctx, caller, name, args, state));
      const sendToPage = canElicitUrl(server) ? elicitUrl(server, ctx) : undefined;
      // The notice goes on the call's own response stream, which the client is reading, rather than the optional
      // standalone GET stream, which it may not have opened yet.
      const toolsets = this.#growable(sessionId, state, () => ctx.mcpReq.notify({ method: 'notifications/tools/list_changed' }));
      const run = () => this.#call(name, args, caller, ctx, state.areas, { sendToPage, toolsets, modern: false });
      return observeToolCall(state.logLevel, ctx, name, run).catch((err: AppError) => errorResult(err, this.#services.config.baseUrl));
    });
    registerResources(server, { services: this.#services, templateContext: (ctx) => this.#templateContext(ctx) }, sessionId);
    registerPrompts(server);
    return server;
  }

  /**
   * A tools/call of the 2026-07-28 revision: log messages only at the level its _meta names; a person sent to a page
   * by an input_required answer (the client retries with their answer), when the client declared URL elicitation.
   */
  async #modernCall(server: Server, ctx: ServerContext, caller: Caller, name: string, args: unknown, state: SessionState): Promise<CallToolResult | InputRequiredResult> {
    const level = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
    const pages = canElicitUrl(server) ? this.#pages.call(ctx, name) : undefined;
    const run = () => this.#call(name, args, caller, ctx, state.areas, { sendToPage: pages?.sendToPage, pageAnswer: pages?.pageAnswer, toolsets: undefined, modern: true });
    try {
      return await observeToolCall({ level }, ctx, name, run);
    } catch (err) {
      return (await pages?.asked()) ?? errorResult(err as AppError, this.#services.config.baseUrl);
    }
  }

  /**
   * completion/complete for the arguments of the per-app resource templates and of the prompts. An unknown template
   * or prompt is invalid params, as for prompts/get; a known one's free-text arguments complete to nothing.
   */
  async #complete(
    params: { ref: { type: string; uri?: string; name?: string }; argument: { name: string; value: string }; context?: { arguments?: Record<string, string> } },
    ctx: ServerContext,
  ): Promise<{ values: string[]; total: number; hasMore: boolean }> {
    const { ref } = params;
    const known =
      ref.type === 'ref/resource' ? resourceTemplates.some((t) => t.uriTemplate === ref.uri) : prompts.some((p) => p.name === ref.name);
    if (!known) throw rpcError(INVALID_PARAMS, `Unknown ${ref.type === 'ref/resource' ? `resource template ${ref.uri}; call resources/templates/list` : `prompt ${ref.name}; call prompts/list`}.`);
    const query = { argument: params.argument.name, value: params.argument.value, context: params.context?.arguments ?? {} };
    return completeArgument(this.#templateContext(ctx).call, query);
  }

  /**
   * A session's toolsets as platform_toolsets_enable sees them: growth is written to the session's row, which every
   * process hears of before the session's next request; adding any announces the changed tool list.
   */
  #growable(sessionId: string, state: SessionState, announce: () => Promise<void>): SessionToolsets {
    return {
      enable: async (names) => {
        const wanted = toolsetAreas(names, this.#areas, `Call ${TOOLSETS_TOOL} with names from`);
        const had = state.areas;
        const added = [...wanted].filter((a) => !had.has(a));
        const before = new Set(this.listFor(had).map((t) => t.name));
        if (added.length) {
          state.areas = new Set(await this.#services.mcpSessions.grow(sessionId, added));
          await announce();
        }
        const tools = this.listFor(state.areas).map((t) => String(t.name)).filter((n) => !before.has(n));
        return { toolsets: [...state.areas], added, tools };
      },
    };
  }

  /** Resource templates read through the tools themselves, so they authorize exactly as those tools do. */
  #templateContext(ctx: ServerContext): TemplateContext {
    const caller = callerOf(ctx);
    const requestId = String(ctx.mcpReq.id);
    const log = this.#log.child({ mcp_request: requestId });
    const clientId = caller.kind === 'platform' ? `mcp:${caller.accountId}` : 'mcp';
    return {
      tools: [...this.#tools.values()],
      call: (name, args) => {
        const tool = this.#registry.get(name);
        if (!tool) throw errors.notFound(`Tool '${name}'`, 'Call tools/list for the available tools.');
        return invoke(tool, args, { services: this.#services, admission: this.#services.admission, audit: this.#services.audit, caller, requestId, clientId, log });
      },
    };
  }

  /** Runs a tool; a refusal (unknown tool, toolset not loaded, the tool's own error) throws its AppError. */
  async #call(
    name: string,
    args: unknown,
    caller: Caller,
    ctx: ServerContext,
    areas: ReadonlySet<string>,
    channels: { sendToPage: ToolContext['sendToPage']; pageAnswer?: ToolContext['pageAnswer']; toolsets: SessionToolsets | undefined; modern: boolean },
  ): Promise<CallToolResult> {
    const tool = this.#tools.get(name);
    const rpcId = String(ctx.mcpReq.id);
    const log = this.#log.child({ mcp_request: rpcId, tool: name });
    if (!tool) throw errors.notFound(`Tool '${name}'`, 'Call tools/list for the available tools.');
    const area = this.#areaOf.get(name)!;
    if (!this.#inToolsets(name, areas)) throw this.#notInToolsets(name, area, areas, channels.modern);
    try {
      const clientId = caller.kind === 'platform' ? `mcp:${caller.accountId}` : 'mcp';
      const { sendToPage, pageAnswer, toolsets } = channels;
      const base = { services: this.#services, admission: this.#services.admission, audit: this.#services.audit, caller, requestId: rpcId, clientId, log };
      const result = await invoke(tool, args, { ...base, signal: ctx.mcpReq.signal, sendToPage, pageAnswer, toolsets });
      // The JSON once, as text: every client reads text content, while structuredContent (optional without an
      // outputSchema) would repeat it. Pre-serialized JSON (JsonText) is compacted through its toJSON.
      const text = JSON.stringify(result);
      if (tool.appScoped) this.#services.billing.traffic.served(String((args as { app_id?: unknown }).app_id), Buffer.byteLength(text));
      return { content: [{ type: 'text', text }] };
    } catch (err) {
      throw toAppError(err, log, name);
    }
  }

  /** Refused rather than run: the agent would be calling a tool it was never shown the schema of. */
  #notInToolsets(name: string, area: string, areas: ReadonlySet<string>, modern: boolean): AppError {
    const remediation = modern
      ? `Send your requests to /mcp?toolsets=default,${area} (or with the ${TOOLSETS_HEADER_NAME} header), then tools/list for its tools.`
      : this.#inToolsets(TOOLSETS_TOOL, areas)
        ? `Call ${TOOLSETS_TOOL} { toolsets: ["${area}"] }, then tools/list for its tools.`
        : `Open a new MCP session with /mcp?toolsets=default,${area} (or the ${TOOLSETS_HEADER_NAME} header); this one has no ${TOOLSETS_TOOL} (toolset ${TOOLSETS_AREA}).`;
    const loaded = `${modern ? 'this request did not name' : 'this session did not load'} (loaded: ${[...areas].join(', ')})`;
    return new AppError(400, 'TOOL_NOT_IN_TOOLSETS', `Tool '${name}' is in the toolset '${area}', which ${loaded}.`, remediation, { toolset: area }).inArea(area);
  }
}

/** The caller /mcp resolved for the request (AuthInfo.extra). */
function callerOf(ctx: ServerContext): Caller {
  return (ctx.http?.authInfo?.extra as McpAuth | undefined)?.caller ?? { kind: 'none' };
}

/**
 * Whether a request without a session is of the 2025 revisions (initialize excepted): no per-request _meta claim.
 * The SDK's own classification, so that this routing never disagrees with what its modern handler accepts.
 */
function isLegacy(req: McpHttpRequest): boolean {
  const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
  const outcome = classifyInboundRequest({
    httpMethod: req.method ?? 'GET',
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
    body: req.body,
  });
  return outcome.kind === 'legacy';
}

/**
 * The WWW-Authenticate of a 401 on /mcp: how a client that knows only this URL finds the authorization server
 * (RFC 9728 §5.1; RFC 6750 §3: no error code when no credential was sent). None when the platform is no
 * authorization server (a plain-http base URL).
 */
function bearerChallenge(baseUrl: string, failure: AppError): string | undefined {
  if (!oauthIssuer(baseUrl)) return undefined;
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl(baseUrl)}"`;
  return failure.code === 'AUTH_REQUIRED' ? challenge : `${challenge}, error="invalid_token"`;
}

function errorResult(err: AppError, baseUrl: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ status: err.status, ...envelope(err, baseUrl) }) }] };
}

/**
 * What is wrong with the answers a 2026-07-28 retry carries, if anything: `inputResponses` must be an object of
 * response objects (the SDK would drop the others silently, and the tool would run as if nothing had been answered).
 */
function inputResponsesProblem(body: unknown): string | undefined {
  const params = (body as { params?: unknown } | undefined)?.params;
  if (!isObject(params) || !('inputResponses' in params)) return undefined;
  const responses = params.inputResponses;
  if (!isObject(responses)) return 'Invalid inputResponses: an object of responses, keyed as the inputRequests were, is expected.';
  const bad = Object.keys(responses).filter((key) => !isObject(responses[key]));
  return bad.length ? `Invalid inputResponses: ${bad.slice(0, 5).map((k) => `'${k.slice(0, 50)}'`).join(', ')} is not a response object.` : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sendRpcError(res: ServerResponse, status: number, message: string): void {
  writeJson(res, status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

/** The `toolsets` of a request's query string, as express's simple query parser reads it (a name given twice: both). */
function queryToolsets(url: string | undefined): string | string[] | undefined {
  const at = url?.indexOf('?') ?? -1;
  return at < 0 ? undefined : parseQuery(url!.slice(at + 1)).toolsets;
}
