// Scenario `ai`: the AI gateway (POST /v1/{app_id}/chat/completions, relayed through the openai SDK) against a fake
// OpenAI-compatible upstream (test/fakes/openai-upstream.ts) in its own process: called straight, and through a bare
// relay (this file with ROLE=relay: node:http that forwards the same request to the same upstream and pipes the answer
// back, nothing else), the physical minimum of any gateway. See bench/README.md.
//
// Three figures: the latency the gateway adds to the upstream call at one request in flight (non-streaming: the whole
// answer; streaming: the time to the first byte of the body), timed here with performance.now(), with what the bare
// relay adds for scale; and throughput at BENCH_CONNECTIONS connections against the bare relay (the harness's
// autocannon pair). Beside both, a recording relay (ROLE=relay with RECORD_URL): the bare relay writing one row per
// call to Postgres before it answers, the least of the work a gateway that bills every answered call must do.
//
// Run as its own entry point (`node bench/ai.ts`), this file IS that upstream process: it starts the fake with
// `record: false` and prints `ready <port>`, as the other baselines do; with ROLE=relay, UPSTREAM_URL and
// UPSTREAM_KEY, the bare relay (and with RECORD_URL, the recording relay).
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { startFakeOpenAI } from '../test/fakes/openai-upstream.ts';
import { DURATION, ROUNDS, WARMUP, requiredEnv, serveBaseline, startBaseline, type BenchContext, type Pair, type Target, median, percentile } from './harness.ts';

/** How long a baseline keeps an idle keep-alive socket to the fake: less than its server's keepAliveTimeout (5 s). */
export const UPSTREAM_IDLE_MS = 4_000;
/** The fake's base path (OpenRouter's /api/v1). */
const BASE_PATH = '/api/v1';
/** The recording relay's table, made in the control database for the run (see CallRecorder). */
const RECORD_TABLE = 'bench_relay_calls';
/** What the platform sends upstream as SVC_AI_API_KEY, and the direct calls send too. */
const UPSTREAM_KEY = 'sk-bench-upstream-key';
/**
 * The account's plan during the run. `pro` (default) with a bench grant of $1,000,000: every call is charged its worst
 * case before the upstream call and corrected after, which is what a paying account costs. `enterprise`: unlimited
 * credits, charged the same way but never capped by the balance.
 */
const PLAN = process.env.BENCH_AI_PLAN || 'pro';
const BENCH_GRANT_NANOS = 1_000_000 * 1_000_000_000;

const MODEL = 'openai/gpt-4o-mini';
const PROMPT = 'Say hello to the benchmark in a few short words please';
/** A typical small request: a system prompt and one user message, no max_tokens (the app has no cap). */
const REQUEST = { model: MODEL, messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: PROMPT }] };
const CHAT_BODY = JSON.stringify(REQUEST);
const STREAM_BODY = JSON.stringify({ ...REQUEST, stream: true });
/** The fake echoes the last user message: this is the whole answer's content. */
const CONTENT = `echo: ${PROMPT}`;

// ---------------------------------------------------------------------------------------------- the upstream process

if (import.meta.main && process.env.ROLE !== 'relay') {
  const fake = await startFakeOpenAI({ record: false });
  process.stdout.write(`ready ${new URL(fake.url).port}\n`);
  process.once('SIGTERM', () => void fake.close().then(() => process.exit(0)));
}

/**
 * The recording relay's one row per call (RECORD_URL: a database with RECORD_TABLE), written beside the upstream call
 * and awaited before the answer, as the gateway's advance is: the rows that arrive while an insert is in flight go in
 * the next one, committed without waiting for the WAL flush. The least a gateway that bills every answered call can
 * write.
 */
class CallRecorder {
  readonly #client: pg.Client;
  readonly #connected: Promise<void>;
  #next: { bytes: number[]; waiters: { resolve(): void; reject(err: unknown): void }[] } | undefined;
  #running = false;

  constructor(url: string) {
    this.#client = new pg.Client({ connectionString: url, options: '-c synchronous_commit=off' });
    this.#connected = this.#client.connect().then(() => undefined);
  }

  record(bytes: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#next ??= { bytes: [], waiters: [] };
      this.#next.bytes.push(bytes);
      this.#next.waiters.push({ resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#next) {
      const batch = this.#next;
      this.#next = undefined;
      try {
        await this.#connected;
        await this.#client.query(`insert into ${RECORD_TABLE} (bytes) select unnest($1::int[])`, [batch.bytes]);
        for (const waiter of batch.waiters) waiter.resolve();
      } catch (err) {
        for (const waiter of batch.waiters) waiter.reject(err);
      }
    }
    this.#running = false;
  }

  end(): Promise<void> {
    return this.#client.end();
  }
}

// ---------------------------------------------------------------------------------------------- the bare relay process

/**
 * What any relay must do and nothing more: per request, one upstream request on a keep-alive connection with the same
 * path (under the upstream's base path), the same body streamed through and the provider's key in place of the
 * caller's, then the upstream's status, content type and body streamed back. No authentication, no parsing, no
 * accounting: all of that is what the gateway adds.
 */
if (import.meta.main && process.env.ROLE === 'relay') {
  const upstream = new URL(requiredEnv('UPSTREAM_URL'));
  const key = `Bearer ${requiredEnv('UPSTREAM_KEY')}`;
  // Idle sockets are dropped after 4 s, before the upstream's server closes them (Node's keepAliveTimeout, 5 s): a
  // request sent on a socket the other side is closing fails, and the relay sits idle during the gateway's rounds.
  const agent = new http.Agent({ keepAlive: true, timeout: UPSTREAM_IDLE_MS });
  const recorder = process.env.RECORD_URL ? new CallRecorder(process.env.RECORD_URL) : undefined;
  const server = http.createServer((req, res) => {
    const headers: http.OutgoingHttpHeaders = { authorization: key, 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers['content-length'] !== undefined) headers['content-length'] = req.headers['content-length'];
    const recorded = recorder?.record(Number(req.headers['content-length'] ?? 0));
    // Handled now (a failure before the answer is there is not an unhandled rejection); the answer waits for it.
    recorded?.catch(() => undefined);
    const out = http.request({ host: upstream.hostname, port: upstream.port, path: upstream.pathname + (req.url ?? '/'), method: req.method, agent, headers }, (answer) => {
      const back: http.OutgoingHttpHeaders = { 'content-type': answer.headers['content-type'] ?? 'application/json' };
      if (answer.headers['content-length'] !== undefined) back['content-length'] = answer.headers['content-length'];
      const send = () => {
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      };
      if (!recorded) return send();
      recorded.then(send, () => {
        answer.resume();
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"recording the call failed"}');
      });
    });
    out.once('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end('{"error":"upstream failed"}');
    });
    req.pipe(out);
  });
  serveBaseline(server, { end: async () => (agent.destroy(), await recorder?.end()) });
}


let upstreamUrl: string | undefined;

/**
 * Starts the fake upstream (this file, as its own process) before the platform, which must know its URL when it
 * starts; returns the platform's AI environment. run.ts calls it when the scenario is selected.
 */
export async function aiUpstream(cleanups: Array<() => Promise<void>>): Promise<Record<string, string>> {
  const { child, url } = await startBaseline(path.join('bench', 'ai.ts'), {});
  cleanups.push(child.stop);
  upstreamUrl = `${url}${BASE_PATH}`;
  return { SVC_AI_BASE_URL: upstreamUrl, SVC_AI_API_KEY: UPSTREAM_KEY };
}

// ---------------------------------------------------------------------------------------------- timing one request

interface Timed {
  status: number;
  /** ms to the first byte of the body. */
  ttfb: number;
  /** ms to the end of the body. */
  total: number;
  text: string;
}

interface Endpoint {
  url: URL;
  authorization: string;
  /** Its own keep-alive socket: one request in flight, the connection reused as any SDK client reuses it. */
  agent: http.Agent;
}

function endpoint(url: string, authorization: string): Endpoint {
  return { url: new URL(url), authorization, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
}

function post(to: Endpoint, body: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ttfb = 0;
    const chunks: Buffer[] = [];
    const req = http.request(
      {
        host: to.url.hostname,
        port: to.url.port,
        path: to.url.pathname,
        method: 'POST',
        agent: to.agent,
        headers: { authorization: to.authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.on('data', (d: Buffer) => {
          if (chunks.length === 0) ttfb = performance.now() - t0;
          chunks.push(d);
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, ttfb, total: performance.now() - t0, text: Buffer.concat(chunks).toString() }));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** The assistant content of an answer (JSON, or the concatenated deltas of an event stream ending with [DONE]). */
function contentOf(text: string, stream: boolean): string | undefined {
  try {
    if (!stream) return (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
    const data = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    if (data.at(-1) !== '[DONE]') return undefined;
    return data
      .slice(0, -1)
      .map((d) => (JSON.parse(d) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? '')
      .join('');
  } catch {
    return undefined;
  }
}

interface Samples {
  gateway: number[];
  relay: number[];
  recording: number[];
  direct: number[];
  failed: number;
}

/** What the latency rounds call, in turn. */
type Sides = Record<'gateway' | 'relay' | 'recording' | 'direct', Endpoint>;

/**
 * One request in flight for `seconds`: gateway, bare relay, recording relay, direct, gateway, ... so drift hits all alike. `pick` is
 * the figure kept (the whole answer, or the first byte of a stream); a failure is anything but 200 with the content.
 */
async function alternate(sides: Sides, body: string, stream: boolean, seconds: number, pick: (t: Timed) => number): Promise<Samples> {
  const out: Samples = { gateway: [], relay: [], recording: [], direct: [], failed: 0 };
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    for (const [to, into] of [[sides.gateway, out.gateway], [sides.relay, out.relay], [sides.recording, out.recording], [sides.direct, out.direct]] as const) {
      const t = await post(to, body).catch(() => undefined);
      if (t && t.status === 200 && contentOf(t.text, stream) === CONTENT) into.push(pick(t));
      else out.failed++;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- the scenario

async function control<T extends pg.QueryResultRow>(ctx: BenchContext, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The app's usage rows that hold what their call used: written at the worst case, corrected after the answer. */
async function usageRows(ctx: BenchContext, appId: string): Promise<number> {
  return Number((await control<{ n: string }>(ctx, 'select count(*)::text as n from ai_usage where app_id = $1 and settle_by is null', [appId]))[0]!.n);
}

/** Usage rows are corrected just after the answer went out (a stream's when it ends). */
async function waitForUsageRows(ctx: BenchContext, appId: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  let n = await usageRows(ctx, appId);
  while (n < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    n = await usageRows(ctx, appId);
  }
  return n;
}

/** Waits until no usage row of the app holds its worst case: every call so far corrected. */
async function waitForCorrections(ctx: BenchContext, appId: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  const pending = async () =>
    Number((await control<{ n: string }>(ctx, 'select count(*)::text as n from ai_usage where app_id = $1 and settle_by is not null', [appId]))[0]!.n);
  while ((await pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

export async function aiScenario(ctx: BenchContext): Promise<Pair[]> {
  if (!upstreamUrl) throw new Error('ai: the fake upstream was not started before the platform (run.ts calls aiUpstream)');
  if (PLAN !== 'pro' && PLAN !== 'enterprise') throw new Error(`BENCH_AI_PLAN must be 'pro' or 'enterprise', got '${PLAN}'`);
  const init = await fetch(`${ctx.platformUrl}/init`, { method: 'POST', headers: { Authorization: ctx.authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Bench AI' }) });
  const app = (await init.json()) as { app_id?: string; service_key?: { key?: string } };
  if (init.status !== 201 || !app.app_id || !app.service_key?.key) throw new Error(`POST /init answered ${init.status}: ${JSON.stringify(app)}`);
  const appId = app.app_id;
  const serviceKey = app.service_key.key;

  // Before the first AI call (the ledger caches an account's plan for 30 s).
  const [account] = await control<{ account_id: string }>(ctx, 'select account_id from apps where id = $1', [appId]);
  await control(ctx, 'update accounts set plan = $2 where id = $1', [account!.account_id, PLAN]);
  if (PLAN === 'pro') {
    await control(
      ctx,
      `with granted as (
         insert into credit_ledger (account_id, kind, amount_nanos, source, grant_key) values ($1, 'grant', $2, 'bench', 'bench:grant')
         returning account_id, amount_nanos)
       insert into credit_balances (account_id, balance_nanos) select account_id, amount_nanos from granted
       on conflict (account_id) do update set balance_nanos = credit_balances.balance_nanos + excluded.balance_nanos`,
      [account!.account_id, BENCH_GRANT_NANOS],
    );
  }

  // The bare relay in front of the same upstream: the throughput baseline, and the latency a relay cannot avoid.
  const relayProcess = await startBaseline(path.join('bench', 'ai.ts'), { ROLE: 'relay', UPSTREAM_URL: upstreamUrl, UPSTREAM_KEY });
  ctx.cleanups.push(relayProcess.child.stop);
  // The same relay writing one row per call before its answer: the least of the gateway's own work (see CallRecorder).
  await control(ctx, `create table ${RECORD_TABLE} (id bigserial primary key, at timestamptz not null default now(), bytes int not null)`);
  ctx.cleanups.push(() => control(ctx, `drop table if exists ${RECORD_TABLE}`).then(() => undefined));
  const recordingProcess = await startBaseline(path.join('bench', 'ai.ts'), { ROLE: 'relay', UPSTREAM_URL: upstreamUrl, UPSTREAM_KEY, RECORD_URL: ctx.controlDatabaseUrl });
  ctx.cleanups.push(recordingProcess.child.stop);

  const gatewayUrl = `${ctx.platformUrl}/v1/${appId}/chat/completions`;
  const relayUrl = `${relayProcess.url}/chat/completions`;
  const recordingUrl = `${recordingProcess.url}/chat/completions`;
  const directUrl = `${upstreamUrl}/chat/completions`;
  const sides: Sides = {
    gateway: endpoint(gatewayUrl, `Bearer ${serviceKey}`),
    relay: endpoint(relayUrl, `Bearer ${serviceKey}`),
    recording: endpoint(recordingUrl, `Bearer ${serviceKey}`),
    direct: endpoint(directUrl, `Bearer ${UPSTREAM_KEY}`),
  };

  // Pre-flight: all answer the same completion (ids and timestamps aside) and the same stream content.
  for (const stream of [false, true]) {
    const body = stream ? STREAM_BODY : CHAT_BODY;
    const answers = Object.fromEntries(await Promise.all(Object.entries(sides).map(async ([name, to]) => [name, await post(to, body)] as const)));
    for (const [name, t] of Object.entries(answers)) {
      if (t.status !== 200 || contentOf(t.text, stream) !== CONTENT) throw new Error(`ai pre-flight: ${name} ${stream ? 'stream' : 'chat'} answered ${t.status}: ${t.text}`);
      const strip = (text: string) => ({ ...(JSON.parse(text) as object), id: undefined, created: undefined });
      if (!stream && !isDeepStrictEqual(strip(t.text), strip(answers.direct!.text))) {
        throw new Error(`ai pre-flight: the ${name}'s answer differs from the upstream's:\n${t.text}\n${answers.direct!.text}`);
      }
    }
  }
  const recordedRows = Number((await control<{ n: string }>(ctx, `select count(*)::text as n from ${RECORD_TABLE}`))[0]!.n);
  if (recordedRows !== 2) throw new Error(`ai pre-flight: the recording relay wrote ${recordedRows} rows for 2 calls`);

  // Latency at one request in flight: a warm-up, then ROUNDS rounds of DURATION s non-streaming and DURATION s
  // streaming, each alternating gateway, relay, recording relay and direct requests.
  process.stderr.write(`ai latency: warm-up ${WARMUP}s\n`);
  await alternate(sides, CHAT_BODY, false, WARMUP, (t) => t.total);
  await alternate(sides, STREAM_BODY, true, WARMUP, (t) => t.ttfb);
  // The warm-up's last calls are corrected a moment after their answers: counted before the rounds, not in them.
  await waitForCorrections(ctx, appId);
  const rowsBefore = await usageRows(ctx, appId);
  const chat: Samples[] = [];
  const ttfb: Samples[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    chat.push(await alternate(sides, CHAT_BODY, false, DURATION, (t) => t.total));
    ttfb.push(await alternate(sides, STREAM_BODY, true, DURATION, (t) => t.ttfb));
    const p50 = (xs: number[]) => percentile(xs, 0.5).toFixed(2);
    const [c, s] = [chat.at(-1)!, ttfb.at(-1)!];
    process.stderr.write(
      `ai latency: round ${round}/${ROUNDS}: chat p50 gateway ${p50(c.gateway)} ms, relay ${p50(c.relay)} ms, recording relay ${p50(c.recording)} ms, direct ${p50(c.direct)} ms; ` +
        `stream first byte p50 gateway ${p50(s.gateway)} ms, relay ${p50(s.relay)} ms, recording relay ${p50(s.recording)} ms, direct ${p50(s.direct)} ms\n`,
    );
  }
  const gatewayCalls = [...chat, ...ttfb].reduce((n, s) => n + s.gateway.length, 0);
  const failed = [...chat, ...ttfb].reduce((n, s) => n + s.failed, 0);
  // Every gateway call wrote its usage row and corrected it, and nothing holds a reservation.
  const rows = (await waitForUsageRows(ctx, appId, rowsBefore + gatewayCalls)) - rowsBefore;
  const [held] = await control<{ reserved: string; open: string }>(
    ctx,
    'select coalesce(sum(b.reserved_nanos), 0)::text as reserved, (select count(*) from credit_reservations)::text as open from credit_balances b',
  );

  const row = (label: string, rounds: Samples[]) => {
    const m = (side: keyof Sides, q: number) => median(rounds.map((s) => percentile(s[side], q)));
    const at = (side: keyof Sides) => ({ p50: m(side, 0.5), p99: m(side, 0.99) });
    const [gateway, relay, recording, direct] = [at('gateway'), at('relay'), at('recording'), at('direct')];
    const over = (side: { p50: number; p99: number }) => ({ p50: side.p50 - direct.p50, p99: side.p99 - direct.p99 });
    return {
      label,
      gateway,
      relay,
      recording,
      direct,
      added: over(gateway),
      relayAdded: over(relay),
      recordingAdded: over(recording),
      ratio: { p50: gateway.p50 / direct.p50, p99: gateway.p99 / direct.p99 },
      samples: rounds.map((s) => s.gateway.length),
    };
  };
  const figures = [row('chat (whole answer)', chat), row('stream (first byte)', ttfb)];
  const f = (n: number) => n.toFixed(2);
  console.log('');
  console.log(`ai latency at 1 request in flight, median of ${ROUNDS} rounds of ${DURATION}s per kind (plan ${PLAN}; gateway, bare relay, recording relay and direct alternate):`);
  const head = ['', 'gateway p50', 'direct p50', 'added p50', 'ratio', 'relay added p50', 'recording added p50', 'gateway p99', 'direct p99', 'added p99', 'ratio', 'relay added p99', 'recording added p99', 'samples per round'];
  const cells = figures.map((r) => [
    r.label, f(r.gateway.p50), f(r.direct.p50), f(r.added.p50), f(r.ratio.p50), f(r.relayAdded.p50), f(r.recordingAdded.p50),
    f(r.gateway.p99), f(r.direct.p99), f(r.added.p99), f(r.ratio.p99), f(r.relayAdded.p99), f(r.recordingAdded.p99), r.samples.join(' / '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (row: string[]) => '  ' + row.map((c, i) => (i === 0 || i === row.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  for (const c of cells) console.log(line(c));
  console.log(`  (ms; added = gateway - direct; relay added = bare relay - direct, what any relay costs; recording added = the relay writing one row per call - direct, the least a relay that bills each call costs; goal: added under 1 ms at p50 and 3 ms at p99: chat ${figures[0]!.added.p50 < 1 && figures[0]!.added.p99 < 3 ? 'met' : 'MISSED'})`);
  console.log(`  usage rows written and corrected: ${rows} for ${gatewayCalls} gateway calls; credit reserved after the calls: ${held!.reserved} nanos in ${held!.open} reservations; failed requests: ${failed}`);
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(path.join(import.meta.dirname, 'results', 'ai-latency.json'), JSON.stringify({ date: new Date().toISOString(), plan: PLAN, rounds: ROUNDS, duration_s: DURATION, figures, failed, usage_rows: rows, gateway_calls: gatewayCalls }, null, 2) + '\n');
  if (failed > 0 || rows !== gatewayCalls || held!.reserved !== '0' || held!.open !== '0') {
    console.error('ai: failed requests, missing usage rows or credit left reserved: the figures are not trustworthy');
    process.exitCode = 1;
  }

  // Throughput: the same non-streaming request under autocannon, the gateway against the bare relay in front of the
  // same upstream (the limit), then against the recording relay (the least of the same work); every answer
  // carries the same content.
  const target = (url: string, authorization: string): Target => ({
    url,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: CHAT_BODY,
    expect: [`"content":"${CONTENT}"`, '"finish_reason":"stop"'],
    forbid: ['"error"'],
  });
  const platform = target(gatewayUrl, `Bearer ${serviceKey}`);
  return [
    { label: 'ai POST /v1/{app}/chat/completions', baselineName: 'bare node:http relay', platform, baseline: target(relayUrl, `Bearer ${serviceKey}`) },
    { label: 'ai POST /v1/{app}/chat/completions', baselineName: 'relay + one Postgres row per call', platform, baseline: target(recordingUrl, `Bearer ${serviceKey}`) },
  ];
}
