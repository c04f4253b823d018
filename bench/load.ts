// The load generator, run as its own process so it never shares an event loop with a server under test.
// Usage: node bench/load.ts < '<LoadSpec as JSON>' (the spec on stdin: a rotation of paths and tokens is larger than
// an argument may be); prints a LoadResult as JSON on stdout.
//
// It also reports its own CPU over the run (process.cpuUsage: every thread of this process, autocannon's worker
// threads included) as a % of one core, so a figure the generator itself capped can be told from the server's.
import path from 'node:path';
import autocannon from 'autocannon';
import { ROTATION_ENV, rotator } from './load-rotate.ts';
import { VERIFY_ENV, verifier } from './load-verify.ts';

export interface LoadSpec {
  /**
   * The URL, or one per server process: connection i goes to url[i % url.length] (autocannon's own spreading), so each
   * process gets its share of the connections (about half each for two; with worker threads each thread spreads its own).
   */
  url: string | string[];
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  /** Replace `[<id>]` in the body with a fresh id per request (JSON-RPC ids must be unique per session). */
  idReplacement?: boolean;
  /** Request these paths (path + query) in turn, one per request across all connections, instead of url's path. */
  paths?: string[];
  /**
   * Send these headers in turn, each set merged over `headers`: request i gets paths[i % paths.length] and
   * headerSets[i % headerSets.length], so with as many paths as a multiple of header sets a path always goes with the
   * same headers (an end user's row with that user's token). With worker threads, each thread counts its own i.
   */
  headerSets?: Array<Record<string, string>>;
  /**
   * Headers merged over `headers` on the connections to one origin (`http://host:port`) only, before `headerSets`: with
   * several URLs, what belongs to one process (a session that lives in its memory).
   */
  originHeaders?: Record<string, Record<string, string>>;
  /** Every response body must contain each of these, at least one of `expectOneOf` and none of `forbid`; otherwise it counts as a mismatch. */
  expect: string[];
  expectOneOf?: string[];
  forbid: string[];
  /** autocannon worker threads, the connections split among them; unset or 1: autocannon runs on this process's main thread. */
  workers?: number;
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
  /** CPU of the load generator's process over the run, user + system, as a % of one core (above 100 with workers). */
  cpu: number;
  /** Threads that sent requests: 1, or the worker threads. */
  workers: number;
}

/** A generator thread busy at least this share of a core is the bottleneck rather than the server. */
export const SATURATED_CPU = 90;

/** Whether the generator was the bottleneck: its threads busy SATURATED_CPU % of a core each, on average. */
export function saturated(r: Pick<LoadResult, 'cpu' | 'workers'>): boolean {
  return r.cpu >= SATURATED_CPU * r.workers;
}

if (import.meta.main) {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const spec = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadSpec;
  const workers = spec.workers && spec.workers > 1 ? spec.workers : undefined;
  const check = { expect: spec.expect, expectOneOf: spec.expectOneOf, forbid: spec.forbid };
  const rotation =
    spec.paths?.length || spec.headerSets?.length || spec.originHeaders ? { paths: spec.paths, headerSets: spec.headerSets, originHeaders: spec.originHeaders } : undefined;
  // Worker threads require() the hooks from their files and read their settings from the environment they copy from ours.
  process.env[VERIFY_ENV] = JSON.stringify(check);
  if (rotation) process.env[ROTATION_ENV] = JSON.stringify(rotation);
  const hook = (file: string) => path.join(import.meta.dirname, file);

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    duration: spec.duration,
    idReplacement: spec.idReplacement ?? false,
    ...(rotation ? { requests: [{ setupRequest: workers ? hook('load-rotate.ts') : rotator(rotation) }] } : {}),
    ...(workers ? { workers, verifyBody: hook('load-verify.ts') } : { verifyBody: verifier(check) }),
  });
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;

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
    cpu: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    workers: workers ?? 1,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}
