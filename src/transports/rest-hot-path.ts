// The hot path of the descriptors' REST routes on the platform's own host: taken by the HTTP server before the express
// app (after the functions' and MCP's hot paths), it does for a request what the app's middleware stack would, without
// walking it (issue 46: the walk was about 15 % of GET /apps's CPU). What the stack does to such a request:
// express's set-up of the request, the request id and log line, the error shape of the route, the platform-host mark,
// the CORS headers of an actual request, the JSON body parser (the route's own for largeBody routes, else the global
// one), then the route. Anything else goes to the express app untouched: a preflight, another host (an app's subdomain
// or custom domain), a path a raw route may claim before the generated routes, the supabase-js aliases, and the routes
// `restRoutes` leaves out of `hot` (binaryBody parsers, routes an app's table may shadow), and any request a binaryBody
// route's pattern matches.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import { asExpress, beginRequest } from './request-log.ts';
import { corsOfActualRequest } from './cors.ts';
import { isPlatformHost, markPlatformHost } from './app-host.ts';
import { PASS, type ErrorShapes } from './rest.ts';
import { firstMatch, paramsOf, RouteTable, type TableRoute } from './route-table.ts';
import { PATH_ROUTE as STORAGE_V1_ROUTE } from './raw/storage-v1.ts';

/**
 * What the express stack and this hot path share, built once (http-app.ts): the body parsers, the handler of errors
 * raised before a route (a body that is not JSON or too large; a malformed %-escape), the error shapes and the
 * descriptors' routes.
 */
export interface SharedStack {
  /** The global JSON body parser, and largeBody routes' own. */
  json: RequestHandler;
  largeJson: RequestHandler;
  requestErrors: ErrorRequestHandler;
  shapes: ErrorShapes;
  routes: { all: TableRoute[]; hot: TableRoute[] };
}

export interface RestHotPathDeps {
  services: Services;
  log: Logger;
  app: Express;
  stack: SharedStack;
  /** The requests' prototype, req.log its getter (sharedLogPrototype): the server's requests are born with it. */
  requestPrototype: Request;
}

/**
 * Raw routes mounted early under the paths this hot path takes (src/transports/raw/): storage-v1's paths and the
 * signed zip upload. A new early raw route under /apps or /v1/ must be added here, or the hot path would answer
 * for it with a generated route of the same shape.
 */
const RAW_EARLY = [STORAGE_V1_ROUTE, /^\/v1\/[^/]+\/frontend\/deployments\/[^/]+\/upload\/?$/];

/** Paths the supabase-js aliases rewrite (postgrest-alias.ts) before anything reads them. */
const ALIASED = ['/rest/v1/', '/auth/v1/'];

/** Answers true when it took the request; false leaves it, unread, to the express app. */
export function restHotPath(deps: RestHotPathDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { services, app } = deps;
  const { json, largeJson, requestErrors, shapes, routes: { hot } } = deps.stack;
  const table = new RouteTable(hot);
  // The stack gives the large parser to a request any largeBody route's pattern matches (routeBodyParsers), whichever
  // route then serves it.
  const large = new RouteTable(hot.filter((route) => route.largeBody));
  // A request a binaryBody route's pattern matches gets the raw parser there: it is the stack's.
  const binary = new RouteTable(hot.filter((route) => route.binaryBody));
  const begin = beginRequest(deps.log, { sharedLog: true });
  const requestPrototype = deps.requestPrototype;
  const platformHost = markPlatformHost(services);
  const own = services.config.platformHost;
  return (incoming, outgoing) => {
    if (incoming.method === 'OPTIONS') return false;
    const url = incoming.url ?? '';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!(path.startsWith('/v1/') || path === '/apps' || path.startsWith('/apps/'))) return false;
    if (ALIASED.some((alias) => path.includes(alias)) || RAW_EARLY.some((re) => re.test(path))) return false;
    const host = incoming.headers.host;
    // The platform's own host (its name, localhost or an address), which is never an app's subdomain or custom domain.
    if (!isPlatformHost(host, own) || services.domains.appForHost(host) !== null) return false;
    const candidates = table.candidates(incoming.method, path);
    const hit = candidates && firstMatch(candidates, path);
    if (!hit || hit.route.handle === PASS || firstMatch(binary.candidates(incoming.method, path) ?? [], path)) return false;
    const { req, res } = asExpress(app, incoming, outgoing, requestPrototype);
    const failed = (err: unknown) => requestErrors(err, req, res, noNext);
    begin(req, res);
    // As the stack runs them (request-log, postgrest-alias, errorShapes, markPlatformHost, cors, a JSON parser), each
    // synchronous but the parser, which reads the body; errorShapes' match is made when an error answer reads it.
    shapes.defer(res);
    platformHost(req, res, noNext);
    corsOfActualRequest(req, res);
    const parse = !hasBody(incoming) ? noBody : firstMatch(large.candidates(incoming.method, path) ?? [], path) ? largeJson : json;
    parse(req, res, (err?: unknown) => {
      if (err) return failed(err);
      try {
        req.params = paramsOf(hit.route, hit.values);
      } catch (decodeErr) {
        return failed(decodeErr);
      }
      hit.route.handle(req, res, noNext);
    });
    return true;
  };
}

/** The middleware run here call their `next` synchronously to go on, which is the line after them. */
const noNext: NextFunction = () => undefined;

/** body-parser's test of whether a request has a body (type-is's hasBody), before either JSON parser reads one. */
const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));

/**
 * What either JSON parser does to a request without a body (a GET, most DELETEs), without its reading machinery and
 * debug calls (0.4 % of the data reads' CPU): the body is undefined, and the route goes on.
 */
const noBody: RequestHandler = (req, _res, next) => {
  if (!Object.hasOwn(req, 'body')) req.body = undefined;
  next();
};

