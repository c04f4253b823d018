// The generated routes' dispatch: one lookup by method and number of path segments, then the few patterns of that
// shape in registration order, instead of express walking every route layer in turn (a data request used to test
// some two hundred layers before its own, a cost that grew with every area added).
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export interface TableRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI-style path, e.g. /v1/{app_id}/{table}. */
  path: string;
  handle: (req: Request, res: Response, next: NextFunction) => void;
  /** The route reads JSON bodies up to the large limit, or raw bytes (its binding's largeBody, binaryBody). */
  largeBody?: boolean;
  binaryBody?: boolean;
}

export interface Compiled {
  re: RegExp;
  keys: string[];
  handle: TableRoute['handle'];
}

/** As express matches (non-strict, case-insensitive): a parameter is one non-empty segment; one trailing slash is allowed. */
function compile(route: TableRoute): Compiled {
  const keys: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([a-z_]+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      keys.push(param[1]!);
      return '([^/]+?)';
    })
    .join('/');
  return { re: new RegExp(`^${source}/?$`, 'i'), keys, handle: route.handle };
}

/** Path segments, a trailing slash ignored: routes of different lengths never match the same path. */
export const segmentCount = (path: string): number => path.replace(/(?<!\/)\/+$/, '').split('/').length;

/** The routes by method and shape (number of path segments), each shape's in registration order. */
export class RouteTable {
  readonly #table = new Map<string, Map<number, Compiled[]>>();

  constructor(routes: readonly TableRoute[]) {
    for (const route of routes) {
      let bySize = this.#table.get(route.method);
      if (!bySize) this.#table.set(route.method, (bySize = new Map()));
      const size = segmentCount(route.path);
      let list = bySize.get(size);
      if (!list) bySize.set(size, (list = []));
      list.push(compile(route));
    }
  }

  /** The routes a request of this method and path may be, in order (HEAD is served by the GET routes). */
  candidates(method: string | undefined, path: string): readonly Compiled[] | undefined {
    return this.#table.get(method === 'HEAD' ? 'GET' : (method ?? ''))?.get(segmentCount(path));
  }
}

/** The first route of `candidates` whose pattern matches, from `from` on, with its position and raw parameter values. */
export function firstMatch(candidates: readonly Compiled[], path: string, from = 0): { at: number; route: Compiled; values: string[] } | undefined {
  for (let at = from; at < candidates.length; at++) {
    const m = candidates[at]!.re.exec(path);
    if (m) return { at, route: candidates[at]!, values: m.slice(1) };
  }
  return undefined;
}

/** Path parameters by name, percent-decoded (a malformed escape throws the URIError express's router would raise). */
export function paramsOf(route: Compiled, values: readonly string[]): Record<string, string> {
  return Object.fromEntries(route.keys.map((key, i) => [key, decodeURIComponent(values[i]!)]));
}

/**
 * A middleware serving `routes` (earlier ones win among those of the same shape, as express's order did). HEAD is
 * served by the GET routes. Parameters are percent-decoded; a malformed escape goes to the error handler as the
 * URIError express's router would raise.
 */
export function routeTable(routes: readonly TableRoute[]): RequestHandler {
  const table = new RouteTable(routes);
  return (req, res, next) => {
    const candidates = table.candidates(req.method, req.path);
    if (!candidates) return next();
    let at = 0;
    // A handler may pass (next() without an error: a subdomain route on a request without an app host), and the
    // next candidate of the same shape is tried, as the next express layer was.
    const tryFrom = (err?: unknown): void => {
      if (err) return next(err);
      const hit = firstMatch(candidates, req.path, at);
      if (!hit) return next();
      at = hit.at + 1;
      try {
        req.params = paramsOf(hit.route, hit.values);
      } catch (decodeErr) {
        return next(decodeErr);
      }
      return hit.route.handle(req, res, tryFrom);
    };
    tryFrom();
  };
}
