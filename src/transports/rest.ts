import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { NextFunction } from 'express';
import { errors, type AppError } from '../core/errors.ts';
import { errorWire } from '../core/error-shapes.ts';
import { StreamBody } from '../core/stream-body.ts';
import { JsonText } from '../core/json-text.ts';
import { invoke, toAppError } from '../core/invoke.ts';
import type { AnyTool, ErrorShape, HttpBinding } from '../core/define.ts';
import type { Services } from '../services.ts';
import type { Caller, CallerKind } from '../core/caller.ts';
import { resolveRequestCaller } from './credentials.ts';
import { sameOriginWrite, sessionCookieHeaders, sessionCookieOf } from './session-cookie.ts';
import { identityErrors } from '../identity/errors.ts';
import { pathParams } from '../core/schema.ts';
import { segmentCount, type TableRoute } from './route-table.ts';
import { checkProfile } from '../data/prefer.ts';

/** Set by the subdomain middleware when the Host header names an app. */
export interface SubdomainLocals {
  subdomainAppId?: string;
}

/**
 * Set by errorShapes() for routes whose errors are not rendered in the standard envelope, or carry headers; and the
 * area of the route once it is known (errorsInArea).
 */
interface ShapeLocals {
  errorShape?: ErrorShape;
  errorHeaders?: HttpBinding<unknown>['errorHeaders'];
  errorArea?: string;
  /** errorShapes' match, left to be made when something reads the shape (ErrorShapes.defer). */
  [PENDING_SHAPE]?: ShapeMatcher;
}

/** The shape errorShapes gives a request of this method and path (undefined: the standard envelope, no headers). */
type ShapeMatcher = (method: string, path: string) => ShapeLocals | undefined;

const PENDING_SHAPE = Symbol('pending error shape');

/**
 * Makes the match ErrorShapes.defer left on the response, as the middleware would have made it before the route:
 * the request's method and path are the same by then (nothing on the REST hot path rewrites them).
 */
function settleErrorShape(res: Response): void {
  const locals = res.locals as ShapeLocals;
  const shapeOf = locals[PENDING_SHAPE];
  if (shapeOf === undefined) return;
  delete locals[PENDING_SHAPE];
  const hit = shapeOf(res.req.method, res.req.path);
  if (hit) Object.assign(locals, hit);
}

/**
 * Names the area whose guide section documents the errors this response may still answer (documentation_url): a
 * tool's route once it is dispatched, a raw route of an area (sites, function invocations, storage blobs).
 */
export function errorsInArea(res: Response, area: string | undefined): void {
  if (area !== undefined) (res.locals as ShapeLocals).errorArea = area;
}

/** The platform's base URL, which createHttpApp keeps in app.locals: documentation_url starts with it. */
export interface BaseUrlLocals {
  baseUrl?: string;
}

const toExpressPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ':$1');

/** The content types the JSON body parsers read. */
export const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * The body parsers of routes whose binding asks for more than the global one, mounted before it (the body is then
 * already read and the global parser passes it by): JSON up to the larger of `limit` (the one /mcp has) and
 * SVC_BODY_LIMIT for largeBody routes (code or file bytes), and application/octet-stream up to SVC_BODY_LIMIT for
 * binaryBody routes.
 */
export function routeBodyParsers(tools: readonly AnyTool[], large: RequestHandler, globalLimit: string): Router {
  const router = express.Router();
  const binary = express.raw({ limit: globalLimit, type: 'application/octet-stream' });
  for (const { http } of tools) {
    if (!http || (!http.largeBody && !http.binaryBody)) continue;
    const method = http.method.toLowerCase() as 'post' | 'put' | 'patch';
    for (const path of [http.path, http.subdomainPath]) {
      if (!path) continue;
      if (http.largeBody) router[method](toExpressPath(path), large);
      if (http.binaryBody) router[method](toExpressPath(path), binary);
    }
  }
  return router;
}

/** The JSON parser of largeBody routes: up to the larger of `limit` (the one /mcp has) and SVC_BODY_LIMIT. */
export function largeJsonParser(limit: string, globalLimit: string): RequestHandler {
  return express.json({ limit: Math.max(limitBytes(limit), limitBytes(globalLimit)), strict: false, type: JSON_TYPES });
}

/** '4mb', '512kb', '100b' (the SVC_BODY_LIMIT forms) in bytes. */
function limitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)$/i.exec(limit);
  if (!m) throw new Error(`not a body limit: ${limit}`);
  return Number(m[1]) * { b: 1, kb: 1024, mb: 1024 * 1024 }[m[2]!.toLowerCase() as 'b' | 'kb' | 'mb'];
}

/**
 * The routes of the descriptors' HTTP bindings (each handler only maps the wire to invoke() and back), in dispatch
 * order: `all` as the express app mounts them (routeTable), and `hot`, the
 * platform-host routes the REST hot path (rest-hot-path.ts) may serve before the express app: those that never pass a
 * request on (no table of the app's may shadow them) and read JSON bodies (with the global parser, or largeBody's).
 */
export function restRoutes(tools: readonly AnyTool[], services: Services): { all: TableRoute[]; hot: TableRoute[] } {
  // Routes with fewer parameters first: /v1/{app_id}/embeddings must win over the data API's /v1/{app_id}/{table}.
  const byParams = (t: AnyTool) => (t.http ? pathParams(t.http.path).length : 0);
  const all: TableRoute[] = [];
  const hot: TableRoute[] = [];
  for (const tool of [...tools].sort((a, b) => byParams(a) - byParams(b))) {
    if (!tool.http) continue;
    const http = tool.http;
    const fields = inputFields(tool);
    all.push({
      method: http.method,
      path: http.path,
      handle: (req, res, next) => {
        // A request supabase-js sent to /rest/v1/<table> is the data API's, whatever else the rewritten path matches.
        if ((res.locals as AliasLocals).postgrestAlias && http.errorShape !== 'postgrest') return next();
        if (http.shadowedByTable === undefined) return void serve(tool, http, fields, req, res, services, undefined);
        void hasTable(services, String(req.params.app_id), http.shadowedByTable).then((table) => (table ? next() : serve(tool, http, fields, req, res, services, undefined)));
      },
    });
    // Every platform-host route has its place in `hot`, so that a hot route never wins over an earlier one of its
    // shape; those the hot path may not serve pass (it then hands the request to the express app untouched).
    hot.push({
      method: http.method,
      path: http.path,
      largeBody: http.largeBody,
      binaryBody: http.binaryBody,
      handle: http.shadowedByTable === undefined && !http.binaryBody ? (req, res) => void serve(tool, http, fields, req, res, services, undefined) : PASS,
    });
    if (http.subdomainPath) {
      all.push({
        method: http.method,
        path: http.subdomainPath,
        handle: (req, res, next) => {
          const appId = (res.locals as SubdomainLocals).subdomainAppId;
          if (!appId) return next();
          void serve(tool, http, fields, req, res, services, appId);
        },
      });
    }
  }
  return { all, hot };
}

/** A hot route the REST hot path leaves to the express app. */
export const PASS: TableRoute['handle'] = (_req, _res, next) => next();

/** Set by postgrestAlias on a request it rewrote from /v1/{app_id}/rest/v1/<table>. */
interface AliasLocals {
  postgrestAlias?: boolean;
}

/**
 * Whether the app has a table named `table`: an app whose table took a name before it was reserved for a route
 * (models, responses) keeps it on the data API. False for an unknown app or an unreadable catalog (the route then
 * answers, and refuses the app as usual).
 */
async function hasTable(services: Services, appId: string | undefined, table: string): Promise<boolean> {
  if (!appId || !/^[a-z0-9]{16}$/.test(appId)) return false;
  try {
    if (!(await services.apps.get(appId))) return false;
    return (await services.catalogs.get(appId)).has(table);
  } catch {
    return false;
  }
}

async function serve(
  tool: AnyTool,
  http: HttpBinding<unknown>,
  fields: ReadonlySet<string>,
  req: Request,
  res: Response,
  services: Services,
  subdomainAppId: string | undefined,
): Promise<void> {
  // Errors from here on (the credential, the input) are this tool's call's.
  errorsInArea(res, tool.area);
  // A client that goes away mid-request cancels the work done for it (an upstream AI call, a relayed stream).
  if (http.errorShape === 'postgrest') {
    const locals = res.locals as ShapeLocals;
    // What errorShapes found is replaced here: all of it when the route names error headers (the data API's do).
    if (http.errorHeaders) delete locals[PENDING_SHAPE];
    else settleErrorShape(res);
    locals.errorShape = 'postgrest';
    if (http.errorHeaders) locals.errorHeaders = http.errorHeaders;
  }
  const aborter = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborter.abort();
  });
  try {
    // The data API's schema profile headers, which PostgREST checks before the request runs.
    if (http.errorShape === 'postgrest') checkProfile(req.method, req.headers);
    const input = restInput(http, fields, req, subdomainAppId);
    const sessionToken = sessionCookieOf(req, services.config.secureCookies);
    const { caller, viaCookie } = await resolveRequestCaller(req, services, sessionToken);
    if ((viaCookie || http.sameOrigin) && !sameOriginWrite(req, services.config.platformOrigin)) throw identityErrors.crossSiteRequest();
    if (http.restAuth && !http.restAuth.includes(restKindOf(caller))) throw caller.kind === 'service' ? errors.wrongCredential(http.restAuth) : errors.invalidToken();
    const output = await invoke(tool, input, {
      services,
      admission: services.admission,
      audit: services.audit,
      caller,
      requestId: req.id,
      clientId: req.ip ?? 'unknown',
      // The request's child logger, made when the call logs (toolContext reads it then).
      get log() {
        return req.log;
      },
      signal: aborter.signal,
      canStream: true,
      session: {
        token: sessionToken,
        set: (session) => res.append('Set-Cookie', sessionCookieHeaders(session, services.config.secureCookies)),
      },
    });
    // Bytes served by an app's routes are its bandwidth (bandwidth_bytes), headers included.
    if (tool.appScoped) services.billing.traffic.meterResponse(String(input.app_id), req.socket, (done) => res.once('close', done));
    if (output instanceof StreamBody) return await writeStream(res, output);
    const wire = http.respond?.(output) ?? {};
    const status = wire.status ?? http.status ?? 200;
    for (const [name, value] of Object.entries(wire.headers ?? {})) res.setHeader(name, value);
    const body = 'body' in wire ? wire.body : output;
    if (status === 204 || body === undefined) {
      res.status(status).end();
      return;
    }
    // A text body whose media type the wire names (CSV, PostgREST's vnd types) goes out byte for byte, Content-Type as given.
    if (typeof body === 'string' && wire.headers?.['Content-Type']) {
      res.status(status).send(Buffer.from(body));
      return;
    }
    if (body instanceof JsonText) {
      if (!sendJsonText(req, res, status, body.text)) res.status(status).type('application/json').send(body.text);
      return;
    }
    if (http.contentType) res.status(status).type(http.contentType).send(body);
    else if (res.hasHeader('Content-Type') || !sendJsonText(req, res, status, JSON.stringify(body))) res.status(status).json(body);
  } catch (err) {
    sendError(res, toAppError(err, req.log, tool.name));
  }
}

/**
 * A JSON answer as express's res.json and res.type('application/json').send write it (the same status, Content-Type
 * and Content-Length; the app sends no ETag), without their header handling, which cost several percent of a data
 * request. False, writing nothing, for a conditional request, which express's freshness check answers.
 */
function sendJsonText(req: Request, res: Response, status: number, text: string): boolean {
  if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) return false;
  writeJsonText(res, status, text);
  return true;
}

/** The top-level fields a tool's input declares (its input is an object schema; empty otherwise). */
function inputFields(tool: AnyTool): ReadonlySet<string> {
  const shape = (tool.input._zod.def as { shape?: Record<string, unknown> }).shape;
  return new Set(shape ? Object.keys(shape) : []);
}

/** The credential kind a route's restAuth names: a person's browser session is its own kind there. */
function restKindOf(caller: Caller): CallerKind | 'session' {
  return caller.kind === 'platform' && caller.via === 'session' ? 'session' : caller.kind;
}

/**
 * Input object from the wire: query (GET and DELETE), then body fields, then declared headers, then path
 * params (last wins), as the OpenAPI document describes them. The input refuses keys the tool does not declare, so
 * a query parameter or body field the tool does not know is a 400 naming it; headers are optional extras of the
 * wire, so a binding's header reaches the input only when the tool declares its field.
 */
function restInput(http: HttpBinding<unknown>, fields: ReadonlySet<string>, req: Request, subdomainAppId: string | undefined): Record<string, unknown> {
  const body: unknown = req.body;
  // No prototype: a body key "__proto__" stays a plain (unknown) field instead of replacing the prototype.
  const input: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  if (http.queryField) {
    const at = req.originalUrl.indexOf('?');
    input[http.queryField] = at < 0 ? '' : req.originalUrl.slice(at + 1);
  } else if (http.method === 'GET' || http.method === 'DELETE') {
    Object.assign(input, req.query);
  } else {
    // A body route takes its arguments from the body: a query parameter would otherwise be ignored (dry_run=true too),
    // unless the route names it (a protocol that puts some arguments in the query: GoTrue's grant_type).
    const query = req.query as Record<string, unknown>;
    for (const name of http.query ?? []) if (query[name] !== undefined) input[name] = query[name];
    const given = Object.keys(query).filter((k) => !http.query?.includes(k) && !http.ignoredQuery?.includes(k));
    if (given.length > 0) {
      const names = given.map((k) => JSON.stringify(k)).join(', ');
      throw errors.validation(
        `Unrecognized query parameter${given.length > 1 ? 's' : ''}: ${names}; ${http.method} ${http.path} takes its arguments in the JSON body.`,
        given.map((k) => ({ path: k, message: 'query parameters are not accepted on this route; send the field in the JSON body' })),
      );
    }
  }
  if (http.bodyField) {
    if (body !== undefined) input[http.bodyField] = body;
  } else if (body !== undefined) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.validation('The request body must be a JSON object.');
    Object.assign(input, body);
  }
  for (const [header, field] of Object.entries(http.headers ?? {})) {
    const value = req.headers[header];
    if (typeof value === 'string' && fields.has(field)) input[field] = value;
  }
  Object.assign(input, req.params);
  if (subdomainAppId) input.app_id = subdomainAppId;
  return input;
}

/** Writes a streamed body chunk by chunk as it is produced, waiting for the client to drain; stops when it leaves. */
async function writeStream(res: Response, stream: StreamBody): Promise<void> {
  res.writeHead(200, { ...stream.headers });
  res.flushHeaders();
  try {
    for await (const chunk of stream.chunks) {
      if (res.destroyed) break;
      if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    }
  } finally {
    // The producer's own failures are written into the stream by it; anything left here just ends the response.
    res.end();
  }
}

/**
 * Marks the requests of routes with their own error shape (OpenAI-compatible routes, people) or error headers, before
 * body parsing, so that every error on those paths (bad JSON, too large, no credential) reaches the client in the
 * shape it reads.
 */
export function errorShapes(tools: readonly AnyTool[]): ErrorShapes {
  // Every route, the most specific first (as the dispatcher matches them), bucketed by path length: the AI gateway's
  // /v1/{app_id}/embeddings keeps OpenAI's shape though the data API's /v1/{app_id}/{table} pattern matches it too.
  const byParams = (path: string) => pathParams(path).length;
  const buckets = new Map<number, { method: string; re: RegExp; shaped: boolean; locals: ShapeLocals }[]>();
  const routes = tools
    .flatMap(({ http }) => (http ? [http.path, http.subdomainPath].filter((p): p is string => !!p).map((path) => ({ http, path })) : []))
    .sort((a, b) => byParams(a.path) - byParams(b.path));
  for (const { http, path } of routes) {
    const size = segmentCount(path);
    if (!buckets.has(size)) buckets.set(size, []);
    buckets.get(size)!.push({
      method: http.method,
      re: pathPattern(path),
      // PostgREST's shape (and its error headers) are set by serve() once the route is known: raw routes
      // (/v1/{app_id}/fn/...) share its pattern.
      shaped: http.errorShape !== 'postgrest' && ((http.errorShape !== undefined && http.errorShape !== 'standard') || !!http.errorHeaders),
      locals: { errorShape: http.errorShape, errorHeaders: http.errorHeaders },
    });
  }
  const shapeOf: ShapeMatcher = (method, path) => {
    const candidates = buckets.get(segmentCount(path));
    if (!candidates) return undefined;
    const asGet = method === 'HEAD' ? 'GET' : method;
    const hit = candidates.find((r) => r.method === asGet && r.re.test(path)) ?? candidates.find((r) => r.re.test(path));
    return hit?.shaped ? hit.locals : undefined;
  };
  const shapes = (req: Request, res: Response, next: NextFunction): void => {
    // The data API's own request (postgrestAlias): serve() gives it the data API's shape.
    if ((res.locals as AliasLocals).postgrestAlias) return next();
    const hit = shapeOf(req.method, req.path);
    if (hit) Object.assign(res.locals as ShapeLocals, hit);
    next();
  };
  return Object.assign(shapes, { defer: (res: Response) => void ((res.locals as ShapeLocals)[PENDING_SHAPE] = shapeOf) });
}

/** The errorShapes middleware, and the same match left for when an error answer reads it. */
export interface ErrorShapes {
  (req: Request, res: Response, next: NextFunction): void;
  /**
   * For the REST hot path, whose successful answers never read the shape (the regular expressions over the bucket's
   * routes were 2.1 % of a data read's CPU): sendError, or serve() for a route that sets its own, makes the match.
   */
  defer(res: Response): void;
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[a-z_]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

export function sendError(res: Response, err: AppError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  settleErrorShape(res);
  const locals = res.locals as ShapeLocals;
  const { status, body } = errorWire(err.inArea(locals.errorArea), (res.app.locals as BaseUrlLocals).baseUrl ?? '', locals.errorShape);
  errorHeaders(res, err, status);
  for (const [name, value] of Object.entries(locals.errorHeaders?.(err) ?? {})) res.setHeader(name, value);
  res.status(status).json(body);
}

/** sendError for a route served before express (a hot path): the standard envelope, no route's shape. */
export function sendNodeError(res: ServerResponse, err: AppError, baseUrl: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body } = errorWire(err, baseUrl, undefined);
  errorHeaders(res, err, status);
  writeJson(res, status, body);
}

/** The headers every error answer carries beside its body: the 401 challenge, Retry-After of a 429 or 503. */
function errorHeaders(res: ServerResponse, err: AppError, status: number): void {
  // /mcp names its own challenge (where its resource metadata is); every other 401 gets the plain one.
  if (status === 401 && !res.hasHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer');
  const retryAfter = (err.details as { retry_after_seconds?: unknown } | undefined)?.retry_after_seconds;
  if ((status === 429 || status === 503) && typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
}

/** A JSON answer through node's response alone (as express's res.json writes it, without its ETag). */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  writeJsonText(res, status, JSON.stringify(body));
}

/** writeJson of JSON already serialized. */
function writeJsonText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
