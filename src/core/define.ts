import type { z } from 'zod';
import { strictInput } from './strict.ts';
import type { Logger } from 'pino';
import type { AppError } from './errors.ts';
import type { Caller, CallerKind, Role } from './caller.ts';

/**
 * What a handler gets besides its input. `S` is the services its tools declare they use, `A` the app record of
 * app-scoped tools: both are given by the layer above (tools/define.ts), so that core knows no area.
 */
export interface ToolContext<S = unknown, A = unknown> {
  services: S;
  caller: Caller;
  requestId: string;
  /** Client address for rate limits: the HTTP peer (honouring X-Forwarded-For), or `mcp:<account>` over MCP. */
  clientId: string;
  log: Logger;
  /** The app named by the input's app_id, already authorized for this caller; set when the tool is app-scoped. */
  app: A | undefined;
  /** Aborted when the client went away (REST connection closed, MCP request cancelled): stop outbound work. */
  signal?: AbortSignal | undefined;
  /** Whether the transport can send a StreamBody output (REST can; MCP results are single messages). */
  canStream?: boolean | undefined;
  /**
   * Sends the person at the client to a page of the platform (MCP URL-mode elicitation), where they act themselves:
   * nothing the client answers is taken for their decision. Absent when the client cannot be asked (REST, or an MCP
   * client without URL elicitation).
   */
  sendToPage?: ((message: string, url: string) => Promise<PageVisit>) | undefined;
  /**
   * Whether the person agreed to open `url`, when this call is the retry that carries their answer to an earlier
   * sendToPage (MCP 2026-07-28, where they may have acted on the page before the client retried); undefined otherwise.
   */
  pageAnswer?: ((url: string) => boolean | undefined) | undefined;
  /** The browser session of a REST request (the session routes set and clear it); absent over MCP. */
  session?: SessionChannel | undefined;
  /** The toolsets of the MCP session making the call, which platform_toolsets_enable grows; absent over REST. */
  toolsets?: SessionToolsets | undefined;
}

/** An MCP session's toolsets (areas of tools), which may grow while the session is open. */
export interface SessionToolsets {
  /**
   * Adds the named toolsets (area names, `default`, `all`; unknown names are a 400 naming the valid ones) and, when
   * that added any, tells the client its tool list changed.
   */
  enable(names: readonly string[]): Promise<ToolsetsEnabled>;
}

export interface ToolsetsEnabled {
  /** The session's toolsets after the call. */
  toolsets: string[];
  /** The toolsets this call added (none when all were loaded already). */
  added: string[];
  /** The tools the added toolsets bring. */
  tools: string[];
}

/** A REST request's session cookie: the token it carried, and a way to set a new one or clear it. */
export interface SessionChannel {
  token: string | undefined;
  set(session: { token: string; expiresAt: Date } | null): void;
}

/** A URL elicitation's outcome: whether the person agreed to open the page, and the notice that they are done. */
export interface PageVisit {
  opened: boolean;
  /** Tells the client that what the page was for is finished (notifications/elicitation/complete). */
  complete(): Promise<void>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpBinding<O> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. /apps/{app_id}. Path params are merged into the input. */
  path: string;
  /** Path served on an app's own host when subdomain routing is on; the app comes from the Host header. */
  subdomainPath?: string;
  /** The JSON body limit of /mcp (4 MB) instead of SVC_BODY_LIMIT, for inputs that carry code or file bytes. */
  largeBody?: boolean;
  /** Success status; 204 sends no body. */
  status?: number;
  /** Content type of a non-JSON success body (the body is then sent as text). */
  contentType?: string;
  /** Request headers copied into the input: header name (lower case) to input field. */
  headers?: Record<string, string>;
  /** Input field that receives the whole JSON body (any JSON value, e.g. an array) instead of merging its fields. */
  bodyField?: string;
  /** Input field that receives the raw query string, for routes whose query keys are data (PostgREST filters). */
  queryField?: string;
  /** Query parameters a body route also takes into its input (GoTrue's `grant_type`, `scope`, `redirect_to`). */
  query?: readonly string[];
  /**
   * Query parameters a body route accepts and ignores: a client library's own, which it sends to every URL it builds
   * (realtime-js repeats its socket's `apikey` and `vsn` on its HTTP broadcasts).
   */
  ignoredQuery?: readonly string[];
  /** The route also takes an application/octet-stream body: its bytes (a Buffer) are the input's bodyField. */
  binaryBody?: true;
  /** The wire form when it differs from the output object: status, headers, body (bare arrays, plain text). */
  respond?: (output: O) => WireResponse;
  /**
   * How errors of this route are rendered: the standard envelope (default) or OpenAI's `{ error: { message, type,
   * code } }`, for routes that OpenAI clients call (the AI gateway), or the people routes' flat `{ error: "<code>" }`
   * (which may also change the status: see peopleError). Applies to every error on the path, including
   * those raised before the handler (body parsing, authentication).
   */
  errorShape?: ErrorShape;
  /**
   * Headers sent with every error reply of this route, including errors raised before the handler (body parsing,
   * authentication), for routes whose spec puts headers on every reply (people: provider, credits, USD).
   */
  errorHeaders?: (err: AppError) => Record<string, string>;
  /**
   * The credentials this route accepts over REST when fewer than the tool's `auth` (which MCP uses): the substrate's
   * routes take substrate keys and people's browser sessions ('session': a platform caller via a session cookie, the
   * spec's identity-provider session), while MCP sessions (platform key) reach the same tools as an agent. A service
   * key is then refused with 403, any other credential with 401 AUTH_INVALID_TOKEN.
   */
  restAuth?: readonly (CallerKind | 'session')[];
  /**
   * A table name this route's last literal segment may also be (`models`, `responses`): on the platform path, when the
   * app has a table of that name (made before the name was reserved), the data API's route serves the request instead.
   */
  shadowedByTable?: string;
  /** Refuse a state-changing request from a foreign web origin even without a session cookie (sign-in: login CSRF). */
  sameOrigin?: true;
}

/**
 * standard: the envelope; openai: OpenAI's body (AI gateway); people: the spec's flat `{ error: "<code>" }`; gotrue:
 * GoTrue's `{ code, error_code, msg, message }` (the auth routes supabase-js calls); storage: Supabase Storage's
 * `{ statusCode, code, error, message }` (the storage routes storage-js calls); realtime: Supabase Realtime's
 * `{ message }` with our `code` beside it (the broadcast routes realtime-js calls).
 */
export type ErrorShape = 'standard' | 'openai' | 'people' | 'postgrest' | 'gotrue' | 'storage' | 'realtime';

export interface WireResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Omitted: the output object itself. */
  body?: unknown;
}

/** How a tool meets the account's billing status and the app's pause, besides the default (ToolDescriptor.billingGate). */
export type BillingGateKind = 'write' | 'session' | 'exempt';

export interface ToolDescriptor<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType, S = unknown, A = unknown> {
  /** snake_case <area>_<verb>[_<noun>] */
  name: string;
  title: string;
  /** Written for a model: when to use it, what it returns, what to call next. */
  description: string;
  input: I;
  output: O;
  /** Credential kinds that may call the tool. */
  auth: readonly CallerKind[];
  /**
   * The lowest account role a platform caller (key, session or OAuth token) needs. Default: viewer for read-only tools
   * (annotations.readOnlyHint), developer for the rest (requiredRole).
   */
  role?: Role;
  /** Whether input.app_id names an app the caller must be entitled to. */
  appScoped?: boolean;
  /**
   * Whether a call changes the app, which on a protected app only a person may do (agents go through a branch:
   * src/apps/protection.ts). Default (see governs): every app-scoped tool that is not read-only and that no end user
   * may call, since end users' tools are the app at work, not a change to it. false: a tool of the app at work that
   * only keys call (functions_invoke, people search); a function judges the parsed input (schema_apply's dry run
   * changes nothing).
   */
  governed?: false | ((input: z.output<I>) => boolean);
  http: HttpBinding<z.output<O>> | false;
  /**
   * How the account's billing status and the app's pause apply (app-scoped tools; src/billing/gate.ts). Default: a
   * paused app or suspended account refuses the call, and a soft-locked account refuses writes (tools that are
   * neither read-only nor destructive: deleting is how usage drops). 'session': like the default, but served while
   * soft-locked (end users signing in to read). 'write': a write whatever its annotations say (schema_apply may
   * drop, but mostly creates). 'exempt': always served (app management). A function decides from the parsed input
   * (undefined: the default), for a read that may spend (rag_query with synthesize).
   */
  billingGate?: BillingGateKind | ((input: z.output<I>) => BillingGateKind | undefined);
  /** false: REST only, not offered over MCP (e.g. a human's approval, which an agent must not give itself). */
  mcp?: false;
  /**
   * The area (toolset) the tool belongs to, set when the registry is built (tools/index.ts): its calls' errors link
   * that area's section of the guide (documentation_url).
   */
  area?: string;
  /** What a successful call changed, for the account's audit log (see ToolAudit). */
  audit?: ToolAudit<z.output<I>, z.output<O>>;
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  handler: (input: z.output<I>, ctx: ToolContext<S, A>) => Promise<z.input<O>>;
}

export type AnyTool = ToolDescriptor<z.ZodType, z.ZodType, any, any>;

/**
 * A tool's entry in the account's audit log, written by invoke() after the call succeeded (through the recorder the
 * composition root installs, as it installs the app admission): who, from which address, comes from the caller. A
 * change whose entry needs what only its transaction knows is recorded in that transaction instead, by its area.
 */
export interface ToolAudit<I = any, O = any> {
  /** `<resource>.<verb>`, e.g. app.create. */
  action: string;
  /** The kind of resource changed, e.g. app, function, service_key. */
  resource: string;
  /** The changed resource's id. */
  id: (input: I, output: O) => string;
  /** Facts worth keeping beside it (never a secret). */
  details?: (input: I, output: O) => Record<string, unknown>;
  /** Whether this call changed anything (default: every successful call did); e.g. a dry run did not. */
  when?: (input: I, output: O, caller: Caller) => boolean;
}

/** The role a platform caller needs for this tool (see ToolDescriptor.role). */
/** Whether this call of `tool` changes its app (see `governed`). */
export function governs(tool: Pick<AnyTool, 'appScoped' | 'annotations' | 'auth' | 'governed'>, input: Record<string, unknown>): boolean {
  if (!tool.appScoped || tool.annotations?.readOnlyHint || tool.governed === false) return false;
  if (tool.auth.includes('user') || tool.auth.includes('none')) return false;
  return typeof tool.governed === 'function' ? tool.governed(input) : true;
}

export function requiredRole(tool: Pick<AnyTool, 'role' | 'annotations'>): Role {
  return tool.role ?? (tool.annotations?.readOnlyHint ? 'viewer' : 'developer');
}

/**
 * Registers nothing by itself; checks the name and makes the input strict: every `z.object` in it refuses keys it
 * does not declare (see strictInput), so no tool silently ignores an argument. Declare user data that may carry any
 * key as `z.unknown()`, `z.record()` or `z.looseObject()`.
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType, S, A>(tool: ToolDescriptor<I, O, S, A>): AnyTool {
  if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(tool.name)) throw new Error(`tool name ${tool.name} is not <area>_<verb>`);
  return { ...tool, input: strictInput(tool.input) } as unknown as AnyTool;
}
