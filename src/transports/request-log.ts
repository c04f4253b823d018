import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** X-Request-Id: the caller's when it is well-formed, otherwise a new UUID; echoed on the response. */
      id: string;
      /** A child logger bound to the request id, created on first use. */
      log: Logger;
    }
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Request ids and one log line per request (method, path without the query, status, duration; never headers,
 * so credentials cannot leak). Cheap when the level is above info: no child logger unless a handler logs.
 */
export function requestLog(log: Logger): RequestHandler {
  const begin = beginRequest(log);
  return (req, res, next) => {
    begin(req, res);
    next();
  };
}

/** The logger a request's lazy req.log getter (sharedLogPrototype) derives its child from, and that child. */
const BASE_LOG = Symbol('request base log');
const CHILD_LOG = Symbol('request child log');

/** A request as beginRequest sees it: node's, or express's (whose originalUrl keeps the path a router cut). */
type LoggedRequest = IncomingMessage & { id?: string; log?: Logger; originalUrl?: string; [BASE_LOG]?: Logger; [CHILD_LOG]?: Logger };

/**
 * What requestLog does for one request, for a route that answers before the middleware stack (the hot paths).
 * `sharedLog`: the requests' prototype has req.log as a getter (sharedLogPrototype), so none is defined per request.
 * `idHeader: false`: X-Request-Id (req.id) is not set on the response; the route writes it with its other headers.
 */
export function beginRequest(log: Logger, { sharedLog = false, idHeader = true } = {}): (req: LoggedRequest, res: ServerResponse) => void {
  const logRequests = log.isLevelEnabled('info');
  return (req, res) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    if (idHeader) res.setHeader('X-Request-Id', id);
    req.id = id;
    if (sharedLog) {
      req[BASE_LOG] = log;
    } else {
      let child: Logger | undefined;
      Object.defineProperty(req, 'log', { get: () => (child ??= log.child({ req_id: id })), configurable: true });
    }
    if (logRequests) {
      const started = performance.now();
      res.on('finish', () => {
        // originalUrl: a nested router (the OAuth endpoints') has cut its mount path off req.path by now.
        const entry = { method: req.method, path: (req.originalUrl ?? req.url ?? '').split('?', 1)[0], status: res.statusCode, ms: Math.round(performance.now() - started) };
        if (res.statusCode >= 500) req.log!.error(entry, 'request failed');
        else req.log!.info(entry, 'request');
      });
    }
  };
}

/**
 * A prototype for a hot path's requests, under express's app.request: req.log is its getter, created on a request's
 * first use from the logger beginRequest(log, { sharedLog: true }) left on it, instead of an accessor (and its closure) defined on
 * every request, which the functions hot path paid on each invocation (issue 46).
 */
export function sharedLogPrototype(app: Express): Request {
  const proto = Object.create(app.request) as Request;
  Object.defineProperty(proto, 'log', {
    get(this: LoggedRequest): Logger {
      return (this[CHILD_LOG] ??= this[BASE_LOG]!.child({ req_id: this.id }));
    },
    configurable: true,
  });
  return proto;
}

/**
 * node:http's request and response classes with express's prototypes (`requestPrototype` and app.response) under
 * them, for the HTTP server: its requests are born express's request and response, so a hot path's asExpress does not
 * change an object's prototype on every request (which costs V8 the object's shape, issue 46). Express's own
 * app.handle still sets app.request on the requests it serves, as before.
 */
export function expressServerClasses(app: Express, requestPrototype: Request): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  class ExpressIncomingMessage extends IncomingMessage {}
  Object.setPrototypeOf(ExpressIncomingMessage.prototype, requestPrototype);
  class ExpressServerResponse<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  Object.setPrototypeOf(ExpressServerResponse.prototype, app.response);
  return { IncomingMessage: ExpressIncomingMessage, ServerResponse: ExpressServerResponse };
}

/**
 * What express's app.handle and router do to a request before its first middleware (express 5). `requestPrototype`:
 * app.request, or one under it (sharedLogPrototype). The prototypes are set only when the server's classes did not
 * (expressServerClasses).
 */
export function asExpress(app: Express, incoming: IncomingMessage, outgoing: ServerResponse, requestPrototype: Request = app.request): { req: Request; res: Response } {
  const req = (requestPrototype.isPrototypeOf(incoming) ? incoming : Object.setPrototypeOf(incoming, requestPrototype)) as Request;
  const res = (app.response.isPrototypeOf(outgoing) ? outgoing : Object.setPrototypeOf(outgoing, app.response)) as Response;
  req.res = res;
  res.req = req;
  res.locals = Object.create(null) as Response['locals'];
  req.originalUrl = req.url;
  return { req, res };
}
