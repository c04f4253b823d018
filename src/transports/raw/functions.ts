import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Express, Request, Response, Router } from 'express';
import type { Logger } from 'pino';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { toAppError } from '../../core/invoke.ts';
import type { Services } from '../../services.ts';
import type { ResponseSink } from '../../functions/instance.ts';
import { ClientGone } from '../../functions/pool.ts';
import type { EndUser } from '../../functions/protocol.ts';
import { BUSY_RETRY_AFTER_SECONDS, functionErrors } from '../../functions/errors.ts';
import { failureError } from '../../functions/responses.ts';
import { errorsInArea, sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';
import { appIdFromHost, onAnotherAppsHost } from '../app-host.ts';
import { appHostUrl } from '../../apps/hosts.ts';
import { rawPath, rawQuery } from '../../frontend/serve.ts';
import { admitApp } from './admit.ts';
import { asExpress, beginRequest } from '../request-log.ts';
import { corsHeaders, setHeaderList } from '../cors.ts';
import { FairTurns } from './fair-turns.ts';
import { asksForDocument, cookieWithoutPlatform, TENANT_SANDBOX_POLICY, tenantHeaderAllowed } from '../tenant-content.ts';

const PATH_ROUTE = /^\/v1\/([a-z0-9]{16})\/fn\/([^/]+)(\/.*)?$/;
const SUBDOMAIN_ROUTE = /^\/fn\/([^/]+)(\/.*)?$/;
/** functions-js's paths (`{supabaseUrl}/functions/v1/{name}`): the same functions as /fn/{name}. */
const FUNCTIONS_JS_ROUTE = /^\/v1\/([a-z0-9]{16})\/functions\/v1\/([^/]+)(\/.*)?$/;
const FUNCTIONS_JS_SHORT = /^\/functions\/v1\/([^/]+)(\/.*)?$/;
/**
 * The management routes of a function named `v1` (POST .../functions/v1/invoke, GET .../logs and .../metrics, PATCH
 * .../env) share functions-js's paths: the spec's routes keep them.
 */
const V1_MANAGEMENT = new Set(['POST invoke', 'GET logs', 'GET metrics', 'PATCH env']);

/** A functions-js path's app (path form only), function name and rest; undefined for anything else. */
function functionsJsRoute(method: string | undefined, path: string, pattern: RegExp): string[] | undefined {
  const m = pattern.exec(path);
  if (!m) return undefined;
  const [name, rest] = pattern === FUNCTIONS_JS_ROUTE ? [m[2]!, m[3]] : [m[1]!, m[2]];
  return rest === undefined && V1_MANAGEMENT.has(`${method} ${name}`) ? undefined : [...m];
}
const NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** A platform, service or substrate key anywhere in a header value. */
const PLATFORM_CREDENTIAL = /svc_(?:pk|sk|sub)_/;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Connection-level headers (RFC 9110 §7.6.1) and the ones the proxy sets itself are not passed through. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/**
 * The hot path of public function traffic, ANY /v1/{app_id}/fn/{name}[/rest]: taken by the HTTP server before the
 * express app, so none of the general stack runs for it (the router, body parsers, the REST routes' matching, error
 * shapes). It does itself the little of that stack this route needs: express's own set-up of a request (so the
 * request's getters and sendError work as on any route), the request id and log line and the CORS headers of an
 * actual request. The body reaches the function byte for byte. Answers false for any other request, and for a CORS
 * preflight (OPTIONS), which is the cors middleware's. Apps' requests take turns once the event loop is busy.
 */
export function functionsHotPath(services: Services, log: Logger, app: Express, requestPrototype: Request): (req: IncomingMessage, res: ServerResponse) => boolean {
  // Its own headers (the request id, CORS) go out with the response's in one writeHead (HttpSink), not set one by one.
  const begin = beginRequest(log, { sharedLog: true, idHeader: false });
  const origin = new URL(services.config.baseUrl).origin;
  // One app's burst of requests must not hold the event loop while another app's request waits (fair-turns.ts).
  const turns = new FairTurns();
  return (incoming, outgoing) => {
    if (incoming.method === 'OPTIONS') return false;
    const url = incoming.url ?? '';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const direct = PATH_ROUTE.exec(path);
    const functionsJs = direct ? undefined : functionsJsRoute(incoming.method, path, FUNCTIONS_JS_ROUTE);
    const route = direct ?? functionsJs;
    if (!route) return false;
    const { req, res } = asExpress(app, incoming, outgoing, requestPrototype);
    begin(req, res);
    const own = ['X-Request-Id', req.id, ...corsHeaders(req)];
    errorsInArea(res, 'functions');
    const prefix = `/v1/${route[1]}/${direct ? 'fn' : 'functions/v1'}/${route[2]}`;
    turns.run(route[1]!, () => void serve(req, res, services, origin, route[1]!, route[2]!, route[3] ?? '', prefix, own));
    return true;
  };
}


/**
 * The same route on the app's own host (its subdomain or custom domain), ANY /fn/{name}[/rest]: after the Host is
 * resolved, mounted early (before JSON parsing) so the body reaches the function byte for byte.
 */
export const functionRoutes: RawRoutes = {
  early: (router: Router, services: Services) => {
    const origin = new URL(services.config.baseUrl).origin;
    router.use((req, res, next) => {
      const path = rawPath(req);
      const fn = SUBDOMAIN_ROUTE.exec(path);
      const short = fn ?? functionsJsRoute(req.method, path, FUNCTIONS_JS_SHORT);
      if (!short) return next();
      appIdFromHost(req.headers.host, services).then(
        (appId) => {
          if (!appId) return next();
          errorsInArea(res, 'functions');
          void serve(req, res, services, origin, appId, short[1]!, short[2] ?? '', `${fn ? '/fn' : '/functions/v1'}/${short[1]}`, undefined);
        },
        (err: unknown) => sendError(res, toAppError(err, req.log, 'functions_public')),
      );
    });
  },
};

/**
 * One public invocation. `pathHeaders`: the route is a path of the platform's host (/v1/{app_id}/fn/...), not the
 * app's own host: it does not answer on another app's host, a browser opening a page there is sent to the app's host,
 * and what it serves is a sandboxed document with only the headers of its content (tenant-content.ts); its own
 * headers (name, value, ...: the request id, CORS) are not set on the response yet, and go out with the answer.
 */
async function serve(
  req: Request,
  res: Response,
  services: Services,
  origin: string,
  appId: string,
  name: string,
  rest: string,
  prefix: string,
  pathHeaders: string[] | undefined,
): Promise<void> {
  const onPath = pathHeaders !== undefined;
  try {
    if (!NAME.test(name)) throw errors.notFound(`Function '${name}'`);
    const app = await services.apps.get(appId);
    if (!app) throw errors.notFound(`App '${appId}'`, 'Check the app_id in the URL.');
    const search = rawQuery(req);
    if (onPath) {
      // Known without waiting on the platform's host (the common case), a lookup on another's.
      const elsewhere = onAnotherAppsHost(req.headers.host, services, appId);
      if (elsewhere === true || (elsewhere !== false && (await elsewhere))) {
        throw errors.notFound(`Function '${name}' of app '${appId}' on this host`, "Call it on the platform's host, or at /fn/{name} on the app's own host.");
      }
      const home = asksForDocument(req.headers['sec-fetch-dest']) ? appHostUrl(services.config, app.subdomain) : undefined;
      if (home) return setAll(res, pathHeaders).redirect(308, `${home}/fn/${name}${rest}${search}`);
    }
    await admitApp(services, app, req, res);
    const meta = await services.functions.publicFunction(appId, name);
    const { headers, authorizations } = splitHeaders(req.rawHeaders);
    const authorization = singleAuthorization(authorizations);
    const auth = await forwardedAuth(authorization, appId, services);
    const body = await readBody(req, services.config.functions.maxBodyBytes);
    // The one header forwardedAuth checked, never a raw copy of what the client sent.
    if (auth.forward && authorization) headers.push(['authorization', authorization]);
    headers.push(['x-forwarded-for', req.ip ?? ''], ['x-forwarded-proto', req.protocol], ['x-forwarded-prefix', prefix]);
    if (req.headers.host) headers.push(['x-forwarded-host', req.headers.host]);

    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const sink = new HttpSink(res, pathHeaders);
    const outcome = await services.functions.invoke(
      meta,
      { trigger: 'http', method: req.method, path: rest || '/', search, origin, headers, body, user: auth.user, token: auth.token, signal: abort.signal },
      sink,
    );
    if (!outcome.failure) {
      sink.end();
    } else if (!outcome.headSent) {
      sendError(setAll(res, pathHeaders), failureError(outcome, meta));
    } else {
      // The status went out already: cut the response so the client sees it is incomplete.
      res.destroy();
    }
  } catch (err) {
    if (err instanceof ClientGone || res.destroyed) return;
    setAll(res, pathHeaders);
    if (err instanceof AppError && err.status === 413) res.setHeader('Connection', 'close');
    if (err instanceof AppError && err.code === 'FUNCTION_BUSY') res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    sendError(res, toAppError(err, req.log, 'functions_public'));
  }
}

/** The platform host's own headers set on a response not yet answered, for an answer that writes no head of its own. */
function setAll(res: Response, headers: readonly string[] | undefined): Response {
  if (headers && !res.headersSent) setHeaderList(res, headers);
  return res;
}

/**
 * The request's Authorization header, when it has at most one. Several are refused (400) rather than reduced to the
 * one we check: node's req.headers keeps the first, but a proxy, a framework or the function's own code may honour
 * another (or a join of all), so any choice we made could differ from the one that takes effect; and a client
 * sending two credentials has a bug it should hear about, not a silent pick.
 */
function singleAuthorization(values: readonly string[]): string | undefined {
  if (values.length > 1) throw functionErrors.ambiguousAuthorization(`The request carries ${values.length} Authorization headers; a function accepts at most one.`);
  return values[0];
}

/**
 * In one pass over the raw headers: those a function receives as the client sent them (hop-by-hop ones, X-Forwarded-*
 * and Authorization are the platform's to set; the platform's session cookie is a person's, never a tenant's), and
 * every Authorization value.
 */
function splitHeaders(raw: readonly string[]): { headers: Array<[string, string]>; authorizations: string[] } {
  const headers: Array<[string, string]> = [];
  const authorizations: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]!;
    const lower = key.toLowerCase();
    if (lower === 'authorization') authorizations.push(raw[i + 1]!);
    else if (lower === 'cookie') {
      const kept = cookieWithoutPlatform(raw[i + 1]!);
      if (kept !== undefined) headers.push([key, kept]);
    } else if (!HOP_BY_HOP.has(lower) && !lower.startsWith('x-forwarded-')) headers.push([key, raw[i + 1]!]);
  }
  return { headers, authorizations };
}

interface ForwardedAuth {
  user: EndUser | null;
  token: string | null;
  /** Whether the Authorization header reaches the function. */
  forward: boolean;
}

/**
 * End-user JWTs of this app are verified and forwarded (the function may act as the user); a JWT that does not
 * verify is 401 and one of another app is 403. A service key is forwarded only to its own app's functions (403
 * otherwise). Platform and substrate keys are account-wide and never reach function code: the header is dropped, as
 * is an app's publishable key (anonymous; another app's is 403).
 * Other schemes (Basic, opaque bearer tokens of the function's own) pass through untouched, unless they hold a
 * platform credential (400).
 */
async function forwardedAuth(header: string | undefined, appId: string, services: Services): Promise<ForwardedAuth> {
  const none = { user: null, token: null };
  if (!header) return { ...none, forward: false };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    // What a proxy that merges repeated headers into one list sends ("Basic x, Bearer svc_pk_..."): refused, since
    // the platform credential inside would otherwise reach the function unchecked.
    if (PLATFORM_CREDENTIAL.test(header)) throw functionErrors.ambiguousAuthorization('The Authorization header holds a platform credential (svc_...) inside another scheme or a list.');
    return { ...none, forward: true };
  }
  const token = match[1]!;
  let caller: Caller | undefined;
  if (token.startsWith('svc_')) {
    caller = await services.keys.resolve(token);
    if (!caller) throw errors.invalidToken();
    if (caller.kind === 'service') {
      if (caller.appId !== appId) throw errors.otherApp();
      return { ...none, forward: true };
    }
    // A publishable key (anonymous, as supabase-js sends its key before sign-in) of another app is refused too.
    if (caller.kind === 'none' && caller.appId !== appId) throw errors.otherApp();
    return { ...none, forward: false };
  }
  if (!JWT_SHAPE.test(token)) return { ...none, forward: true };
  caller = await services.endUserTokens.verify(token);
  if (!caller || caller.kind !== 'user') throw errors.invalidToken();
  if (caller.appId !== appId) throw errors.otherApp();
  return { user: { id: caller.userId, claims: caller.claims }, token, forward: true };
}

async function readBody(req: Request, max: number): Promise<Buffer | null> {
  // Without a length or a chunked encoding an HTTP/1.1 request has no body (RFC 9112 §6.3): nothing to wait for.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return null;
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) throw errors.payloadTooLarge(`${Math.round(max / 1024 / 1024)} MB`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw errors.payloadTooLarge(`${Math.round(max / 1024 / 1024)} MB`);
    chunks.push(chunk);
  }
  return size ? Buffer.concat(chunks) : null;
}

/**
 * Streams the function's response to the client, with backpressure: a slow client pauses the function's output.
 * The first bytes wait one turn of the event loop: when the whole response arrived at once (the common case), it
 * goes out as a single write with a Content-Length instead of a chunked stream. On the platform's host (`own`: its
 * headers, the function's are added to them) the head is written in one writeHead, with no header set one by one.
 */
class HttpSink implements ResponseSink {
  readonly #res: Response;
  /** The platform host's own headers, then the function's; undefined on the app's host, where they are set as they come. */
  readonly #headers: string[] | undefined;
  #ownLength: number;
  #status = 200;
  #held: Buffer[] | undefined = [];
  #heldBytes = 0;
  #timer: NodeJS.Immediate | undefined;

  constructor(res: Response, own: readonly string[] | undefined) {
    this.#res = res;
    this.#headers = own && [...own];
    this.#ownLength = own?.length ?? 0;
  }

  head(status: number, headers: Array<[string, string]>): void {
    this.#status = status;
    const sandboxed = this.#headers !== undefined;
    for (const [key, value] of headers) {
      const lower = key.toLowerCase();
      if (HOP_BY_HOP.has(lower) || !tenantHeaderAllowed(lower, value, sandboxed)) continue;
      this.#add(key, lower, value);
    }
    // After the function's own policies: every one is enforced, so the function cannot lift the sandbox.
    if (sandboxed) this.#headers.push('Content-Security-Policy', TENANT_SANDBOX_POLICY);
  }

  /**
   * A header of the function's; one Node refuses (invalid characters) is dropped. One of the platform's own names (its
   * own CORS, say) replaces the platform's, as setting it on the response would.
   */
  #add(key: string, lower: string, value: string): void {
    try {
      if (this.#headers) {
        validateHeaderName(key);
        validateHeaderValue(key, value);
        this.#dropOwn(lower);
        this.#headers.push(key, value);
      } else if (lower === 'set-cookie' || lower === 'content-security-policy') this.#res.appendHeader(key, value);
      else this.#res.setHeader(key, value);
    } catch {
      // dropped
    }
  }

  /** The platform's own header of this name, if any (they come first, #ownLength entries). */
  #dropOwn(lower: string): void {
    const headers = this.#headers!;
    for (let i = 0; i < this.#ownLength; i += 2) {
      const name = headers[i]!;
      if (name.length === lower.length && name.toLowerCase() === lower) {
        headers.splice(i, 2);
        this.#ownLength -= 2;
        return;
      }
    }
  }

  chunk(data: Buffer, resume: () => void): boolean {
    const res = this.#res;
    if (res.destroyed || res.writableEnded) return true;
    if (this.#held) {
      this.#held.push(data);
      this.#heldBytes += data.length;
      if (this.#heldBytes < 64 * 1024) {
        this.#timer ??= setImmediate(() => this.#release());
        return true;
      }
      this.#release();
      return res.writableNeedDrain ? this.#wait(resume) : true;
    }
    return res.write(data) ? true : this.#wait(resume);
  }

  /** The response is complete: one write when nothing was sent yet. */
  end(): void {
    const res = this.#res;
    if (this.#timer) clearImmediate(this.#timer);
    const held = this.#held;
    this.#held = undefined;
    if (held && !res.headersSent) {
      const body = Buffer.concat(held, this.#heldBytes);
      this.#writeHead(this.#status === 204 || this.#status === 304 ? undefined : body.length);
      res.end(body);
      return;
    }
    if (!res.headersSent) this.#writeHead(undefined);
    res.end();
  }

  /** The status and headers, with a Content-Length when the whole body is known. */
  #writeHead(length: number | undefined): void {
    const res = this.#res;
    if (!this.#headers) {
      if (length !== undefined) res.setHeader('Content-Length', length);
      res.writeHead(this.#status);
    } else {
      if (length !== undefined) this.#headers.push('Content-Length', String(length));
      res.writeHead(this.#status, this.#headers);
    }
  }

  #release(): void {
    if (this.#timer) clearImmediate(this.#timer);
    this.#timer = undefined;
    const held = this.#held;
    this.#held = undefined;
    if (!held || this.#res.destroyed) return;
    if (!this.#res.headersSent) this.#writeHead(undefined);
    for (const b of held) this.#res.write(b);
  }

  #wait(resume: () => void): boolean {
    const res = this.#res;
    const go = () => {
      res.off('drain', go);
      res.off('close', go);
      resume();
    };
    res.once('drain', go);
    res.once('close', go);
    return false;
  }
}
