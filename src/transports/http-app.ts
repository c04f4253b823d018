import http from 'node:http';
import express, { type ErrorRequestHandler, type NextFunction, type RequestHandler } from 'express';
import { expressServerClasses, requestLog, sharedLogPrototype } from './request-log.ts';
import { corsMiddleware } from './cors.ts';
import { functionsHotPath } from './raw/functions.ts';
import { mcpHotPath } from './mcp-hot-path.ts';
import type { Logger } from 'pino';
import { errors } from '../core/errors.ts';
import type { AnyTool } from '../core/define.ts';
import type { Services } from '../services.ts';
import { buildOpenApi } from '../platform/docs.ts';
import { errorShapes, JSON_TYPES, largeJsonParser, restRoutes, routeBodyParsers, sendError, type BaseUrlLocals, type SubdomainLocals } from './rest.ts';
import { routeTable } from './route-table.ts';
import type { McpTransport } from './mcp.ts';
import { mcpOriginGuard } from './mcp-origins.ts';
import { rawRoutes, type RawRoutes } from './raw/index.ts';
import { markPlatformHost, platformHostOnly, requestSubdomain } from './app-host.ts';
import { clientErrorAnswer, MAX_HEADER_BYTES } from './socket-reply.ts';
import { postgrestAlias } from './postgrest-alias.ts';
import { settleUnreadBody } from './raw/unread-body.ts';
import { restHotPath, type SharedStack } from './rest-hot-path.ts';

/**
 * The body limit of /mcp (a tools/call carries whole function sources, up to 1 MB of code and more once JSON-escaped,
 * or inline file bytes), and of the REST routes whose binding sets largeBody (the same inputs over REST).
 */
const LARGE_BODY_LIMIT = '4mb';
const LARGE_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpAppDeps {
  tools: readonly AnyTool[];
  services: Services;
  mcp: McpTransport;
  log: Logger;
}

/** The HTTP server: the express app, with requests node cannot parse answered in the standard envelope too. */
export function createHttpServer(deps: HttpAppDeps): http.Server {
  const { config } = deps.services;
  // strict: false lets scalar JSON through to validation, which names what the route expects instead.
  const stack: SharedStack = {
    json: express.json({ limit: config.bodyLimit, strict: false, type: JSON_TYPES }),
    largeJson: largeJsonParser(LARGE_BODY_LIMIT, config.bodyLimit),
    requestErrors: requestErrorHandler(config.bodyLimit),
    shapes: errorShapes(deps.tools),
    routes: restRoutes(deps.tools, deps.services),
  };
  const app = createHttpApp(deps, stack);
  // Public function traffic first: none of the express stack applies to it but what functionsHotPath does itself.
  // The hot paths' requests: req.log a getter of their prototype, the child logger made on first use.
  const requestPrototype = sharedLogPrototype(app);
  const functions = functionsHotPath(deps.services, deps.log, app, requestPrototype);
  const mcpMessages = mcpHotPath(deps.services, deps.log, deps.mcp, LARGE_BODY_BYTES);
  const rest = restHotPath({ services: deps.services, log: deps.log, app, stack, requestPrototype });
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, ...expressServerClasses(app, requestPrototype) }, (req, res) => {
    if (!functions(req, res) && !mcpMessages(req, res) && !rest(req, res)) void app(req, res);
  });
  server.on('clientError', clientErrorAnswer(deps.services.config.baseUrl));
  return server;
}

function createHttpApp({ tools, services, mcp, log }: HttpAppDeps, { json, largeJson, requestErrors, shapes, routes }: SharedStack): express.Express {
  const { config } = services;
  const app = express();
  (app.locals as BaseUrlLocals).baseUrl = config.baseUrl;
  app.disable('x-powered-by');
  // No ETag on the API's answers: express hashed every GET answer (SHA-1) for it, PostgREST sends none, and no client
  // revalidates an API answer; hosted sites and files set their own.
  app.set('etag', false);
  if (!config.baseDomain) {
    log.warn("SVC_BASE_DOMAIN is not set: apps have no hosts of their own, so their sites and functions' pages are served sandboxed on SVC_BASE_URL's paths (no cookies or storage); set it for hosted sites (docs/security.md, 'Origins')");
  }
  // Only trusted hops may name the client: otherwise X-Forwarded-For would let anyone pick a fresh rate-limit bucket.
  app.set('trust proxy', config.trustProxy);

  app.use(requestLog(log));
  app.use(postgrestAlias);
  app.use(shapes);
  app.use(markPlatformHost(services));
  // Before CORS, so that a foreign page's preflight is refused too (DNS-rebinding protection of the MCP transport).
  app.use('/mcp', mcpOriginGuard(config.mcp));
  app.use(corsMiddleware);
  app.use(rawRouter(rawRoutes, 'early', services, log));
  app.use('/mcp', express.json({ limit: LARGE_BODY_LIMIT, type: JSON_TYPES }));
  app.use(routeBodyParsers(tools, largeJson, config.bodyLimit));
  app.use(json);
  app.use(appHostResolver(services));

  app.all('/mcp', mcp.handle);
  const openApi = buildOpenApi(tools, config.baseUrl);
  app.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });

  app.use(routeTable(routes.all));

  app.use(rawRouter(rawRoutes, 'fallback', services, log));
  app.use((req, res) => sendError(res, errors.routeNotFound(req.method, req.path)));
  app.use(requestErrors);
  return app;
}

function rawRouter(mounts: readonly RawRoutes[], phase: 'early' | 'fallback', services: Services, log: Logger): express.Router {
  const router = express.Router();
  for (const mount of mounts) {
    const add = mount[phase];
    if (!add) continue;
    if (!mount.platformHostOnly) {
      add(router, services, log);
      continue;
    }
    const pages = express.Router();
    add(pages, services, log);
    router.use(platformHostOnly(pages));
  }
  return router;
}

/**
 * Host `{subdomain}.{base_domain}` (subdomain routing) or an app's verified custom domain resolves the app; the short
 * paths of app-scoped tools and the live site then apply. A custom domain's lookup is cached in the domains area, so
 * requests to the platform's own host (or an IP address) cost no query.
 */
function appHostResolver(services: Services): RequestHandler {
  return (req, res, next) => {
    const subdomain = requestSubdomain(req.headers.host, services);
    if (!subdomain) return customDomain(services, req.headers.host, res.locals as SubdomainLocals, next);
    services.apps
      .bySubdomain(subdomain)
      .then((app) => {
        if (!app) return sendError(res, errors.notFound(`App at host '${subdomain}.${services.config.baseDomain}'`, 'Check the subdomain returned by apps_create.'));
        (res.locals as SubdomainLocals).subdomainAppId = app.id;
        next();
      })
      .catch(next);
  };
}

/** A host that is no app's custom domain goes on to the platform's routes. */
function customDomain(services: Services, host: string | undefined, locals: SubdomainLocals, next: NextFunction): void {
  const found = services.domains.appForHost(host);
  if (found === null) return next();
  if (typeof found === 'string') {
    locals.subdomainAppId = found;
    return next();
  }
  found.then((appId) => {
    if (appId) locals.subdomainAppId = appId;
    next();
  }, next);
}

/** Errors raised before any handler ran (body parsing, path decoding): the client's, so a 4xx. */
function requestErrorHandler(limit: string): ErrorRequestHandler {
  return (err: { type?: string; status?: number; limit?: number }, req, res, _next) => {
    // The router decodes path parameters while matching routes, so a malformed %-escape surfaces here.
    if (err instanceof URIError) return sendError(res, errors.validation('A path segment is not valid percent-encoded UTF-8; encode each segment as encodeURIComponent does.'));
    // Some routes (/mcp, those with largeBody) have their own larger parser: name the limit that applied.
    const applied = typeof err.limit === 'number' && err.limit % 1048576 === 0 ? `${err.limit / 1048576}mb` : limit;
    // The rest of an over-long body is read and discarded first (bounded): a client still sending would otherwise see
    // its connection reset (ECONNRESET) instead of the 413.
    if (err.type === 'entity.too.large') return void settleUnreadBody(req, res).then(() => sendError(res, errors.payloadTooLarge(applied)));
    if (err.type === 'entity.parse.failed') return sendError(res, errors.invalidJson());
    if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
      return sendError(res, errors.validation('Unsupported body encoding or charset; send UTF-8 JSON.'));
    }
    req.log.error({ err }, 'unhandled error');
    sendError(res, errors.internal());
  };
}
