// The generated routes' dispatch table: express's matching rules kept (order, HEAD, trailing slash, case,
// percent-decoding, passing to the next candidate), with one lookup instead of a walk over every route.
import { describe, expect, it } from 'vitest';
import type { NextFunction, Request, Response } from 'express';
import { routeTable, type TableRoute } from '../../src/transports/route-table.ts';

function run(routes: TableRoute[], method: string, path: string): { hit?: string; params?: Record<string, string>; err?: unknown; passed: boolean } {
  const out: { hit?: string; params?: Record<string, string>; err?: unknown; passed: boolean } = { passed: false };
  const req = { method, path, params: {} } as unknown as Request;
  const next: NextFunction = (err?: unknown) => {
    if (err) out.err = err;
    else out.passed = true;
  };
  routeTable(routes)(req, {} as Response, next);
  if (out.hit) out.params = req.params as Record<string, string>;
  return out;
}

const route = (method: TableRoute['method'], path: string, hits: string[], pass = false): TableRoute => ({
  method,
  path,
  handle: (req, _res, next) => {
    if (pass) return next();
    hits.push(`${method} ${path} ${JSON.stringify(req.params)}`);
  },
});

describe('routeTable', () => {
  it('the first route of the same shape wins; parameters are decoded; HEAD is served by GET; a trailing slash and case do not matter', () => {
    const hits: string[] = [];
    const routes = [route('POST', '/v1/{app_id}/embeddings', hits), route('POST', '/v1/{app_id}/{table}', hits), route('GET', '/v1/{app_id}/{table}', hits)];
    run(routes, 'POST', '/v1/abc/embeddings');
    run(routes, 'POST', '/v1/abc/my%20table');
    run(routes, 'HEAD', '/V1/abc/notes/');
    expect(hits).toEqual(['POST /v1/{app_id}/embeddings {"app_id":"abc"}', 'POST /v1/{app_id}/{table} {"app_id":"abc","table":"my table"}', 'GET /v1/{app_id}/{table} {"app_id":"abc","table":"notes"}']);
  });

  it('passes on what it does not serve: another method, another shape, an empty segment', () => {
    const hits: string[] = [];
    const routes = [route('GET', '/v1/{app_id}/{table}', hits)];
    expect(run(routes, 'DELETE', '/v1/a/b').passed).toBe(true);
    expect(run(routes, 'GET', '/v1/a/b/c').passed).toBe(true);
    expect(run(routes, 'GET', '/v1//b').passed).toBe(true);
    expect(hits).toEqual([]);
  });

  it('a handler that passes hands the request to the next route of the same shape', () => {
    const hits: string[] = [];
    const routes = [route('GET', '/schema', hits, true), route('GET', '/{table}', hits)];
    run(routes, 'GET', '/schema');
    expect(hits).toEqual(['GET /{table} {"table":"schema"}']);
  });

  it('a malformed percent-escape reaches the error handler as a URIError', () => {
    const out = run([route('GET', '/v1/{app_id}', [])], 'GET', '/v1/%E0%A4%A');
    expect(out.err).toBeInstanceOf(URIError);
  });
});
