// Scenario `realtime` (issue 42, "Done when": bench): postgres_changes on an app's tables, the latency from commit to
// delivery (p50, p95, p99) and the deliveries per second with 10, 100 and 500 subscribers (BENCH_REALTIME_SUBSCRIBERS),
// each a distinct signed-up end user whose deliveries row-level security decides, against a raw listener that fans the
// same changes out over `ws` with no checks, measured in the same run.
//
// Three streamed tables (`realtime: true`), one workload each, so that every change is visible to a known set of the
// subscribers:
// - `notes`, access 'user': a change reaches its owner only (one subscriber); the ownership policy is evaluated per
//   subscriber (the platform does this one in JavaScript, on the captured rows);
// - `team_notes`, group access (members in `team_members`, TEAMS teams): a change reaches its team, a fifth of the
//   subscribers; the group policy is evaluated per subscriber in SQL. At 500 subscribers this is the shape of Supabase's
//   published RLS figure (500 clients, 30 changes/s, 6 messages per client per second, 3,000 in all, p95 228 ms);
// - `posts`, access 'public': every subscriber sees every change (the policy admits every row, which the platform reads
//   off the policy: no SQL per subscriber), the pure fan-out.
// Every subscriber receives BENCH_REALTIME_RATE (6) changes a second in every workload, so N subscribers are offered
// 6 x N deliveries a second: notes 6 x N changes a second (3,000 at 500), team_notes 30, posts 6.
//
// Subscribers: raw `ws` clients speaking Phoenix v2 frames (cheaper than supabase-js clients), all of them in a child
// process of their own (this file with ROLE=subscribers, driven over IPC), so that neither the writer nor the driver
// shares their event loop. Platform sockets: /v1/{app}/realtime/v1/websocket?apikey=<publishable key>&vsn=2.0.0, one per
// user, joining `realtime:bench` with `{config: {postgres_changes: [{event: '*', schema: 'public', table}]}, access_token}`;
// a socket counts once its join is answered ok (the platform answers once the changes flow). Baseline: this file with
// ROLE=ws, one `pg` LISTEN and a `ws` server; the same rows go into same-shaped tables of a schema `bench_raw` in the same
// app database, whose statement trigger NOTIFYs each row as `{table, record}`; the listener sends the payload as is to
// the sockets of the row's owner (notes), team (team_notes) or to every socket (posts). No parsing beyond the routing key.
//
// The writer (the driver, BENCH_REALTIME_WRITERS `pg` connections to the app database with synchronous_commit off, see
// realtimeScenario) inserts one row per transaction at a steady rate; each row carries its `seq`. The
// commit time is the wall clock (performance.timeOrigin + now) right after the insert returns; the subscriber process
// stamps each frame's arrival with its own wall clock, corrected by the offset between the two processes' clocks
// measured over IPC before each block. Latency = arrival - commit, over every (change, subscriber) delivery. Rounds
// alternate platform and baseline; the table shows the medians over the rounds. Printed as its own table
// (bench/results/realtime.json). See bench/README.md.
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import WebSocket, { WebSocketServer } from 'ws';
import { DURATION, ROUNDS, WARMUP, CLUSTER_URL, envInt, median, percentile, serveBaseline, startBaseline, startChild, waitFor, type BenchContext, type Child, type Pair } from './harness.ts';
import { loadConfig } from '../src/config.ts';
import { SATURATED_CPU } from './load.ts';
import { cpuPercent, cpuSeconds, postgresPids } from './proc-cpu.ts';

/** The baseline's NOTIFY channel. */
const CHANNEL = 'bench_realtime';
/** The schema of the baseline's tables, in the app database. */
const RAW_SCHEMA = 'bench_raw';
/** Groups of the team workload: subscriber j is in team j % TEAMS, so a team change reaches a fifth of them. */
const TEAMS = 5;
const TOPIC = 'realtime:bench';
const JOIN_REF = '1';
/** A platform frame carrying a change, told from the others (`system` also names postgres_changes) without parsing it: the event slot of [join_ref, ref, topic, event, payload]. */
const CHANGE_EVENT = ',"postgres_changes",{';
const BODY = 'A change written by the realtime benchmark, delivered to whoever may read it.';

/** Per table: the column the baseline routes a row by (its owner or team), or none (every socket of the table). */
const ROUTE_BY: Record<string, string | undefined> = { notes: 'user_id', team_notes: 'team_id', posts: undefined };

type Side = 'platform' | 'raw';
const SIDES: readonly Side[] = ['platform', 'raw'];

/** The wall clock in ms with sub-ms resolution, comparable between processes of one machine (up to an offset measured over IPC). */
const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------- the processes

/** One arrival: the side, the subscriber's index, the arrival time (this process's wall clock) and the frame. */
interface Arrival {
  side: number;
  sub: number;
  t: number;
  data: Buffer;
}

/** What the driver asks the subscriber process; each answer carries the same id. */
type Ask =
  | { op: 'open'; side: Side; sockets: Array<{ url: string; join?: string }> }
  | { op: 'clock' }
  | { op: 'start' }
  | { op: 'count' }
  | { op: 'take'; frames?: boolean }
  | { op: 'close' };

/** The subscriber process's answer to `take`: each change's delivery as [side, subscriber, seq, arrival]. */
interface Taken {
  deliveries: Array<[number, number, number, number]>;
  /** With `frames`: every frame's text, changes or not (join replies and `system` messages come before any). */
  frames?: Array<{ side: number; sub: number; text: string }>;
  /** CPU of the subscriber process since `start`, % of one core. */
  cpu: number;
  /** Sockets of this block that closed unasked (a dropped slow reader loses its deliveries). */
  closed: number;
}

if (import.meta.main) {
  const role = process.env.ROLE;
  if (role === 'ws') serveRaw();
  else if (role === 'subscribers') serveSubscribers();
  else throw new Error('ROLE must be ws or subscribers');
}

/** The baseline: one LISTEN, each payload sent as is to the sockets of its table and routing key. */
function serveRaw(): void {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  /** table -> routing key ('' for tables without one) -> sockets */
  const routes = new Map<string, Map<string, Set<WebSocket>>>();
  wss.on('connection', (ws, req) => {
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
    const table = query.get('table') ?? '';
    const key = query.get('key') ?? '';
    let byKey = routes.get(table);
    if (!byKey) routes.set(table, (byKey = new Map()));
    let sockets = byKey.get(key);
    if (!sockets) byKey.set(key, (sockets = new Set()));
    const mine = sockets;
    mine.add(ws);
    ws.on('close', () => mine.delete(ws));
    ws.on('error', () => {});
    ws.send('{"type":"hello"}');
  });
  client.on('notification', (msg) => {
    const payload = msg.payload ?? '';
    const { table, record } = JSON.parse(payload) as { table: string; record: Record<string, unknown> };
    const column = ROUTE_BY[table];
    const sockets = routes.get(table)?.get(column ? String(record[column]) : '');
    if (sockets) for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send(payload);
  });
  process.on('SIGTERM', () => {
    for (const ws of wss.clients) ws.terminate();
  });
  void client
    .connect()
    .then(() => client.query(`listen ${CHANNEL}`))
    .then(() => serveBaseline(server, { end: () => client.end() }));
}

/** The subscribers: every socket of both sides, each arrival stamped and kept; decoded when the driver takes them. */
function serveSubscribers(): void {
  const sockets: WebSocket[] = [];
  let arrivals: Arrival[] = [];
  /** Arrivals that are changes (every baseline frame; platform frames naming the event), for the driver's wait. */
  let changes = 0;
  let closed = 0;
  let cpu = process.cpuUsage();
  let cpuAt = performance.now();
  /** Sockets the driver asked to close (any other close loses deliveries). */
  const closing = new WeakSet<WebSocket>();

  /** Opens one socket; for the platform, joins and waits for the join's answer; for the baseline, waits for hello. */
  const open = (side: number, sub: number, url: string, join: string | undefined): Promise<void> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const shown = url.replace(/apikey=[^&]*/, 'apikey=...');
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`${shown}: upgrade answered ${res.statusCode}`)));
      ws.once('open', () => join && ws.send(join));
      const first = (data: WebSocket.RawData) => {
        const text = String(data);
        if (join) {
          const frame = JSON.parse(text) as unknown[];
          // Before the answer, nothing else comes on a fresh socket; anything else is a failure to report.
          if (frame[3] !== 'phx_reply' || frame[1] !== JOIN_REF) return reject(new Error(`${shown}: expected the join's reply, got ${text.slice(0, 300)}`));
          const status = (frame[4] as { status?: string }).status;
          if (status !== 'ok') return reject(new Error(`${shown}: join answered ${text.slice(0, 300)}`));
        } else if (!text.includes('"hello"')) {
          return reject(new Error(`${shown}: first frame is not hello: ${text.slice(0, 300)}`));
        }
        ws.off('error', reject);
        ws.on('error', () => {});
        ws.on('message', (d: Buffer) => {
          arrivals.push({ side, sub, t: wall(), data: d });
          if (!join || d.includes(CHANGE_EVENT)) changes++;
        });
        ws.once('close', () => closing.has(ws) || closed++);
        sockets.push(ws);
        resolve();
      };
      ws.once('message', first);
    });

  const handle = async (ask: Ask): Promise<unknown> => {
    switch (ask.op) {
      case 'open': {
        const side = SIDES.indexOf(ask.side);
        let next = 0;
        // A few at a time: each platform join verifies a JWT and reads the app's catalog.
        await Promise.all(
          Array.from({ length: 20 }, async () => {
            while (next < ask.sockets.length) {
              const sub = next++;
              await open(side, sub, ask.sockets[sub]!.url, ask.sockets[sub]!.join);
            }
          }),
        );
        return {};
      }
      case 'clock':
        return { now: wall() };
      case 'start':
        arrivals = [];
        changes = 0;
        cpu = process.cpuUsage();
        cpuAt = performance.now();
        return {};
      case 'count':
        return { count: changes };
      case 'take': {
        const used = process.cpuUsage(cpu);
        const taken: Taken = { deliveries: [], cpu: ((used.user + used.system) / 1000 / (performance.now() - cpuAt)) * 100, closed };
        if (ask.frames) taken.frames = [];
        changes = 0;
        for (const a of arrivals.splice(0)) {
          const text = String(a.data);
          taken.frames?.push({ side: a.side, sub: a.sub, text });
          // Platform: [join_ref, ref, topic, 'postgres_changes', {ids, data: {record}}]; baseline: {table, record}.
          const frame = JSON.parse(text) as [unknown, unknown, unknown, string, { data?: { record?: { seq?: number } } }] | { record?: { seq?: number } };
          const seq = Array.isArray(frame) ? (frame[3] === 'postgres_changes' ? frame[4].data?.record?.seq : undefined) : frame.record?.seq;
          if (typeof seq === 'number') taken.deliveries.push([a.side, a.sub, seq, a.t]);
        }
        return taken;
      }
      case 'close':
        await Promise.all(
          sockets.splice(0).map(
            (ws) =>
              new Promise<void>((resolve) => {
                closing.add(ws);
                if (ws.readyState === WebSocket.CLOSED) return resolve();
                ws.once('close', () => resolve());
                ws.close();
                setTimeout(() => (ws.terminate(), resolve()), 2000).unref();
              }),
          ),
        );
        arrivals = [];
        changes = 0;
        closed = 0;
        return {};
    }
  };
  process.on('message', (message: { id: number; ask: Ask }) => {
    handle(message.ask).then(
      (answer) => process.send!({ id: message.id, answer }),
      (err: unknown) => process.send!({ id: message.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  process.on('SIGTERM', () => process.exit(0));
  process.stdout.write('ready 0\n');
}

// ---------------------------------------------------------------------------------------------- settings

const LEVELS = (process.env.BENCH_REALTIME_SUBSCRIBERS || '10,100,500').split(',').map((s) => {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n <= 0) throw new Error(`BENCH_REALTIME_SUBSCRIBERS must be positive integers separated by commas, got '${s}'`);
  return n;
});
const RATE = envInt('BENCH_REALTIME_RATE', 6);
const WRITERS = envInt('BENCH_REALTIME_WRITERS', 16);
/** How long a round waits for its last deliveries after its last commit before it counts the rest as missing. */
const STRAGGLER_MS = 30_000;
/** The issue's goal: RLS-checked deliveries per second at GOAL_SUBSCRIBERS, with p95 under GOAL_P95_MS (Supabase's published figure). */
const GOAL_DELIVERIES = 3000;
const GOAL_SUBSCRIBERS = 500;
const GOAL_P95_MS = 228;

interface User {
  id: string;
  token: string;
}

/** One workload: a streamed table and who sees each of its changes. */
interface Workload {
  table: string;
  label: string;
  /** Whether the policy is evaluated per subscriber (the goal counts these deliveries). */
  rlsChecked: boolean;
  /** Changes committed per second for n subscribers: each subscriber receives RATE a second. */
  changesPerSecond(n: number): number;
  /** Whether subscriber j (of n) sees change `seq`. */
  sees(j: number, seq: number, n: number): boolean;
  /** Subscribers (of n) that see change `seq`. */
  audience(seq: number, n: number): number;
  /** The baseline's routing key of subscriber j ('' when every socket gets every change). */
  key(j: number, users: User[]): string;
  /** The insert's columns, and their values for change `seq`. */
  columns: string[];
  values(seq: number, n: number, users: User[]): unknown[];
}

const WORKLOADS: Workload[] = [
  {
    table: 'notes',
    label: 'notes (user: 1 sees each)',
    rlsChecked: true,
    changesPerSecond: (n) => RATE * n,
    sees: (j, seq, n) => j === seq % n,
    audience: () => 1,
    key: (j, users) => users[j]!.id,
    columns: ['user_id', 'seq', 'body'],
    values: (seq, n, users) => [users[seq % n]!.id, seq, BODY],
  },
  {
    table: 'team_notes',
    label: `team_notes (group: 1/${TEAMS} sees each)`,
    rlsChecked: true,
    changesPerSecond: () => RATE * TEAMS,
    sees: (j, seq) => j % TEAMS === seq % TEAMS,
    // Subscribers j < n with j % TEAMS = seq % TEAMS.
    audience: (seq, n) => (seq % TEAMS < n ? Math.floor((n - 1 - (seq % TEAMS)) / TEAMS) + 1 : 0),
    key: (j) => String(j % TEAMS),
    columns: ['team_id', 'seq', 'body'],
    values: (seq) => [seq % TEAMS, seq, BODY],
  },
  {
    table: 'posts',
    label: 'posts (public: all see each)',
    rlsChecked: false,
    changesPerSecond: () => RATE,
    sees: () => true,
    audience: (_seq, n) => n,
    key: () => '',
    columns: ['seq', 'body'],
    values: (seq) => [seq, BODY],
  },
];

const SCHEMA = {
  tables: {
    notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, seq: { type: 'bigint' }, body: { type: 'text' } },
      access: 'user',
      realtime: true,
    },
    team_members: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, team_id: { type: 'integer' } },
      indexes: { team_members_user: { columns: ['user_id'] } },
      access: 'service',
    },
    team_notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, team_id: { type: 'integer' }, seq: { type: 'bigint' }, body: { type: 'text' } },
      access: { members: 'team_members', column: 'team_id' },
      realtime: true,
    },
    posts: { columns: { id: { type: 'bigint', primary: true, identity: true }, seq: { type: 'bigint' }, body: { type: 'text' } }, access: 'public', realtime: true },
  },
};

/** The baseline's tables: the same columns, no security, a statement trigger NOTIFYing each row (as the capture's trigger writes each). */
const RAW_SQL = `
create schema ${RAW_SCHEMA};
create table ${RAW_SCHEMA}.notes (id bigint generated always as identity primary key, user_id uuid, seq bigint, body text);
create table ${RAW_SCHEMA}.team_notes (id bigint generated always as identity primary key, team_id integer, seq bigint, body text);
create table ${RAW_SCHEMA}.posts (id bigint generated always as identity primary key, seq bigint, body text);
create function ${RAW_SCHEMA}.notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('${CHANNEL}', json_build_object('table', tg_table_name, 'record', to_jsonb(n))::text) from new_rows n;
  return null;
end $$;
create trigger notify after insert on ${RAW_SCHEMA}.notes referencing new table as new_rows for each statement execute function ${RAW_SCHEMA}.notify();
create trigger notify after insert on ${RAW_SCHEMA}.team_notes referencing new table as new_rows for each statement execute function ${RAW_SCHEMA}.notify();
create trigger notify after insert on ${RAW_SCHEMA}.posts referencing new table as new_rows for each statement execute function ${RAW_SCHEMA}.notify();`;

// ---------------------------------------------------------------------------------------------- helpers

interface Reply {
  status: number;
  json: any;
}

async function call(url: string, authorization: string | undefined, method: string, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: { ...(authorization ? { Authorization: authorization } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok) throw new Error(`realtime pre-flight: ${what}${detail === undefined ? '' : `\n${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
}

/** The subscriber process, asked over IPC. */
class Subscribers {
  readonly #child: Child;
  readonly #waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  #next = 0;

  constructor(child: Child) {
    this.#child = child;
    child.proc.on('message', (m: { id: number; answer?: unknown; error?: string }) => {
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(`subscriber process: ${m.error}`));
      else w?.resolve(m.answer);
    });
    child.proc.once('exit', (code) => {
      for (const w of this.#waiting.values()) w.reject(new Error(`the subscriber process exited with ${code}:\n${child.output()}`));
      this.#waiting.clear();
    });
  }

  ask<T>(ask: Ask): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.proc.send({ id, ask });
    });
  }

  /**
   * Driver clock - subscriber clock, from the exchange with the shortest round trip (`rtt`, which bounds the error):
   * two Node processes' performance.timeOrigin differ by up to several ms on this machine.
   */
  async clockOffset(): Promise<{ offset: number; rtt: number }> {
    let best = { rtt: Infinity, offset: 0 };
    for (let i = 0; i < 50; i++) {
      const t0 = wall();
      const { now } = await this.ask<{ now: number }>({ op: 'clock' });
      const t1 = wall();
      if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: (t0 + t1) / 2 - now };
    }
    return best;
  }
}

/** What the writer did in one round. */
interface Written {
  /** seq -> commit time (driver wall clock). */
  commits: Map<number, number>;
  start: number;
  /** The last commit's time. */
  end: number;
  /** How late transactions started against their schedule, p99 (ms): the writer keeping up or not. */
  lateP99: number;
  txP50: number;
  /** The driver's CPU over the writing, % of one core. */
  cpu: number;
}

/** The writer: WRITERS connections to the app database, one insert per transaction on a shared schedule. */
class Writer {
  readonly #clients: pg.Client[];
  #seq = 1;

  constructor(clients: pg.Client[]) {
    this.#clients = clients;
  }

  nextSeq(): number {
    return this.#seq++;
  }

  async insert(side: Side, w: Workload, seq: number, n: number, users: User[]): Promise<void> {
    await this.#clients[0]!.query(insertSql(side, w), w.values(seq, n, users));
  }

  /** Changes at w.changesPerSecond(n) for `seconds`, each due at its time and sent on a free connection. */
  async run(side: Side, w: Workload, n: number, users: User[], seconds: number): Promise<Written> {
    const sql = insertSql(side, w);
    const interval = 1000 / w.changesPerSecond(n);
    const total = Math.floor((seconds * 1000) / interval);
    const first = this.#seq;
    this.#seq += total;
    const commits = new Map<number, number>();
    const late: number[] = [];
    const tx: number[] = [];
    const cpu = process.cpuUsage();
    const start = wall();
    let k = 0;
    await Promise.all(
      this.#clients.map(async (client) => {
        while (k < total) {
          const i = k++;
          const due = start + i * interval;
          const wait = due - wall();
          if (wait > 0) await sleep(wait);
          const t0 = wall();
          await client.query(sql, w.values(first + i, n, users));
          const t = wall();
          commits.set(first + i, t);
          late.push(t0 - due);
          tx.push(t - t0);
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    return { commits, start, end: Math.max(start, ...commits.values()), lateP99: percentile(late, 0.99), txP50: median(tx), cpu: ((used.user + used.system) / 1000 / (wall() - start)) * 100 };
  }
}

const insertSql = (side: Side, w: Workload) =>
  `insert into ${side === 'platform' ? 'public' : RAW_SCHEMA}.${w.table} (${w.columns.join(', ')}) values (${w.columns.map((_, i) => `$${i + 1}`).join(', ')})`;

// ---------------------------------------------------------------------------------------------- one round

interface RoundFigures {
  changes: number;
  /** Changes committed per second: over the round's writing, or until its last commit when the writer fell behind. */
  committedPerSecond: number;
  /** Deliveries the round's changes owe (each change's audience), per second of writing. */
  offeredPerSecond: number;
  /** Distinct right deliveries per second: over the round's writing, or from its first commit to its last delivery when that is longer. */
  deliveredPerSecond: number;
  delivered: number;
  missing: number;
  duplicates: number;
  /** Deliveries to a subscriber that may not see the change (a leak through row-level security). */
  wrong: number;
  /** Frames of an earlier round (its missing ones arriving late) or of the other side. */
  stray: number;
  closed: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** p50 latency of the changes committed in the round's first second and in its last: a side falling ever further behind shows here. */
  p50FirstSecond: number;
  p50LastSecond: number;
  writerLateP99: number;
  writerTxP50: number;
  /** % of one core over the round: the server under test (platform or raw listener), all PostgreSQL processes, the subscriber process, the writer (the driver). */
  cpu: { server: number; postgres: number; subscribers: number; writer: number };
}

interface Setup {
  ctx: BenchContext;
  users: User[];
  subscribers: Subscribers;
  writer: Writer;
  rawPid: number;
}

async function round(s: Setup, side: Side, w: Workload, n: number, seconds: number, offset: number): Promise<RoundFigures> {
  const serverPid = side === 'platform' ? s.ctx.platformPid : s.rawPid;
  await s.subscribers.ask({ op: 'start' });
  const pgPids = postgresPids();
  const cpu0 = { server: cpuSeconds([serverPid]), postgres: cpuSeconds(pgPids) };
  const written = await s.writer.run(side, w, n, s.users, seconds);
  let expected = 0;
  for (const seq of written.commits.keys()) expected += w.audience(seq, n);
  const until = wall() + STRAGGLER_MS;
  while ((await s.subscribers.ask<{ count: number }>({ op: 'count' })).count < expected && wall() < until) await sleep(20);
  const ms = wall() - written.start;
  const cpu = {
    server: cpuPercent(cpu0.server, cpuSeconds([serverPid]), ms),
    postgres: cpuPercent(cpu0.postgres, cpuSeconds([...new Set([...pgPids, ...postgresPids()])]), ms),
  };
  const taken = await s.subscribers.ask<Taken>({ op: 'take' });
  const sideIndex = SIDES.indexOf(side);
  const seen = new Set<number>();
  const latencies: number[] = [];
  const firstSecond: number[] = [];
  const lastSecond: number[] = [];
  let duplicates = 0;
  let wrong = 0;
  let stray = 0;
  let last = written.start;
  for (const [from, sub, seq, t] of taken.deliveries) {
    const committed = written.commits.get(seq);
    if (from !== sideIndex || committed === undefined) {
      stray++;
      continue;
    }
    if (!w.sees(sub, seq, n)) {
      wrong++;
      continue;
    }
    const key = seq * 1024 + sub;
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    const at = t + offset;
    latencies.push(at - committed);
    if (committed - written.start < 1000) firstSecond.push(at - committed);
    if (committed - written.start >= seconds * 1000 - 1000) lastSecond.push(at - committed);
    last = Math.max(last, at);
  }
  latencies.sort((a, b) => a - b);
  return {
    changes: written.commits.size,
    committedPerSecond: written.commits.size / (Math.max(seconds * 1000, written.end - written.start) / 1000),
    offeredPerSecond: expected / seconds,
    // Over the round's writing, or until its last delivery when that came later (a side falling behind).
    deliveredPerSecond: seen.size / (Math.max(seconds * 1000, last - written.start) / 1000),
    delivered: seen.size,
    missing: expected - seen.size,
    duplicates,
    wrong,
    stray,
    closed: taken.closed,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? NaN,
    p50FirstSecond: median(firstSecond),
    p50LastSecond: median(lastSecond),
    writerLateP99: written.lateP99,
    writerTxP50: written.txP50,
    cpu: { ...cpu, subscribers: taken.cpu, writer: written.cpu },
  };
}

// ---------------------------------------------------------------------------------------------- one block

interface Block {
  table: string;
  label: string;
  rlsChecked: boolean;
  subscribers: number;
  changesPerSecond: number;
  clock: { offset: number; rtt: number };
  platform: RoundFigures[];
  raw: RoundFigures[];
}

/** One change on one side; every subscriber that should have it gets exactly one frame with the row, no one else any. */
async function preflight(s: Setup, side: Side, w: Workload, n: number): Promise<void> {
  await s.subscribers.ask({ op: 'start' });
  const seq = s.writer.nextSeq();
  await s.writer.insert(side, w, seq, n, s.users);
  const expected = w.audience(seq, n);
  const until = wall() + 10_000;
  while ((await s.subscribers.ask<{ count: number }>({ op: 'count' })).count < expected && wall() < until) await sleep(20);
  const taken = await s.subscribers.ask<Taken>({ op: 'take', frames: true });
  const what = `${side}, ${w.table}, ${n} subscribers`;
  const frames = taken.frames!.filter((f) => !(side === 'platform' && (JSON.parse(f.text) as unknown[])[3] === 'system'));
  check(frames.length === expected, `${what}: ${frames.length} frames for one change that ${expected} subscriber(s) may see`, frames.slice(0, 3));
  for (const f of frames) {
    check(SIDES[f.side] === side && w.sees(f.sub, seq, n), `${what}: subscriber ${f.sub} of ${SIDES[f.side]} got change ${seq}, which it may not see`, f.text);
    if (side === 'platform') {
      const [joinRef, ref, topic, event, payload] = JSON.parse(f.text) as [unknown, unknown, unknown, unknown, any];
      const ok = joinRef === JOIN_REF && ref === null && topic === TOPIC && event === 'postgres_changes' && Array.isArray(payload.ids) && payload.ids.length === 1;
      const data = payload?.data;
      check(ok && data?.schema === 'public' && data.table === w.table && data.type === 'INSERT' && data.record?.seq === seq && data.record.body === BODY && data.errors === null, `${what}: unexpected frame`, f.text);
    } else {
      const frame = JSON.parse(f.text) as { table?: string; record?: { seq?: number; body?: string } };
      check(frame.table === w.table && frame.record?.seq === seq && frame.record.body === BODY, `${what}: unexpected frame`, f.text);
    }
  }
}

async function block(s: Setup, w: Workload, n: number, urls: { platform: string; raw: string }): Promise<Block> {
  const users = s.users.slice(0, n);
  const t0 = performance.now();
  const join = (token: string) => JSON.stringify([JOIN_REF, JOIN_REF, TOPIC, 'phx_join', { config: { postgres_changes: [{ event: '*', schema: 'public', table: w.table }] }, access_token: token }]);
  await s.subscribers.ask({ op: 'open', side: 'platform', sockets: users.map((u) => ({ url: urls.platform, join: join(u.token) })) });
  await s.subscribers.ask({ op: 'open', side: 'raw', sockets: users.map((_u, j) => ({ url: `${urls.raw}/?table=${w.table}&key=${encodeURIComponent(w.key(j, s.users))}` })) });
  const clock = await s.subscribers.clockOffset();
  const { offset } = clock;
  process.stderr.write(
    `realtime: ${w.table}, ${n} subscribers: ${n} + ${n} sockets joined in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${w.changesPerSecond(n)} changes/s; ` +
      `clock offset ${offset.toFixed(3)} ms (round trip ${clock.rtt.toFixed(3)} ms)\n`,
  );
  try {
    for (const side of SIDES) await preflight(s, side, w, n);
    for (const side of SIDES) await round(s, side, w, n, WARMUP, offset);
    const out: Block = { table: w.table, label: w.label, rlsChecked: w.rlsChecked, subscribers: n, changesPerSecond: w.changesPerSecond(n), clock, platform: [], raw: [] };
    for (let r = 1; r <= ROUNDS; r++) {
      for (const side of SIDES) out[side].push(await round(s, side, w, n, DURATION, offset));
      const [p, b] = [out.platform.at(-1)!, out.raw.at(-1)!];
      process.stderr.write(
        `realtime: ${w.table}, ${n}: round ${r}/${ROUNDS}: ` +
          [p, b].map((x, i) => `${SIDES[i]} ${x.committedPerSecond.toFixed(0)} commits/s, ${x.deliveredPerSecond.toFixed(0)} deliveries/s, p95 ${x.p95.toFixed(1)} ms (p50 ${x.p50FirstSecond.toFixed(1)} -> ${x.p50LastSecond.toFixed(1)}; missing ${x.missing}, wrong ${x.wrong}; cpu ${x.cpu.server.toFixed(0)}%, pg ${x.cpu.postgres.toFixed(0)}%)`).join('; ') +
          '\n',
      );
    }
    return out;
  } finally {
    await s.subscribers.ask({ op: 'close' });
  }
}

// ---------------------------------------------------------------------------------------------- the scenario

async function signup(platformUrl: string, appId: string, i: number): Promise<User> {
  const r = await call(`${platformUrl}/v1/${appId}/auth/signup`, undefined, 'POST', { email: `rt${i}@bench.example`, password: 'bench-password-1234' });
  check(r.status === 201 && typeof r.json?.access_token === 'string' && typeof r.json?.user?.id === 'string', `signup ${i} answered ${r.status}`, r.json);
  return { id: r.json.user.id as string, token: r.json.access_token as string };
}

/** An app with the three streamed tables and max(LEVELS) end users; each workload at each level, platform against raw. */
export async function realtimeScenario(ctx: BenchContext): Promise<Pair[]> {
  const made = await call(`${ctx.platformUrl}/init`, ctx.authorization, 'POST', { name: 'Bench Realtime' });
  check(made.status === 201 && typeof made.json?.app_id === 'string', `POST /init answered ${made.status}`, made.json);
  const appId = made.json.app_id as string;
  const publishable = made.json.publishable_key as string;
  const applied = await call(`${ctx.platformUrl}/v1/${appId}/schema/apply`, `Bearer ${made.json.service_key.key as string}`, 'POST', { schema: SCHEMA });
  check(applied.status === 200, `schema apply answered ${applied.status}`, applied.json);

  const most = Math.max(...LEVELS);
  const t0 = performance.now();
  const users: User[] = new Array(most);
  let next = 0;
  // Argon2 hashing makes a signup tens of ms of the platform's CPU: two at a time, one per core.
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < most) {
        const i = next++;
        users[i] = await signup(ctx.platformUrl, appId, i);
      }
    }),
  );
  process.stderr.write(`realtime: ${most} end users signed up in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

  const appDatabaseUrl = `${CLUSTER_URL}/${ctx.appPrefix}${appId}`;
  const admin = new pg.Client({ connectionString: appDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`insert into public.team_members (user_id, team_id) select u, (n - 1) % ${TEAMS} from unnest($1::uuid[]) with ordinality as m(u, n)`, [users.map((u) => u.id)]);
    await admin.query(RAW_SQL);
  } finally {
    await admin.end();
  }

  const raw = await startBaseline('bench/realtime.ts', { ROLE: 'ws', DATABASE_URL: appDatabaseUrl });
  ctx.cleanups.push(raw.child.stop);
  const child = startChild('bench/realtime.ts', { ROLE: 'subscribers' }, [], true);
  ctx.cleanups.push(child.stop);
  await waitFor('the subscriber process', child, async () => (/^ready/m.test(child.output()) ? true : undefined));
  const clients = Array.from({ length: WRITERS }, () => new pg.Client({ connectionString: appDatabaseUrl }));
  // A change is visible to readers once COMMIT returns, flushed or not; with the flush, the baseline's NOTIFY (which
  // holds a global lock across its commit's WAL flush) caps its writes below the 3,000 changes/s of notes at 500.
  await Promise.all(clients.map((c) => c.connect().then(() => c.query('set synchronous_commit = off'))));
  const setup: Setup = { ctx, users, subscribers: new Subscribers(child), writer: new Writer(clients), rawPid: raw.child.proc.pid! };
  const urls = { platform: `${ctx.platformUrl.replace(/^http/, 'ws')}/v1/${appId}/realtime/v1/websocket?apikey=${encodeURIComponent(publishable)}&vsn=2.0.0`, raw: raw.url.replace(/^http/, 'ws') };
  const blocks: Block[] = [];
  try {
    for (const w of WORKLOADS) for (const n of LEVELS) blocks.push(await block(setup, w, n, urls));
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
  report(blocks);
  return [];
}

// ---------------------------------------------------------------------------------------------- the table

function report(blocks: Block[]): void {
  const m = (rs: RoundFigures[], f: (r: RoundFigures) => number) => median(rs.map(f));
  const sum = (rs: RoundFigures[], f: (r: RoundFigures) => number) => rs.reduce((n, r) => n + f(r), 0);
  const ms = (x: number) => x.toFixed(1);
  const pct = (x: number) => `${x.toFixed(0)}%`;
  const x = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a');
  // run.ts leaves SVC_REALTIME_POLL_MS unset: the platform polls at its default.
  const pollMs = loadConfig({}).realtime.pollMs;
  console.log('');
  console.log(
    `realtime postgres_changes, commit -> delivery on each subscriber (each a signed-up end user), ${RATE} changes/s per subscriber, ` +
      `median of ${ROUNDS} rounds of ${DURATION}s; the platform polls every ${pollMs} ms (SVC_REALTIME_POLL_MS), the raw side LISTENs:`,
  );
  const head = ['workload', 'subs', 'server', 'committed/s', 'offered/s', 'delivered/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'p50 1st/last s', 'missing', 'dup', 'wrong', 'cpu server', 'cpu pg', 'cpu subs', 'cpu writer', 'delivered/s per run'];
  const rows: string[][] = [];
  for (const b of blocks) {
    for (const side of SIDES) {
      const rs = b[side];
      rows.push([
        b.label,
        String(b.subscribers),
        side === 'platform' ? 'platform' : 'raw LISTEN -> ws',
        m(rs, (r) => r.committedPerSecond).toFixed(0) + (rs.some((r) => r.committedPerSecond < 0.95 * b.changesPerSecond) ? '!' : ''),
        m(rs, (r) => r.offeredPerSecond).toFixed(0),
        m(rs, (r) => r.deliveredPerSecond).toFixed(0),
        ms(m(rs, (r) => r.p50)),
        ms(m(rs, (r) => r.p95)),
        ms(m(rs, (r) => r.p99)),
        ms(m(rs, (r) => r.max)),
        `${ms(m(rs, (r) => r.p50FirstSecond))} / ${ms(m(rs, (r) => r.p50LastSecond))}`,
        String(sum(rs, (r) => r.missing)),
        String(sum(rs, (r) => r.duplicates)),
        String(sum(rs, (r) => r.wrong)),
        pct(m(rs, (r) => r.cpu.server)),
        pct(m(rs, (r) => r.cpu.postgres)),
        pct(m(rs, (r) => r.cpu.subscribers)) + (rs.some((r) => r.cpu.subscribers >= SATURATED_CPU) ? '!' : ''),
        pct(m(rs, (r) => r.cpu.writer)) + (rs.some((r) => r.cpu.writer >= SATURATED_CPU) ? '!' : ''),
        rs.map((r) => r.deliveredPerSecond.toFixed(0)).join(' / '),
      ]);
    }
    const [p, r] = [b.platform, b.raw];
    const f = (g: (r: RoundFigures) => number) => x(m(p, g), m(r, g));
    rows.push([b.label, String(b.subscribers), 'ratio platform/raw', '', '', f((r) => r.deliveredPerSecond), f((r) => r.p50), f((r) => r.p95), f((r) => r.p99), '', '', '', '', '', '', '', '', '', '']);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => '  ' + cells.map((c, i) => (i <= 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  console.log(
    `  (committed/s: the writer's changes per second (each workload asks as many as give every subscriber ${RATE} a second; ! = below 95 % of that in some round: the writer fell behind); ` +
      `offered/s: the deliveries the round's changes owe, per second of writing; delivered/s: distinct right deliveries per second of writing, or of the time from ` +
      `the first commit to the last delivery when that is longer; p50 1st/last s: p50 of the changes committed in the round's first ` +
      `second and in its last (a side falling ever further behind grows); wrong: deliveries to a subscriber the policy does not admit; cpu: % of one core over the round: the server under test, every ` +
      `PostgreSQL process (the writer's inserts included), the subscriber process, the writer; ! = ${SATURATED_CPU}% or more in some round)`,
  );
  const goal = blocks.filter((b) => b.rlsChecked && b.subscribers === GOAL_SUBSCRIBERS);
  for (const b of goal) {
    const delivered = m(b.platform, (r) => r.deliveredPerSecond);
    const p95 = m(b.platform, (r) => r.p95);
    const met = delivered >= GOAL_DELIVERIES && p95 < GOAL_P95_MS;
    console.log(
      `  goal (issue 42: >= ${GOAL_DELIVERIES} RLS-checked deliveries/s at ${GOAL_SUBSCRIBERS} subscribers, p95 < ${GOAL_P95_MS} ms): ${b.label}: ` +
        `${delivered.toFixed(0)} deliveries/s (of ${m(b.platform, (r) => r.offeredPerSecond).toFixed(0)} offered), p95 ${ms(p95)} ms: ${met ? 'met' : 'NOT met'}`,
    );
  }
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(import.meta.dirname, 'results', 'realtime.json'),
    JSON.stringify({ date: new Date().toISOString(), rate_per_subscriber: RATE, levels: LEVELS, writers: WRITERS, poll_ms: pollMs, rounds: ROUNDS, duration_s: DURATION, warmup_s: WARMUP, blocks }, null, 2) + '\n',
  );
  const bad = blocks.flatMap((b) => [...b.platform, ...b.raw]).some((r) => r.missing + r.duplicates + r.wrong + r.closed > 0);
  if (bad) {
    console.error('realtime: missing, duplicated or wrong deliveries, or sockets dropped: the figures are not trustworthy');
    process.exitCode = 1;
  }
}
