// The load generator, run as its own process so it never shares an event loop with a server under test.
// Usage: node bench/load.ts '<LoadSpec as JSON>'; prints a LoadResult as JSON on stdout.
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  /** Replace `[<id>]` in the body with a fresh id per request (JSON-RPC ids must be unique per session). */
  idReplacement?: boolean;
  /** Request these paths (path + query) in turn, one per request across all connections, instead of url's path. */
  paths?: string[];
  /** Every response body must contain each of these, and none of `forbid`; otherwise it counts as a mismatch. */
  expect: string[];
  forbid: string[];
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  ok: number;
  /** Responses other than 200 + socket errors + timeouts. */
  errors: number;
  /** Responses whose body failed the expect/forbid check (a non-2xx usually counts here too). */
  mismatches: number;
  statusCodes: Record<string, number>;
}

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
const paths = spec.paths;
let next = 0;
const r = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  body: spec.body,
  connections: spec.connections,
  duration: spec.duration,
  idReplacement: spec.idReplacement ?? false,
  ...(paths?.length ? { requests: [{ setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length]! }) }] } : {}),
  verifyBody: (body) => spec.expect.every((s) => body.includes(s)) && !spec.forbid.some((s) => body.includes(s)),
});
const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count]));
const non200 = Object.entries(statusCodes).reduce((n, [code, count]) => (code === '200' ? n : n + count), 0);
const result: LoadResult = {
  rps: r.requests.average,
  p50: r.latency.p50,
  p99: r.latency.p99,
  requests: r.requests.total,
  ok: r['2xx'],
  errors: non200 + r.errors + r.timeouts,
  mismatches: r.mismatches,
  statusCodes,
};
process.stdout.write(JSON.stringify(result) + '\n');
