/**
 * A fake Composio (v3 REST API) on loopback, for the integrations tests. Real HTTP, so the platform's adapter runs
 * its actual requests: headers, status codes, bodies and dropped sockets happen for real.
 *
 * API (x-api-key required, 401 otherwise; every API request is recorded):
 *   GET  /api/v3/toolkits?search=&limit=        catalog (the 10 curated toolkits plus a few others)
 *   GET  /api/v3/toolkits/{slug}                 one toolkit, 404 when unknown
 *   GET  /api/v3/auth_configs?toolkit_slug=      auth configs created so far
 *   POST /api/v3/auth_configs                    { toolkit: { slug }, auth_config: { type, name, credentials? } } -> 201
 *   POST /api/v3/connected_accounts/link         { auth_config_id, user_id, callback_url } -> 201 { link_token, redirect_url,
 *                                                expires_at, connected_account_id }; the account starts INITIATED
 *   GET  /api/v3/connected_accounts/{id}         status, toolkit, and (like the real one) the OAuth tokens in `state`
 *   DELETE /api/v3/connected_accounts/{id}
 *   GET  /api/v3/tools?toolkit_slug=&limit=      tools with input_parameters (JSON Schema)
 *   GET  /api/v3/tools/{slug}
 *   POST /api/v3/tools/execute/{slug}            { user_id, connected_account_id, arguments }: 200 { successful: true,
 *                                                data: { tool, arguments, connected_account_id, user_id } }; the account
 *                                                must be ACTIVE and belong to user_id (400 otherwise)
 *
 * The browser side of a hosted connect link (no key): GET {redirect_url} answers 302 to the "provider's" consent
 * page, which answers 302 to the vendor's own OAuth callback, which marks the account ACTIVE (FAILED when the link
 * was opened with ?consent=deny) and answers 302 to the platform's callback_url with status and connected_account_id,
 * as Composio does. A client following the redirects completes the whole dance.
 *
 * Faults, per tool slug on execute (`faults.set(slug, kind)`): 'soft' answers 200 { successful: false, error },
 * '5xx' answers 500, 'drop' destroys the socket without answering.
 *
 * Canned answers, per tool slug on execute (`responders.set(slug, fn)`): the tool's `data` is what fn returns for
 * the request's arguments and account (a fault still wins; a responder that throws is the tool failing: 200
 * { successful: false, error: its message }); without one, data echoes the request as above.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeComposioRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: any;
  apiKey: string | undefined;
}

export interface FakeAccount {
  id: string;
  userId: string;
  authConfigId: string;
  toolkit: string;
  callbackUrl: string;
  status: 'INITIATED' | 'ACTIVE' | 'FAILED';
  deleted: boolean;
}

export interface FakeAuthConfig {
  id: string;
  name: string;
  toolkit: string;
  scopes: string[] | null;
}

export type ExecuteFault = 'soft' | '5xx' | 'drop';

/** A tool's canned `data`, from the arguments it was called with and the connected account it ran as. */
export type ExecuteResponder = (args: Record<string, any>, account: FakeAccount) => unknown;

export interface FakeComposio {
  /** Base URL without /api/v3: SVC_INTEGRATIONS_BASE_URL. */
  url: string;
  apiKey: string;
  requests: FakeComposioRequest[];
  accounts: Map<string, FakeAccount>;
  authConfigs: FakeAuthConfig[];
  faults: Map<string, ExecuteFault>;
  responders: Map<string, ExecuteResponder>;
  /** The API requests to one path prefix, e.g. '/api/v3/tools/execute/'. */
  requestsTo(prefix: string): FakeComposioRequest[];
  close(): Promise<void>;
}

export const SOFT_FAILURE_MESSAGE = 'Recipient address rejected: mailbox unavailable';

const TOOLKITS = [
  ['gmail', 'Gmail', 'Send and read e-mail'],
  ['googlecalendar', 'Google Calendar', 'Events and calendars'],
  ['googledrive', 'Google Drive', 'Files and folders'],
  ['outlook', 'Outlook', 'Microsoft mail and calendar'],
  ['slack', 'Slack', 'Team chat'],
  ['github', 'GitHub', 'Code hosting'],
  ['notion', 'Notion', 'Docs and wikis'],
  ['linear', 'Linear', 'Issue tracking'],
  ['jira', 'Jira', 'Issue tracking'],
  ['hubspot', 'HubSpot', 'CRM'],
  ['airtable', 'Airtable', 'Spreadsheet databases'],
  ['trello', 'Trello', 'Kanban boards'],
  ['linkedin', 'LinkedIn', 'Professional network posts and profile'],
  ['twitter', 'Twitter', 'Posts on X'],
].map(([slug, name, description]) => ({ slug: slug!, name: name!, meta: { description, logo: `https://logos.example/${slug}.png` } }));

const object = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required });
const TOOLS = [
  {
    slug: 'GMAIL_SEND_EMAIL',
    name: 'Send email',
    description: 'Send an e-mail from the connected Gmail account.',
    toolkit: 'gmail',
    input_parameters: object({ recipient_email: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } }, ['recipient_email', 'body']),
  },
  {
    slug: 'GMAIL_FETCH_EMAILS',
    name: 'Fetch emails',
    description: 'List recent e-mails.',
    toolkit: 'gmail',
    input_parameters: object({ query: { type: 'string' }, max_results: { type: 'integer' } }, []),
  },
  {
    slug: 'GOOGLECALENDAR_EVENTS_LIST',
    name: 'List events',
    description: 'Events of a calendar in a time window.',
    toolkit: 'googlecalendar',
    input_parameters: object({ calendarId: { type: 'string' }, timeMin: { type: 'string' }, timeMax: { type: 'string' }, singleEvents: { type: 'boolean' }, maxResults: { type: 'integer' } }, []),
  },
  {
    slug: 'GOOGLECALENDAR_CREATE_EVENT',
    name: 'Create event',
    description: 'Create an event, optionally with a Google Meet room.',
    toolkit: 'googlecalendar',
    input_parameters: object(
      { calendar_id: { type: 'string' }, summary: { type: 'string' }, start_datetime: { type: 'string' }, event_duration_hour: { type: 'integer' }, event_duration_minutes: { type: 'integer' }, attendees: { type: 'array' } },
      ['start_datetime'],
    ),
  },
  {
    slug: 'LINKEDIN_GET_MY_INFO',
    name: 'Get my info',
    description: "The connected member's profile and author URN.",
    toolkit: 'linkedin',
    input_parameters: object({}, []),
  },
  {
    slug: 'LINKEDIN_CREATE_LINKED_IN_POST',
    name: 'Create a post',
    description: 'Publish a post as the connected member.',
    toolkit: 'linkedin',
    input_parameters: object({ author: { type: 'string' }, commentary: { type: 'string' }, visibility: { type: 'string' } }, ['author', 'commentary']),
  },
  {
    slug: 'TWITTER_CREATION_OF_A_POST',
    name: 'Create a post',
    description: 'Post on X as the connected account.',
    toolkit: 'twitter',
    input_parameters: object({ text: { type: 'string' } }, ['text']),
  },
  {
    slug: 'SLACK_SEND_MESSAGE',
    name: 'Send message',
    description: 'Post a message to a channel.',
    toolkit: 'slack',
    input_parameters: object({ channel: { type: 'string' }, text: { type: 'string' } }, ['channel', 'text']),
  },
  {
    slug: 'GITHUB_CREATE_AN_ISSUE',
    name: 'Create an issue',
    description: 'Open an issue in a repository.',
    toolkit: 'github',
    input_parameters: object({ owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' } }, ['owner', 'repo', 'title']),
  },
];

function toolBody(t: (typeof TOOLS)[number]) {
  return { slug: t.slug, name: t.name, description: t.description, toolkit: { slug: t.toolkit, name: t.toolkit }, input_parameters: t.input_parameters, output_parameters: {} };
}

export async function startFakeComposio(options: { apiKey?: string } = {}): Promise<FakeComposio> {
  const apiKey = options.apiKey ?? 'ck_fake_composio_key';
  const requests: FakeComposioRequest[] = [];
  const accounts = new Map<string, FakeAccount>();
  const authConfigs: FakeAuthConfig[] = [];
  const faults = new Map<string, ExecuteFault>();
  const responders = new Map<string, ExecuteResponder>();
  /** link token -> account id */
  const links = new Map<string, string>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${(++counter).toString().padStart(6, '0')}${randomBytes(3).toString('hex')}`;
  let url = '';

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string) => send(res, status, { error: { message, status } });
  const redirect = (res: ServerResponse, location: string) => {
    res.writeHead(302, { location });
    res.end();
  };

  /** The hosted link, the provider's consent page and the vendor's OAuth callback: what a browser goes through. */
  function browser(path: string, query: URLSearchParams, res: ServerResponse): boolean {
    const link = /^\/link\/([A-Za-z0-9_-]+)$/.exec(path);
    if (link) {
      const consent = query.get('consent') ?? 'allow';
      if (!links.has(link[1]!)) return error(res, 404, 'Link expired'), true;
      redirect(res, `${url}/provider/consent?token=${link[1]}&consent=${consent}`);
      return true;
    }
    if (path === '/provider/consent') {
      redirect(res, `${url}/api/v3/toolkits/auth/callback?code=${randomBytes(8).toString('hex')}&state=${query.get('token')}&consent=${query.get('consent')}`);
      return true;
    }
    if (path === '/api/v3/toolkits/auth/callback') {
      const account = accounts.get(links.get(query.get('state') ?? '') ?? '');
      if (!account) return error(res, 400, 'Unknown OAuth state'), true;
      links.delete(query.get('state')!);
      account.status = query.get('consent') === 'deny' ? 'FAILED' : 'ACTIVE';
      const back = new URL(account.callbackUrl);
      back.searchParams.set('status', account.status === 'ACTIVE' ? 'success' : 'failed');
      back.searchParams.set('connected_account_id', account.id);
      redirect(res, back.toString());
      return true;
    }
    return false;
  }

  function api(method: string, path: string, query: URLSearchParams, body: any, req: IncomingMessage, res: ServerResponse): void {
    let m: RegExpExecArray | null;
    if (method === 'GET' && path === '/api/v3/toolkits') {
      const search = (query.get('search') ?? '').toLowerCase();
      const hits = TOOLKITS.filter((t) => !search || `${t.slug} ${t.name} ${t.meta.description}`.toLowerCase().includes(search));
      return send(res, 200, { items: hits.slice(0, Number(query.get('limit') ?? 20)), next_cursor: null, total_pages: 1 });
    }
    if (method === 'GET' && (m = /^\/api\/v3\/toolkits\/([^/]+)$/.exec(path))) {
      const toolkit = TOOLKITS.find((t) => t.slug === decodeURIComponent(m![1]!));
      return toolkit ? send(res, 200, toolkit) : error(res, 404, 'Toolkit not found');
    }
    if (method === 'GET' && path === '/api/v3/auth_configs') {
      const items = authConfigs
        .filter((c) => !query.get('toolkit_slug') || c.toolkit === query.get('toolkit_slug'))
        .map((c) => ({ id: c.id, name: c.name, status: 'ENABLED', type: 'default', is_composio_managed: true, toolkit: { slug: c.toolkit, logo: '' } }));
      return send(res, 200, { items, next_cursor: null, total_pages: 1, current_page: 1, total_items: items.length });
    }
    if (method === 'POST' && path === '/api/v3/auth_configs') {
      const slug = body?.toolkit?.slug;
      if (!TOOLKITS.some((t) => t.slug === slug)) return error(res, 400, `Toolkit ${slug} not found`);
      const scopes = body?.auth_config?.credentials?.scopes ?? null;
      const config: FakeAuthConfig = { id: nextId('ac'), name: body?.auth_config?.name ?? slug, toolkit: slug, scopes };
      authConfigs.push(config);
      return send(res, 201, { toolkit: { slug }, auth_config: { id: config.id, auth_scheme: 'OAUTH2', is_composio_managed: true } });
    }
    if (method === 'POST' && path === '/api/v3/connected_accounts/link') {
      const config = authConfigs.find((c) => c.id === body?.auth_config_id);
      if (!config) return error(res, 400, 'Auth config not found');
      if (typeof body.user_id !== 'string' || typeof body.callback_url !== 'string') return error(res, 400, 'user_id and callback_url are required');
      const account: FakeAccount = { id: nextId('ca'), userId: body.user_id, authConfigId: config.id, toolkit: config.toolkit, callbackUrl: body.callback_url, status: 'INITIATED', deleted: false };
      accounts.set(account.id, account);
      const token = randomBytes(12).toString('base64url');
      links.set(token, account.id);
      return send(res, 201, {
        link_token: token,
        redirect_url: `${url}/link/${token}`,
        expires_at: new Date(Date.now() + 10 * 60_000).toISOString(),
        connected_account_id: account.id,
      });
    }
    if ((m = /^\/api\/v3\/connected_accounts\/([^/]+)$/.exec(path))) {
      const account = accounts.get(decodeURIComponent(m[1]!));
      if (!account || account.deleted) return error(res, 404, 'Connected account not found');
      if (method === 'DELETE') {
        account.deleted = true;
        return send(res, 200, { success: true });
      }
      return send(res, 200, {
        id: account.id,
        status: account.status,
        status_reason: account.status === 'FAILED' ? 'access_denied' : null,
        toolkit: { slug: account.toolkit },
        auth_config: { id: account.authConfigId, is_composio_managed: true, is_disabled: false },
        state: { authScheme: 'OAUTH2', val: { status: account.status, access_token: 'ya29.secret-provider-token' } },
        is_disabled: false,
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      });
    }
    if (method === 'GET' && path === '/api/v3/tools') {
      const items = TOOLS.filter((t) => t.toolkit === query.get('toolkit_slug')).map(toolBody);
      return send(res, 200, { items, next_cursor: null, total_pages: 1, current_page: 1, total_items: items.length });
    }
    if (method === 'GET' && (m = /^\/api\/v3\/tools\/([^/]+)$/.exec(path))) {
      const tool = TOOLS.find((t) => t.slug === decodeURIComponent(m![1]!));
      return tool ? send(res, 200, toolBody(tool)) : error(res, 404, 'Tool not found');
    }
    if (method === 'POST' && (m = /^\/api\/v3\/tools\/execute\/([^/]+)$/.exec(path))) return execute(decodeURIComponent(m[1]!), body, req, res);
    error(res, 404, `No route ${method} ${path}`);
  }

  function execute(slug: string, body: any, req: IncomingMessage, res: ServerResponse): void {
    const tool = TOOLS.find((t) => t.slug === slug);
    if (!tool) return error(res, 404, 'Tool not found');
    const account = accounts.get(body?.connected_account_id);
    if (!account || account.deleted || account.status !== 'ACTIVE') return error(res, 400, 'Connected account is not active');
    if (account.userId !== body.user_id) return error(res, 400, 'Connected account does not belong to this user');
    if (account.toolkit !== tool.toolkit) return error(res, 400, 'Connected account is for another toolkit');
    const fault = faults.get(slug);
    if (fault === 'drop') return void req.socket.destroy();
    if (fault === '5xx') return error(res, 500, 'Internal server error');
    if (fault === 'soft') return send(res, 200, { successful: false, error: SOFT_FAILURE_MESSAGE, data: {}, log_id: nextId('log') });
    const responder = responders.get(slug);
    let data: unknown = { tool: slug, arguments: body.arguments ?? {}, connected_account_id: account.id, user_id: account.userId };
    try {
      if (responder) data = responder(body.arguments ?? {}, account);
    } catch (err) {
      return send(res, 200, { successful: false, error: (err as Error).message, data: {}, log_id: nextId('log') });
    }
    send(res, 200, {
      successful: true,
      error: null,
      data,
      log_id: nextId('log'),
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const parsed = new URL(req.url ?? '/', 'http://fake');
      if (browser(parsed.pathname, parsed.searchParams, res)) return;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const key = req.headers['x-api-key'] as string | undefined;
      requests.push({ method: req.method ?? 'GET', path: parsed.pathname, query: Object.fromEntries(parsed.searchParams), body, apiKey: key });
      if (key !== apiKey) return error(res, 401, 'Invalid API key');
      api(req.method ?? 'GET', parsed.pathname, parsed.searchParams, body, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiKey,
    requests,
    accounts,
    authConfigs,
    faults,
    responders,
    requestsTo: (prefix) => requests.filter((r) => r.path.startsWith(prefix)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Follows an authUrl like a browser: every redirect, until one leaves the fake (the platform's callback, then the
 * app's redirectUrl). Returns the first location that is on `stopAtOrigin` (the app), and the statuses seen.
 */
export async function followLikeABrowser(authUrl: string, stopAtOrigin: string, opts: { consent?: 'allow' | 'deny' } = {}): Promise<{ location: URL; statuses: number[] }> {
  let next = new URL(authUrl);
  if (opts.consent) next.searchParams.set('consent', opts.consent);
  const statuses: number[] = [];
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, { redirect: 'manual' });
    statuses.push(res.status);
    await res.arrayBuffer();
    const location = res.headers.get('location');
    if (res.status !== 302 || !location) throw new Error(`hop ${hop} to ${next.pathname} answered ${res.status}, not a redirect`);
    next = new URL(location, next);
    if (next.origin === stopAtOrigin) return { location: next, statuses };
  }
  throw new Error('too many redirects');
}
