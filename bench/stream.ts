// Scenario `stream` (issue 13, "Performance (benchmark)"): the substrate change stream's latency from commit to
// frame with BENCH_STREAM_SOCKETS (200) sockets connected, against raw NOTIFY -> ws in the same run; and outbox
// deliveries per second to a loopback receiver.
//
// 1. Stream latency. 200 websocket clients connect to the platform through single-use tickets (POST
//    /v1/me/substrate/ws-ticket, then /v1/me/substrate/stream?ticket=...), and 200 to the baseline: this file run as
//    its own process (ROLE=ws), one raw `pg` LISTEN on a test channel and a `ws` server that sends each
//    notification's payload, as is, to every socket. The writer, in the driver on one `pg` connection to the control
//    database, commits one change at a time at BENCH_STREAM_RATE (20) changes/s: for the platform `begin`, the
//    learning row inserted straight into substrate_learnings (its trigger NOTIFYs svc_substrate), `commit`; for the
//    baseline `begin`, `select pg_notify(<test channel>, <the same frame JSON>)`, `commit`. The commit time is
//    performance.now() right after COMMIT returns; each socket's frame arrival is performance.now() in its message
//    handler (same process, same clock). Rounds alternate platform and baseline; p50 / p99 over every (change,
//    socket) latency of a round, the median over the rounds. Printed as its own table (bench/results/stream.json).
// 2. Outbox deliveries per second. A loopback receiver (this file as its own process, ROLE=receiver: node:http
//    answering 200 and counting the POSTs) is the target of record_learning (PUT outbox-targets; the platform runs
//    with SVC_OUTBOUND_ALLOW_PRIVATE=true, see streamPlatformEnv). BENCH_OUTBOX_DELIVERIES (500) proposals are fired
//    at 10 in flight; the time from the first proposal to the receiver's Nth hit gives deliveries/s. The receiver's
//    raw capacity (autocannon, BENCH_CONNECTIONS, keep-alive) is printed for scale. See bench/README.md.
//
// Run as its own entry point (`node bench/stream.ts`), this file IS the baseline process or the receiver (prints
// `ready <port>`).
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import WebSocket, { WebSocketServer } from 'ws';
import { newId } from '../src/substrate/ids.ts';
import { CONNECTIONS, DURATION, ROUNDS, WARMUP, envInt, load, personSubstrateKey, serveBaseline, startBaseline, type BenchContext, type Pair, median } from './harness.ts';
import { saturated } from './load.ts';

/** The baseline's NOTIFY channel (the platform's is svc_substrate). */
const TEST_CHANNEL = 'bench_stream';

// ---------------------------------------------------------------------------------------------- the processes

if (import.meta.main) {
  const role = process.env.ROLE;
  if (role === 'ws') {
    // Raw NOTIFY -> ws: one LISTEN connection, every payload sent as is to every connected socket.
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(`listen ${TEST_CHANNEL}`);
    const server = http.createServer((_req, res) => res.writeHead(404).end());
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.on('error', () => {});
      ws.send('{"type":"hello"}');
    });
    client.on('notification', (msg) => {
      for (const ws of wss.clients) if (ws.readyState === WebSocket.OPEN) ws.send(msg.payload ?? '');
    });
    process.on('SIGTERM', () => {
      for (const ws of wss.clients) ws.terminate();
    });
    serveBaseline(server, { end: () => client.end() });
  } else if (role === 'receiver') {
    // The loopback webhook receiver: 200 to every POST, counted; GET /count answers the count.
    let hits = 0;
    const server = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/count') return res.writeHead(200, { 'content-type': 'text/plain' }).end(String(hits));
      req.on('data', () => {});
      req.once('end', () => {
        if (req.method === 'POST' && req.headers['x-svc-signature'] !== undefined) hits++;
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok');
      });
    });
    serveBaseline(server, { end: async () => {} });
  } else {
    throw new Error('ROLE must be ws or receiver');
  }
}

// ---------------------------------------------------------------------------------------------- settings

const SOCKETS = envInt('BENCH_STREAM_SOCKETS', 200);
const RATE = envInt('BENCH_STREAM_RATE', 20);
const DELIVERIES = envInt('BENCH_OUTBOX_DELIVERIES', 500);
/** Proposals in flight while firing the outbox's N. */
const FIRE_CONCURRENCY = 10;

/** What run.ts adds to the platform's environment when this scenario is selected: a loopback receiver is allowed. */
export async function streamPlatformEnv(): Promise<Record<string, string>> {
  return { SVC_OUTBOUND_ALLOW_PRIVATE: 'true' };
}

// ---------------------------------------------------------------------------------------------- helpers

interface Reply {
  status: number;
  json: any;
}

async function call(url: string, authorization: string, method: string, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: { Authorization: authorization, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok) throw new Error(`stream pre-flight: ${what}${detail === undefined ? '' : `\n${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
}

/** Nearest-rank percentile of a sorted array. */
function pct(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------- stream latency

/** One side's 200 sockets: every frame's arrival time and raw text, decoded after the round (keeps the handler cheap). */
class Sockets {
  readonly sockets: WebSocket[] = [];
  arrivals: Array<{ t: number; data: WebSocket.RawData }> = [];

  async open(urls: () => Promise<string>, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const url = await urls();
      const ws = new WebSocket(url);
      const hello = new Promise<void>((resolve, reject) => {
        ws.once('error', reject);
        ws.once('unexpected-response', (_req, res) => reject(new Error(`${url.replace(/ticket=.*/, 'ticket=...')}: upgrade answered ${res.statusCode}`)));
        ws.once('message', (data) => (String(data).includes('"hello"') ? resolve() : reject(new Error(`first frame is not hello: ${String(data)}`))));
      });
      await hello;
      ws.on('error', () => {});
      ws.on('message', (data) => this.arrivals.push({ t: performance.now(), data }));
      this.sockets.push(ws);
    }
  }

  /** The arrival times per change id, and the frames taken. */
  take(): Map<string, number[]> {
    const byId = new Map<string, number[]>();
    for (const { t, data } of this.arrivals.splice(0)) {
      const frame = JSON.parse(String(data)) as { id?: string };
      if (typeof frame.id !== 'string') continue;
      let list = byId.get(frame.id);
      if (!list) byId.set(frame.id, (list = []));
      list.push(t);
    }
    return byId;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.sockets.splice(0).map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === WebSocket.CLOSED) return resolve();
            ws.once('close', () => resolve());
            ws.close();
            setTimeout(() => (ws.terminate(), resolve()), 2000).unref();
          }),
      ),
    );
  }
}

interface RoundFigures {
  changes: number;
  samples: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
  /** Median over the changes of the time until the first of the sockets had the frame. */
  firstP50: number;
  /** Median over the changes of the time until the last of the sockets had the frame. */
  allP50: number;
  /** Median time from BEGIN to COMMIT returning, the writer's own transaction. */
  txP50: number;
}

type Commit = (db: pg.Client, id: string) => Promise<void>;

/** Changes at RATE/s for `seconds`, one at a time; then waits for the stragglers and computes the figures. */
async function streamRound(db: pg.Client, side: Sockets, commit: Commit, seconds: number): Promise<RoundFigures> {
  side.arrivals.length = 0;
  const committed = new Map<string, number>();
  const tx: number[] = [];
  const interval = 1000 / RATE;
  const start = performance.now();
  for (let k = 0; performance.now() - start < seconds * 1000; k++) {
    const due = start + k * interval;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const id = newId('lrn');
    const t0 = performance.now();
    await commit(db, id);
    const t = performance.now();
    committed.set(id, t);
    tx.push(t - t0);
  }
  // Stragglers: until every socket has every frame, at most 3 s.
  const expected = committed.size * side.sockets.length;
  const until = performance.now() + 3000;
  while (side.arrivals.length < expected && performance.now() < until) await sleep(20);
  const byId = side.take();
  const latencies: number[] = [];
  const lasts: number[] = [];
  const firsts: number[] = [];
  let missing = 0;
  for (const [id, t] of committed) {
    const arrivals = byId.get(id) ?? [];
    missing += side.sockets.length - arrivals.length;
    for (const a of arrivals) latencies.push(a - t);
    if (arrivals.length) {
      lasts.push(Math.max(...arrivals) - t);
      firsts.push(Math.min(...arrivals) - t);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    changes: committed.size,
    samples: latencies.length,
    missing,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    max: latencies.at(-1) ?? NaN,
    firstP50: median(firsts),
    allP50: median(lasts),
    txP50: median(tx),
  };
}

interface StreamFigures {
  platform: RoundFigures[];
  baseline: RoundFigures[];
}

async function streamLatency(ctx: BenchContext, authorization: string, userId: string, org: string): Promise<StreamFigures> {
  const baseline = await startBaseline('bench/stream.ts', { ROLE: 'ws', DATABASE_URL: ctx.controlDatabaseUrl });
  ctx.cleanups.push(baseline.child.stop);
  const platformSockets = new Sockets();
  const baselineSockets = new Sockets();
  const db = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await db.connect();
  try {
    const wsBase = ctx.platformUrl.replace(/^http/, 'ws');
    let tickets = 0;
    const t0 = performance.now();
    await platformSockets.open(async () => {
      const r = await call(`${ctx.platformUrl}/v1/me/substrate/ws-ticket`, authorization, 'POST', {});
      check((r.status === 200 || r.status === 201) && typeof r.json?.ticket === 'string', `POST ws-ticket answered ${r.status}`, r.json);
      tickets++;
      return `${wsBase}/v1/me/substrate/stream?ticket=${encodeURIComponent(r.json.ticket as string)}`;
    }, SOCKETS);
    await baselineSockets.open(async () => baseline.url.replace(/^http/, 'ws') + '/', SOCKETS);
    process.stderr.write(`stream: ${tickets} tickets minted, ${SOCKETS} + ${SOCKETS} sockets open in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    const platformCommit: Commit = async (c, id) => {
      await c.query('begin');
      await c.query(
        `insert into substrate_learnings (id, user_id, title, description, resolution_taken, related_decision_id, source_artifact_id) values ($1, $2, $3, $4, null, null, null)`,
        [id, userId, 'Bench stream change', 'A learning committed by the stream benchmark.'],
      );
      await c.query('commit');
    };
    const baselineCommit: Commit = async (c, id) => {
      await c.query('begin');
      await c.query('select pg_notify($1, $2)', [TEST_CHANNEL, JSON.stringify({ org, op: 'insert', tbl: 'learnings', id })]);
      await c.query('commit');
    };

    // Pre-flight: one change each; every socket gets the frame, the platform's with the org, op, tbl and id.
    for (const [name, side, commit] of [['platform', platformSockets, platformCommit], ['baseline', baselineSockets, baselineCommit]] as const) {
      const id = newId('lrn');
      await commit(db, id);
      const until = performance.now() + 5000;
      while (side.arrivals.length < SOCKETS && performance.now() < until) await sleep(20);
      const frames = side.arrivals.splice(0).map((a) => JSON.parse(String(a.data)));
      check(frames.length === SOCKETS && frames.every((f) => f.id === id && f.org === org && f.op === 'insert' && f.tbl === 'learnings'), `${name}: ${frames.length} of ${SOCKETS} sockets got the change's frame`, frames.slice(0, 3));
    }

    process.stderr.write(`stream: ${RATE} changes/s, warm-up ${WARMUP}s each\n`);
    await streamRound(db, platformSockets, platformCommit, WARMUP);
    await streamRound(db, baselineSockets, baselineCommit, WARMUP);
    const figures: StreamFigures = { platform: [], baseline: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      figures.platform.push(await streamRound(db, platformSockets, platformCommit, DURATION));
      figures.baseline.push(await streamRound(db, baselineSockets, baselineCommit, DURATION));
      const p = figures.platform.at(-1)!;
      const b = figures.baseline.at(-1)!;
      process.stderr.write(`stream: round ${round}/${ROUNDS}: p50 platform ${p.p50.toFixed(2)} ms, raw NOTIFY->ws ${b.p50.toFixed(2)} ms (missing ${p.missing} / ${b.missing})\n`);
    }
    return figures;
  } finally {
    await platformSockets.close();
    await baselineSockets.close();
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------- outbox

interface OutboxRound {
  deliveries: number;
  /** From the first proposal sent to the last proposal answered. */
  fireSeconds: number;
  /** From the first proposal sent to the receiver's Nth hit. */
  seconds: number;
  /** Deliveries the receiver had when the last proposal was answered. */
  deliveredWhenFired: number;
  perSecond: number;
  /** Deliveries not `delivered` with 1 attempt after the receiver had them all (status is set after the POST). */
  notDelivered: number;
}

async function outbox(ctx: BenchContext, authorization: string): Promise<{ rounds: OutboxRound[]; receiverRps: number; receiverP50: number; receiverErrors: number; receiverLoad: string }> {
  const receiver = await startBaseline('bench/stream.ts', { ROLE: 'receiver' });
  ctx.cleanups.push(receiver.child.stop);
  const count = async () => Number(await (await fetch(`${receiver.url}/count`)).text());
  const set = await call(`${ctx.platformUrl}/v1/me/substrate/outbox-targets/record_learning`, authorization, 'PUT', { webhook_url: `${receiver.url}/hook`, signing_secret: 'whsec-bench-secret' });
  check(set.status === 200, `PUT outbox-targets/record_learning answered ${set.status}`, set.json);

  const agent = new http.Agent({ keepAlive: true, maxSockets: FIRE_CONCURRENCY });
  const propose = (title: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ capability: 'record_learning', payload: { title, description: 'Delivered to the loopback receiver by the outbox benchmark.' } });
      const url = new URL(`${ctx.platformUrl}/v1/me/substrate/actions/propose`);
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.once('end', () => {
            const json = res.statusCode === 200 ? (JSON.parse(text) as { action_id?: string; verdict?: { result?: string } }) : undefined;
            if (json?.verdict?.result === 'auto_approved' && json.action_id) resolve(json.action_id);
            else reject(new Error(`propose answered ${res.statusCode}: ${text.slice(0, 300)}`));
          });
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  const db = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await db.connect();
  try {
    // Pre-flight: one proposal, one signed POST at the receiver, one delivered row.
    const before = await count();
    const first = await propose('Outbox pre-flight');
    const until = Date.now() + 20_000;
    while ((await count()) === before && Date.now() < until) await sleep(20);
    check((await count()) === before + 1, 'the receiver did not get the pre-flight delivery');

    const round = async (n: number, label: string): Promise<OutboxRound> => {
      const base = await count();
      const ids: string[] = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: FIRE_CONCURRENCY }, async () => {
          while (next < n) {
            const i = next++;
            ids.push(await propose(`Outbox ${label} ${i}`));
          }
        }),
      );
      const fired = performance.now();
      const deliveredWhenFired = (await count()) - base;
      const deadline = fired + 120_000;
      let got = 0;
      while ((got = (await count()) - base) < n && performance.now() < deadline) await sleep(10);
      const done = performance.now();
      if (got < n) throw new Error(`outbox: the receiver got ${got} of ${n} deliveries within 120 s of the last proposal`);
      // The status row is updated after the receiver's answer: give the last ones a moment, then check them all.
      let notDelivered = n;
      for (let i = 0; i < 50 && notDelivered > 0; i++) {
        notDelivered = Number((await db.query(`select count(*) filter (where status <> 'delivered' or attempts <> 1) as n from substrate_outbox_deliveries where action_id = any($1)`, [ids])).rows[0].n);
        const rows = Number((await db.query(`select count(*) as n from substrate_outbox_deliveries where action_id = any($1)`, [ids])).rows[0].n);
        notDelivered += n - rows;
        if (notDelivered > 0) await sleep(100);
      }
      const seconds = (done - t0) / 1000;
      return { deliveries: n, fireSeconds: (fired - t0) / 1000, seconds, deliveredWhenFired, perSecond: n / seconds, notDelivered };
    };

    process.stderr.write(`outbox: warm-up, ${Math.min(100, DELIVERIES)} deliveries\n`);
    await round(Math.min(100, DELIVERIES), 'warm-up');
    const rounds: OutboxRound[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      rounds.push(await round(DELIVERIES, `round ${r}`));
      const x = rounds.at(-1)!;
      process.stderr.write(`outbox: round ${r}/${ROUNDS}: ${x.deliveries} deliveries in ${x.seconds.toFixed(2)} s (proposals answered after ${x.fireSeconds.toFixed(2)} s): ${x.perSecond.toFixed(0)}/s\n`);
    }
    void first;

    // For scale: what the receiver alone answers, keep-alive, at BENCH_CONNECTIONS.
    process.stderr.write(`outbox: the receiver's raw capacity, ${DURATION}s at ${CONNECTIONS} connections\n`);
    const raw = await load({
      url: `${receiver.url}/hook`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-signature': 'sha256=bench' },
      body: JSON.stringify({ delivery_id: 'dlv_bench', action_id: 'act_bench', capability: 'record_learning', payload: { title: 'x', description: 'y' } }),
      connections: CONNECTIONS,
      duration: DURATION,
      expect: ['ok'],
      forbid: [],
    });
    const receiverLoad = `generator ${raw.cpu.toFixed(0)}% cpu${saturated(raw) ? ", SATURATED: the figure is the generator's limit" : ''}`;
    return { rounds, receiverRps: raw.rps, receiverP50: raw.p50, receiverErrors: raw.errors + raw.mismatches, receiverLoad };
  } finally {
    agent.destroy();
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------- the scenario

/** A substrate key and its default user; stream latency against raw NOTIFY -> ws; then outbox deliveries/s. */
export async function streamScenario(ctx: BenchContext): Promise<Pair[]> {
  const authorization = await personSubstrateKey(ctx, 'bench-stream');
  const settings = await call(`${ctx.platformUrl}/v1/me/substrate/settings`, authorization, 'GET');
  const userId = settings.json?.user_id as string | undefined;
  check(settings.status === 200 && typeof userId === 'string', `GET settings answered ${settings.status}`, settings.json);
  const admin = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await admin.connect();
  const org = (await admin.query<{ account_id: string }>('select account_id from substrate_users where id = $1', [userId])).rows[0]!.account_id;
  await admin.end();

  const stream = await streamLatency(ctx, authorization, userId!, org);
  const out = await outbox(ctx, authorization);

  const m = (rs: RoundFigures[], k: keyof RoundFigures) => median(rs.map((r) => r[k]));
  const sides = [
    ['platform (trigger, LISTEN, fan-out)', stream.platform],
    ['raw pg LISTEN -> ws', stream.baseline],
  ] as const;
  const f = (n: number) => n.toFixed(2);
  console.log('');
  console.log(`substrate change stream, commit -> frame on each of ${SOCKETS} sockets, ${RATE} changes/s one at a time, median of ${ROUNDS} rounds of ${DURATION}s (ms):`);
  const head = ['server', 'p50', 'p99', 'max', 'first socket p50', 'all sockets p50', 'writer tx p50', 'changes per round', 'missing'];
  const rows: string[][] = sides.map(([name, rs]) => [name, f(m(rs, 'p50')), f(m(rs, 'p99')), f(m(rs, 'max')), f(m(rs, 'firstP50')), f(m(rs, 'allP50')), f(m(rs, 'txP50')), rs.map((r) => r.changes).join(' / '), String(rs.reduce((n, r) => n + r.missing, 0))]);
  rows.push(['ratio platform/raw', `${(m(stream.platform, 'p50') / m(stream.baseline, 'p50')).toFixed(2)}x`, `${(m(stream.platform, 'p99') / m(stream.baseline, 'p99')).toFixed(2)}x`, '', `${(m(stream.platform, 'firstP50') / m(stream.baseline, 'firstP50')).toFixed(2)}x`, `${(m(stream.platform, 'allP50') / m(stream.baseline, 'allP50')).toFixed(2)}x`, '', '', '']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  console.log(`  (per round p50: platform ${stream.platform.map((r) => f(r.p50)).join(' / ')}, raw ${stream.baseline.map((r) => f(r.p50)).join(' / ')}; added p50 ${f(m(stream.platform, 'p50') - m(stream.baseline, 'p50'))} ms, p99 ${f(m(stream.platform, 'p99') - m(stream.baseline, 'p99'))} ms)`);
  console.log('');
  console.log(`substrate outbox, ${DELIVERIES} record_learning proposals (${FIRE_CONCURRENCY} in flight) delivered to a loopback receiver, ${ROUNDS} rounds:`);
  for (const [i, r] of out.rounds.entries()) {
    console.log(`  round ${i + 1}: all ${r.deliveries} delivered ${r.seconds.toFixed(2)} s after the first proposal (the proposals took ${r.fireSeconds.toFixed(2)} s, ${r.deliveredWhenFired} delivered by then, the other ${r.deliveries - r.deliveredWhenFired} in ${(r.seconds - r.fireSeconds).toFixed(2)} s more): ${r.perSecond.toFixed(0)} deliveries/s; not delivered in 1 attempt: ${r.notDelivered}`);
  }
  console.log(`  median: ${median(out.rounds.map((r) => r.perSecond)).toFixed(0)} deliveries/s; the receiver alone (autocannon, ${CONNECTIONS} keep-alive connections): ${out.receiverRps.toFixed(0)} req/s (${out.receiverLoad}), p50 ${out.receiverP50} ms, errors ${out.receiverErrors}`);
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(import.meta.dirname, 'results', 'stream.json'),
    JSON.stringify({ date: new Date().toISOString(), sockets: SOCKETS, rate: RATE, rounds: ROUNDS, duration_s: DURATION, stream, outbox: { deliveries: DELIVERIES, concurrency: FIRE_CONCURRENCY, ...out } }, null, 2) + '\n',
  );
  const missing = [...stream.platform, ...stream.baseline].reduce((n, r) => n + r.missing, 0);
  if (missing > 0 || out.rounds.some((r) => r.notDelivered > 0) || out.receiverErrors > 0) {
    console.error('stream: missing frames, undelivered deliveries or receiver errors: the figures are not trustworthy');
    process.exitCode = 1;
  }
  return [];
}
