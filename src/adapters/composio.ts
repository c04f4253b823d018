// The only module that speaks to the integrations vendor: Composio's v3 REST API (x-api-key header, JSON bodies).
// What it reads from the vendor's answers is narrowed here to the few fields the platform uses, so a connected
// account's OAuth tokens (which Composio returns in `state`) never travel further than this file. It implements the
// port integrations declares (src/integrations/vendor-port.ts).

import {
  VendorError,
  type ConnectLink,
  type IntegrationsVendor,
  type ToolExecution,
  type VendorConnectedAccount,
  type VendorTool,
  type VendorToolkit,
} from '../integrations/vendor-port.ts';

export interface ComposioOptions {
  baseUrl: string;
  apiKey: string;
  /** Bound on each call; tool executions may run long (a mail search, a file upload). */
  timeoutMs?: number;
}

interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** The most of a non-JSON error body quoted in a message. */
const EXCERPT_CHARS = 300;

export class ComposioClient implements IntegrationsVendor {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;

  constructor(options: ComposioOptions) {
    this.#baseUrl = options.baseUrl.replace(/(?<!\/)\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** GET /api/v3/toolkits: the vendor's catalog, filtered by `search` (name, slug or description). */
  async listToolkits(search: string | undefined, limit: number): Promise<VendorToolkit[]> {
    const body = await this.#request('GET', '/api/v3/toolkits', { query: { search, limit: String(limit) } });
    return itemsOf(body).map(toolkitOf);
  }

  /** GET /api/v3/toolkits/{slug}; null when the vendor has no such toolkit. */
  async getToolkit(slug: string): Promise<VendorToolkit | null> {
    return orNullOn404(async () => toolkitOf(await this.#request('GET', `/api/v3/toolkits/${encodeURIComponent(slug)}`)));
  }

  /** The id of an enabled Composio-managed auth config of the toolkit with this exact name, if one exists. */
  async findAuthConfig(toolkit: string, name: string): Promise<string | null> {
    const body = await this.#request('GET', '/api/v3/auth_configs', { query: { toolkit_slug: toolkit, is_composio_managed: 'true', limit: '100' } });
    const match = itemsOf(body).find((c) => c.name === name && c.status !== 'DISABLED' && typeof c.id === 'string');
    return match ? String(match.id) : null;
  }

  /**
   * POST /api/v3/auth_configs with Composio's own OAuth app (use_composio_managed_auth): scopes given replace the
   * default ones the vendor manages for the toolkit.
   */
  async createAuthConfig(toolkit: string, name: string, scopes: readonly string[] | null): Promise<string> {
    const authConfig: Record<string, unknown> = { type: 'use_composio_managed_auth', name };
    if (scopes) authConfig.credentials = { scopes: [...scopes] };
    const body = await this.#request('POST', '/api/v3/auth_configs', { body: { toolkit: { slug: toolkit }, auth_config: authConfig } });
    const id = record(record(body).auth_config).id;
    if (typeof id !== 'string') throw malformed('auth config without an id');
    return id;
  }

  /** POST /api/v3/connected_accounts/link: a hosted connect page for the user, which ends at `callbackUrl`. */
  async createConnectLink(input: { authConfigId: string; userId: string; callbackUrl: string }): Promise<ConnectLink> {
    const body = record(
      await this.#request('POST', '/api/v3/connected_accounts/link', {
        body: { auth_config_id: input.authConfigId, user_id: input.userId, callback_url: input.callbackUrl },
      }),
    );
    if (typeof body.redirect_url !== 'string' || typeof body.connected_account_id !== 'string') throw malformed('connect link without redirect_url or connected_account_id');
    const expires = typeof body.expires_at === 'string' ? new Date(body.expires_at) : null;
    return { redirectUrl: body.redirect_url, connectedAccountId: body.connected_account_id, expiresAt: expires && !Number.isNaN(expires.getTime()) ? expires : null };
  }

  /** GET /api/v3/connected_accounts/{id}, reduced to its status; null when the vendor has no such account. */
  async getConnectedAccount(id: string): Promise<VendorConnectedAccount | null> {
    return orNullOn404(async () => {
      const body = record(await this.#request('GET', `/api/v3/connected_accounts/${encodeURIComponent(id)}`));
      if (typeof body.id !== 'string' || typeof body.status !== 'string') throw malformed('connected account without id or status');
      const toolkit = record(body.toolkit).slug;
      return {
        id: body.id,
        status: body.status,
        toolkit: typeof toolkit === 'string' ? toolkit : null,
        statusReason: typeof body.status_reason === 'string' ? body.status_reason : null,
      };
    });
  }

  /** DELETE /api/v3/connected_accounts/{id}: revokes the user's grant at the vendor; an account already gone is fine. */
  async deleteConnectedAccount(id: string): Promise<void> {
    await orNullOn404(() => this.#request('DELETE', `/api/v3/connected_accounts/${encodeURIComponent(id)}`));
  }

  /** GET /api/v3/tools?toolkit_slug=: the toolkit's tools with their input schemas (one page of up to `limit`). */
  async listTools(toolkit: string, limit: number): Promise<VendorTool[]> {
    const body = await this.#request('GET', '/api/v3/tools', { query: { toolkit_slug: toolkit, limit: String(limit) } });
    return itemsOf(body).map(toolOf);
  }

  /** GET /api/v3/tools/{slug}; null when the vendor has no such tool. */
  async getTool(slug: string): Promise<VendorTool | null> {
    return orNullOn404(async () => toolOf(record(await this.#request('GET', `/api/v3/tools/${encodeURIComponent(slug)}`))));
  }

  /**
   * POST /api/v3/tools/execute/{slug} for a user's connected account. A tool that ran and failed answers 2xx with
   * successful: false and its error; only the vendor's own refusals and outages throw.
   */
  async executeTool(slug: string, input: { userId: string; connectedAccountId: string; arguments: Record<string, unknown> }, signal?: AbortSignal): Promise<ToolExecution> {
    const body = record(
      await this.#request('POST', `/api/v3/tools/execute/${encodeURIComponent(slug)}`, {
        body: { user_id: input.userId, connected_account_id: input.connectedAccountId, arguments: input.arguments },
        signal,
      }),
    );
    if (typeof body.successful !== 'boolean') throw malformed('execution result without successful');
    return { successful: body.successful, data: body.data ?? null, error: typeof body.error === 'string' && body.error !== '' ? body.error : null };
  }

  async #request(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const url = new URL(this.#baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = { 'x-api-key': this.#apiKey, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal, redirect: 'error' });
      text = await response.text();
    } catch (err) {
      throw new VendorError(timeout.aborted ? { kind: 'timeout' } : options.signal?.aborted ? { kind: 'aborted' } : { kind: 'network', message: causeOf(err) });
    }
    if (!response.ok) throw new VendorError({ kind: 'status', status: response.status, message: errorMessage(text, response.status) });
    if (text === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw malformed('an answer that is not JSON');
    }
  }
}

function malformed(what: string): VendorError {
  return new VendorError({ kind: 'malformed', message: `the vendor sent ${what}` });
}

async function orNullOn404<T>(call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof VendorError && err.failure.kind === 'status' && err.failure.status === 404) return null;
    throw err;
  }
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function itemsOf(body: unknown): Record<string, unknown>[] {
  const items = record(body).items;
  if (!Array.isArray(items)) throw malformed('a list without items');
  return items.map(record);
}

function toolkitOf(value: unknown): VendorToolkit {
  const item = record(value);
  const meta = record(item.meta);
  if (typeof item.slug !== 'string') throw malformed('a toolkit without a slug');
  return {
    slug: item.slug,
    name: typeof item.name === 'string' ? item.name : item.slug,
    description: typeof meta.description === 'string' ? meta.description : null,
    logo: typeof meta.logo === 'string' ? meta.logo : null,
  };
}

function toolOf(item: Record<string, unknown>): VendorTool {
  const toolkit = record(item.toolkit).slug;
  if (typeof item.slug !== 'string' || typeof toolkit !== 'string') throw malformed('a tool without slug or toolkit');
  return {
    slug: item.slug,
    name: typeof item.name === 'string' ? item.name : item.slug,
    description: typeof item.description === 'string' ? item.description : '',
    toolkit,
    inputSchema: record(item.input_parameters),
  };
}

/** Composio's errors come as { error: { message } } (v3) or { message }; anything else is quoted briefly. */
function errorMessage(text: string, status: number): string {
  try {
    const body = record(JSON.parse(text));
    const nested = record(body.error).message;
    if (typeof nested === 'string') return nested;
    if (typeof body.error === 'string') return body.error;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: quoted below
  }
  return text.trim() ? text.trim().slice(0, EXCERPT_CHARS) : `HTTP ${status}`;
}

function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
