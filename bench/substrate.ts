// Scenario `substrate` (issue 12, "Performance"): proposals of an auto capability against the physical limit of the
// same writes.
//
// `POST /v1/me/substrate/actions/propose` {capability: 'record_learning', payload: {title, description}} with a
// substrate key at BENCH_CONNECTIONS: the verdict is auto_approved and the learning is written at once (src/substrate/
// service.ts propose: the key, then one transaction: the user's yolo flag and active principles, the learning row,
// the complete action row). Against this file run as its own process: raw node:http + a pg Pool of the platform's
// control pool size (10) that per request runs the issue's "same transaction (insert action row + domain row)" with
// the platform's statements on the same control database in ONE round trip (`begin; insert the learning row; insert
// the action row; commit` as one simple-protocol query, the parameters inlined as literals) and answers the same JSON. A harness pair (platform, baseline, interleaved rounds) in the main
// table.
//
// Before that, memory search (when GET /v1/me/substrate/memory exists): BENCH_SUBSTRATE_MEMORY_ROWS (100,000) rows,
// half learnings and half decisions, seeded with SQL straight into the tables for the account's default substrate
// user; then `GET memory?q=<word>` at one request in flight against the same statement (SubstrateMemory.search's,
// copied here and checked against src/substrate/memory.ts before measuring) run directly with `pg`, alternating, for
// a rare and a common word. Printed as its own table (and bench/results/substrate-memory.json). See bench/README.md.
//
// Run as its own entry point (`node bench/substrate.ts`), this file IS the baseline process (prints `ready <port>`).
import http from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { newId } from '../src/substrate/ids.ts';
import { DURATION, ROOT, ROUNDS, WARMUP, envInt, personSubstrateKey, serveBaseline, startBaseline, type BenchContext, type Pair, type Target, median, percentile, requiredEnv } from './harness.ts';

// ---------------------------------------------------------------------------------------------- shared with the baseline

const PROPOSE_PATH = '/v1/me/substrate/actions/propose';
/** The verdict of an auto capability proposed by a human with no principles (src/substrate/policy.ts decide). */
const VERDICT = { result: 'auto_approved', reason: 'capability policy: auto', conflicts: [] };

/**
 * The statements SubstrateService.propose and #execute and recordLearning.execute send for an auto-approved
 * record_learning, as Kysely compiles their templates ($n for each interpolation, `now()` inline).
 */
const INSERT_ACTION = `
        insert into substrate_actions (id, user_id, capability, payload, proposer_kind, source_app_id, source_rule_id, status, verdict,
                                       requires_approval, skip_approval, idempotency_key, decided_at, executed_at, result, undo)
        values ($1, $2, $3, $4, $5, $6, $7,
                $8, $9, $10, $11, $12,
                now(), now(),
                $13::jsonb, $14::jsonb)
        on conflict (user_id, idempotency_key) do nothing
        returning id`;
const INSERT_LEARNING = `insert into substrate_learnings (id, user_id, title, description, resolution_taken, related_decision_id, source_artifact_id)
      values ($1, $2, $3, $4, $5, $6,
              $7)`;

/** A statement with each $n replaced by the literal of params[n - 1] (strings quoted with pg's escapeLiteral). */
export function inline(statement: string, params: ReadonlyArray<string | boolean | null>): string {
  return statement.replace(/\$(\d+)/g, (_, n: string) => {
    const value = params[Number(n) - 1];
    if (value === undefined) throw new Error(`inline: no parameter $${n}`);
    return value === null ? 'null' : typeof value === 'boolean' ? String(value) : pg.escapeLiteral(value);
  });
}

// ---------------------------------------------------------------------------------------------- the baseline process

if (import.meta.main) {
  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: Number(requiredEnv('POOL_SIZE')) });
  pool.on('error', () => {});
  const userId = requiredEnv('USER_ID');
  const verdict = JSON.stringify(VERDICT);

  const send = (res: http.ServerResponse, status: number, json: string) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  };

  /**
   * The transaction of an auto-approved record_learning in one round trip: `begin; <the learning row>; <the complete
   * action row>; commit` as one simple-protocol query, each $n of the platform's statements replaced by its quoted
   * literal (as the data baseline, and the data API's runAs, send theirs). A failed statement aborts the rest of the
   * query; only then does a second trip (the rollback) follow.
   */
  async function propose(payload: { title: string; description: string }): Promise<string> {
    const actionId = newId('act');
    const learningId = newId('lrn');
    const result = { learning_id: learningId };
    const text =
      `begin; ${inline(INSERT_LEARNING, [learningId, userId, payload.title, payload.description, null, null, null])}; ` +
      `${inline(INSERT_ACTION, [
        actionId, userId, 'record_learning', JSON.stringify(payload), 'human', null, null, 'executed', verdict, false, false, null,
        JSON.stringify(result), JSON.stringify({ table: 'substrate_learnings', id: learningId }),
      ])}; commit`;
    const client = await pool.connect();
    try {
      await client.query(text);
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    return JSON.stringify({ action_id: actionId, verdict: VERDICT, requires_approval: false, result });
  }

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== PROPOSE_PATH) return send(res, 404, '{"error":"not found"}');
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.once('end', () => {
      let payload: { title: string; description: string };
      try {
        const input = JSON.parse(Buffer.concat(chunks).toString()) as { capability: string; payload: { title: string; description: string } };
        payload = input.payload;
        if (input.capability !== 'record_learning' || typeof payload?.title !== 'string' || typeof payload.description !== 'string') throw new Error('bad input');
      } catch {
        return send(res, 400, '{"error":"bad request"}');
      }
      propose({ title: payload.title, description: payload.description }).then(
        (json) => send(res, 200, json),
        (err: unknown) => send(res, 500, JSON.stringify({ error: String(err) })),
      );
    });
  });
  serveBaseline(server, pool);
}

// ---------------------------------------------------------------------------------------------- the driver side


/** Memory rows seeded for the memory search measurement: half learnings, half decisions. */
export const MEMORY_ROWS = envInt('BENCH_SUBSTRATE_MEMORY_ROWS', 100_000);

// ---- memory search: SubstrateMemory.search's statement, copied

/**
 * The pieces of SubstrateMemory.search (src/substrate/memory.ts) for a non-empty `q`, match `and` (tsQuery's default
 * branch in src/substrate/artifacts.ts), all four kinds, as the source spells them, with each interpolation written as
 * `{{name}}`. checkMemorySqlCopy puts the source's own spelling of each interpolation back and fails the scenario if
 * the source no longer holds exactly that text; memorySql puts the values Kysely sends in its place ($n parameters,
 * quoted table names, the columns), in the order Kysely numbers them.
 */
const MEMORY_KINDS = ['decisions', 'commitments', 'learnings', 'source_artifacts'] as const;
const MEMORY_SOURCES: Record<(typeof MEMORY_KINDS)[number], { table: string; columns: string }> = {
  decisions: {
    table: 'substrate_decisions',
    columns: `id, 'decision'::text as kind, title, rationale as body_text, updated_at, source_artifact_id, supersedes, status`,
  },
  commitments: {
    table: 'substrate_commitments',
    columns: `id, 'commitment'::text as kind, left(split_part(description, E'\n', 1), 200) as title, description as body_text, updated_at,
      source_artifact_id, null::text as supersedes, status`,
  },
  learnings: {
    table: 'substrate_learnings',
    columns: `id, 'learning'::text as kind, title,
      description || coalesce(E'\n\nResolution: ' || resolution_taken, '') as body_text, updated_at, source_artifact_id, null::text as supersedes, null::text as status`,
  },
  source_artifacts: {
    table: 'substrate_artifacts',
    columns: `id, 'source_artifact'::text as kind, title, coalesce(summary, left(content, 1000)) as body_text, updated_at,
      null::text as source_artifact_id, null::text as supersedes, null::text as status`,
  },
};
const MEMORY_TSQUERY = `websearch_to_tsquery('english', {{q}})`;
const MEMORY_BRANCH = `(select {{columns}}, ts_rank(tsv, fts.q) as rank from {{table}}, fts
        where user_id = {{userId}} and tsv @@ fts.q order by rank desc, updated_at desc, id desc limit {{limit}})`;
const MEMORY_OUTER = `
      with fts as (select {{tsq}} as q)
      select * from ({{branches}}) m
      order by rank desc, updated_at desc, id desc limit {{limit}}`;

/** The statement Kysely compiles for search(userId, { q, limit }) and its parameters. */
export function memorySql(userId: string, q: string, limit: number): { text: string; params: unknown[] } {
  const params: unknown[] = [q];
  const tsq = MEMORY_TSQUERY.replace('{{q}}', () => '$1');
  const branches = MEMORY_KINDS.map((k) => {
    const text = MEMORY_BRANCH.replace('{{columns}}', () => MEMORY_SOURCES[k].columns)
      .replace('{{table}}', () => pg.escapeIdentifier(MEMORY_SOURCES[k].table))
      .replace('{{userId}}', () => `$${params.length + 1}`)
      .replace('{{limit}}', () => `$${params.length + 2}`);
    params.push(userId, limit);
    return text;
  });
  params.push(limit);
  const text = MEMORY_OUTER.replace('{{tsq}}', () => tsq).replace('{{branches}}', () => branches.join(' union all ')).replace('{{limit}}', () => `$${params.length}`);
  return { text, params };
}

/**
 * The copy above is src/substrate/memory.ts's (and tsQuery's), character for character: each piece, with the source's
 * spelling of its interpolations, must occur in the source (its `\n` escapes read as the newlines Kysely sends).
 */
export function checkMemorySqlCopy(): void {
  const read = (file: string) => readFileSync(path.join(ROOT, 'src', 'substrate', file), 'utf8').replaceAll('\\n', '\n');
  const memory = read('memory.ts');
  const artifacts = read('artifacts.ts');
  const pieces: Array<[string, string, string]> = [
    ['memory.ts', memory, `export const MEMORY_KINDS = [${MEMORY_KINDS.map((k) => `'${k}'`).join(', ')}] as const;`],
    ...MEMORY_KINDS.map((k): [string, string, string] => ['memory.ts', memory, `${k}: {\n    table: '${MEMORY_SOURCES[k].table}',\n    columns: sql\`${MEMORY_SOURCES[k].columns}\`,`]),
    ['memory.ts', memory, 'const kinds = query.kinds?.length ? query.kinds : MEMORY_KINDS;'],
    ['memory.ts', memory, "const tsq = tsQuery(q, query.match ?? 'and');"],
    ['artifacts.ts', artifacts, `default:\n      return sql\`${MEMORY_TSQUERY.replace('{{q}}', () => '${q}')}\``],
    ['memory.ts', memory, `sql\`${MEMORY_BRANCH.replace('{{columns}}', () => '${SOURCES[k].columns}').replace('{{table}}', () => '${sql.table(SOURCES[k].table)}').replace('{{userId}}', () => '${userId}').replace('{{limit}}', () => '${limit}')}\``],
    ['memory.ts', memory, `sql<MemoryRow>\`${MEMORY_OUTER.replace('{{tsq}}', () => '${tsq}').replace('{{branches}}', () => '${sql.join(branches, sql` union all `)}').replace('{{limit}}', () => '${limit}')}\``],
  ];
  for (const [file, source, piece] of pieces) {
    if (!source.includes(piece)) {
      throw new Error(`substrate memory: src/substrate/${file} no longer holds the statement bench/substrate.ts copies; update the copy (MEMORY_*) to match:\n${piece}`);
    }
  }
}

// ---- memory search: seed and measure

/** Words of the seeded texts; COMMON_WORD is one of them (in about 11 % of the rows), RARE_WORD is added to 1 in 1,000. */
const WORDS = (
  'account action answer area army art attack author baby back bank bed bird blood board body book box boy brother ' +
  'budget camera car card care case cause cell center century chair chance change child church city class college color ' +
  'company computer contract country couple course court cup culture customer data daughter day death deadline degree ' +
  'design dinner direction doctor dog door dream economy edge election energy evening event evidence example eye face ' +
  'fact family father fear field figure film finger fire fish floor flower food foot forest form friend future game ' +
  'garden glass goal ground group growth hair hand harbor head health heart heat history home hope hospital hotel house ' +
  'idea image industry interest invoice island job kitchen knowledge lake land language law leader letter level library ' +
  'light line list machine magazine manager market material meeting memory message method minute model moment money ' +
  'month morning mother mountain movie music nation nature network news night number ocean office oil order owner page ' +
  'paper parent party patient pattern peace people period person picture piece plan plant player point police policy ' +
  'power pressure price problem process product program project property question radio rain reason record region report ' +
  'research resource result river road rock role room rule safety scene school science season seat security sense series ' +
  'service shape ship shop side sign silver skill skin sky snow society song sound source space speech sport spring staff'
).split(' ');
const COMMON_WORD = 'harbor';
const RARE_WORD = 'zeppelin';
const RARE_EVERY = 1000;

/** `n` words of WORDS picked by hashing (seed, row, position): deterministic, spread evenly. */
const words = (n: number, seed: number) =>
  `(select string_agg(w.words[1 + (abs(hashint4(g * ${n} + k + ${seed})::bigint) % cardinality(w.words))::int], ' ') from generate_series(1, ${n}) k)`;
const SEED_LEARNINGS = `
insert into substrate_learnings (id, user_id, title, description, created_at, updated_at)
select 'lrn_bench' || lpad(g::text, 7, '0'), $1::uuid, ${words(5, 0)},
       ${words(25, 7_000_000)} || case when g % ${RARE_EVERY} = 0 then ' ${RARE_WORD}' else '' end,
       now() - g * interval '1 second', now() - g * interval '1 second'
from generate_series(1, $3::int) g, (select $2::text[] as words) w`;
const SEED_DECISIONS = `
insert into substrate_decisions (id, user_id, title, kind, rationale, salience, created_at, updated_at)
select 'dec_bench' || lpad(g::text, 7, '0'), $1::uuid, ${words(6, 13_000_000)}, 'operational',
       ${words(25, 19_000_000)} || case when g % ${RARE_EVERY} = ${RARE_EVERY / 2} then ' ${RARE_WORD}' else '' end,
       'normal', now() - g * interval '1 second' - interval '500 ms', now() - g * interval '1 second' - interval '500 ms'
from generate_series(1, $3::int) g, (select $2::text[] as words) w`;

interface Timed {
  status: number;
  ms: number;
  text: string;
}

function get(agent: http.Agent, url: URL, authorization: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', agent, headers: { authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, text: Buffer.concat(chunks).toString() }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

interface MemoryFigures {
  q: string;
  matches: number;
  results: number;
  platform: { p50: number; p99: number };
  direct: { p50: number; p99: number };
  added: { p50: number; p99: number };
  ratio: { p50: number; p99: number };
  samples: number[];
  failed: number;
}

/**
 * GET memory at one request in flight against the same statement run directly with `pg`, alternating; undefined
 * (and a note) when the platform has no memory search yet.
 */
async function memoryScenario(ctx: BenchContext, authorization: string, userId: string): Promise<MemoryFigures[] | undefined> {
  const memoryUrl = (q: string) => new URL(`${ctx.platformUrl}/v1/me/substrate/memory?q=${encodeURIComponent(q)}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const probe = await get(agent, memoryUrl(COMMON_WORD), authorization);
  if (!existsSync(path.join(ROOT, 'src', 'substrate', 'memory.ts')) || probe.status === 404) {
    agent.destroy();
    console.log(`\nsubstrate memory search: not measured (GET /v1/me/substrate/memory answered ${probe.status}: the platform has no memory search yet)\n`);
    return undefined;
  }
  checkMemorySqlCopy();

  const db = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await db.connect();
  try {
    const t0 = performance.now();
    const half = Math.floor(MEMORY_ROWS / 2);
    await db.query(SEED_LEARNINGS, [userId, WORDS, MEMORY_ROWS - half]);
    await db.query(SEED_DECISIONS, [userId, WORDS, half]);
    await db.query('vacuum analyze substrate_learnings');
    await db.query('vacuum analyze substrate_decisions');
    const counts = (await db.query<{ n: number }>(`select (select count(*) from substrate_learnings where user_id = $1) + (select count(*) from substrate_decisions where user_id = $1) as n`, [userId])).rows[0]!;
    process.stderr.write(`substrate memory: ${counts.n} rows (learnings and decisions) seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    if (Number(counts.n) !== MEMORY_ROWS) throw new Error(`substrate memory: ${counts.n} rows for the user, expected ${MEMORY_ROWS}`);

    const LIMIT = 20; // the route's default limit
    const figures: MemoryFigures[] = [];
    for (const q of [RARE_WORD, COMMON_WORD]) {
      const { text, params } = memorySql(userId, q, LIMIT);
      const matches = Number(
        (await db.query(`select (select count(*) from substrate_learnings where user_id = $1 and tsv @@ websearch_to_tsquery('english', $2)) + (select count(*) from substrate_decisions where user_id = $1 and tsv @@ websearch_to_tsquery('english', $2)) as n`, [userId, q])).rows[0].n,
      );
      if (matches === 0) throw new Error(`substrate memory: no seeded row matches '${q}' (BENCH_SUBSTRATE_MEMORY_ROWS is too small)`);
      // Pre-flight: the platform answers the rows the statement returns, in the same order with the same ranks.
      const direct = (await db.query<{ id: string; kind: string; rank: number }>(text, params)).rows;
      const answer = await get(agent, memoryUrl(q), authorization);
      const results = (answer.status === 200 ? (JSON.parse(answer.text) as { results: Array<{ id: string; kind: string; rank: number }> }).results : undefined) ?? [];
      if (answer.status !== 200 || direct.length !== Math.min(LIMIT, matches) || !isDeepStrictEqual(results.map((r) => [r.id, r.kind, r.rank]), direct.map((r) => [r.id, r.kind, r.rank]))) {
        throw new Error(`substrate memory pre-flight: q=${q}: GET memory answered ${answer.status} and not the ${direct.length} rows the statement returns:\n${answer.text.slice(0, 800)}\n${JSON.stringify(direct.slice(0, 3))}`);
      }
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`explain ${text}`, params)).rows.map((r) => r['QUERY PLAN']);
      const scans = [...new Set(plan.map((l) => /(Bitmap Index Scan|Index Scan|Seq Scan)[^(]*/.exec(l)?.[0]?.trim()).filter(Boolean))];
      const firstId = `"id":"${direct[0]!.id}"`;

      const samples = { platform: [] as number[], direct: [] as number[], failed: 0 };
      const alternate = async (seconds: number, into: typeof samples) => {
        const end = performance.now() + seconds * 1000;
        while (performance.now() < end) {
          const p = await get(agent, memoryUrl(q), authorization).catch(() => undefined);
          if (p?.status === 200 && p.text.includes(firstId)) into.platform.push(p.ms);
          else into.failed++;
          const t = performance.now();
          const r = await db.query<{ id: string }>(text, params).catch(() => undefined);
          if (r?.rows[0]?.id === direct[0]!.id) into.direct.push(performance.now() - t);
          else into.failed++;
        }
      };
      process.stderr.write(`substrate memory: q=${q} (${matches} matching rows; ${scans.join(', ')}): warm-up ${WARMUP}s\n`);
      await alternate(WARMUP, { platform: [], direct: [], failed: 0 });
      const rounds: Array<typeof samples> = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const r = { platform: [] as number[], direct: [] as number[], failed: 0 };
        await alternate(DURATION, r);
        rounds.push(r);
        process.stderr.write(`substrate memory: q=${q}: round ${round}/${ROUNDS}: p50 platform ${percentile(r.platform, 0.5).toFixed(2)} ms, direct ${percentile(r.direct, 0.5).toFixed(2)} ms\n`);
      }
      const m = (side: 'platform' | 'direct', p: number) => median(rounds.map((r) => percentile(r[side], p)));
      const platform = { p50: m('platform', 0.5), p99: m('platform', 0.99) };
      const directFig = { p50: m('direct', 0.5), p99: m('direct', 0.99) };
      figures.push({
        q,
        matches,
        results: direct.length,
        platform,
        direct: directFig,
        added: { p50: platform.p50 - directFig.p50, p99: platform.p99 - directFig.p99 },
        ratio: { p50: platform.p50 / directFig.p50, p99: platform.p99 / directFig.p99 },
        samples: rounds.map((r) => r.platform.length),
        failed: rounds.reduce((n, r) => n + r.failed, 0),
      });
    }

    const f = (n: number) => n.toFixed(2);
    console.log('');
    console.log(
      `substrate memory search at 1 request in flight over ${MEMORY_ROWS} rows (${MEMORY_ROWS - Math.floor(MEMORY_ROWS / 2)} learnings, ${Math.floor(MEMORY_ROWS / 2)} decisions), ` +
        `limit 20, median of ${ROUNDS} rounds of ${DURATION}s (GET memory and the same statement on pg alternate):`,
    );
    const head = ['q', 'matches', 'platform p50', 'direct p50', 'added p50', 'ratio', 'platform p99', 'direct p99', 'added p99', 'ratio', 'samples per round'];
    const rows = figures.map((x) => [x.q, String(x.matches), f(x.platform.p50), f(x.direct.p50), f(x.added.p50), f(x.ratio.p50), f(x.platform.p99), f(x.direct.p99), f(x.added.p99), f(x.ratio.p99), x.samples.join(' / ')]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => '  ' + cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
    console.log(line(head));
    for (const r of rows) console.log(line(r));
    console.log(`  (ms; added = platform - direct; failed requests: ${figures.reduce((n, x) => n + x.failed, 0)})`);
    console.log('');
    mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
    writeFileSync(
      path.join(import.meta.dirname, 'results', 'substrate-memory.json'),
      JSON.stringify({ date: new Date().toISOString(), rows: MEMORY_ROWS, rounds: ROUNDS, duration_s: DURATION, figures }, null, 2) + '\n',
    );
    if (figures.some((x) => x.failed > 0)) {
      console.error('substrate memory: failed requests: the figures are not trustworthy');
      process.exitCode = 1;
    }
    return figures;
  } finally {
    agent.destroy();
    await db.end();
  }
}

// ---- propose

/** The platform's control pool (SVC_CONTROL_POOL_SIZE default): the baseline's pool gets as many connections. */
const CONTROL_POOL_SIZE = 10;

/** One body for every request; autocannon replaces `[<id>]` with a fresh id per request, so every learning differs. */
const BODY = JSON.stringify({
  capability: 'record_learning',
  payload: {
    title: 'Bench learning [<id>]',
    description: 'Retries without a backoff overload the upstream; add jitter and cap the attempts before the next release.',
  },
});

interface Reply {
  status: number;
  json: any;
}

async function call(url: string, authorization: string, method: string, body?: string): Promise<Reply> {
  const res = await fetch(url, { method, headers: { Authorization: authorization, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok) throw new Error(`substrate pre-flight: ${what}${detail === undefined ? '' : `\n${typeof detail === 'string' ? detail : JSON.stringify(detail)}`}`);
}

/** The action row and its learning row, without the ids and times that differ between any two proposals. */
async function rowsOf(db: pg.Client, actionId: string): Promise<unknown> {
  const action = (await db.query('select * from substrate_actions where id = $1', [actionId])).rows[0];
  check(action !== undefined, `action ${actionId} was not written`);
  const learningId = action.result?.learning_id as string;
  const learning = (await db.query('select * from substrate_learnings where id = $1', [learningId])).rows[0];
  check(learning !== undefined, `learning ${learningId} of action ${actionId} was not written`);
  check(action.undo?.id === learningId && action.decided_at !== null && action.executed_at !== null, `action ${actionId}: undo, decided_at or executed_at not as the platform writes them`, action);
  const { id: _a, created_at: _c, decided_at: _d, executed_at: _e, result: _r, undo: _u, ...actionRest } = action;
  const { id: _l, created_at: _lc, updated_at: _lu, ...learningRest } = learning;
  return { action: actionRest, learning: learningRest };
}

/**
 * A substrate key and the account's default substrate user; memory search (when it exists); then the propose baseline
 * on the control database and the pre-flight of the pair run.ts measures.
 */
export async function substrateScenario(ctx: BenchContext): Promise<Pair[]> {
  const authorization = await personSubstrateKey(ctx, 'bench');
  const settings = await call(`${ctx.platformUrl}/v1/me/substrate/settings`, authorization, 'GET');
  const userId = settings.json?.user_id as string | undefined;
  check(settings.status === 200 && typeof userId === 'string' && settings.json.yolo_mode === false, `GET settings answered ${settings.status}`, settings.json);

  // Memory search first, on exactly MEMORY_ROWS rows (the proposals below add learnings).
  await memoryScenario(ctx, authorization, userId!);

  const baseline = await startBaseline('bench/substrate.ts', { DATABASE_URL: ctx.controlDatabaseUrl, POOL_SIZE: String(CONTROL_POOL_SIZE), USER_ID: userId! });
  ctx.cleanups.push(baseline.child.stop);

  // Pre-flight: the same answer (ids aside) and the same rows (ids and times aside) from both sides.
  const body = BODY.replace('[<id>]', 'pre-flight');
  const answers: Reply[] = [];
  for (const url of [ctx.platformUrl, baseline.url]) {
    const reply = await call(url + PROPOSE_PATH, authorization, 'POST', body);
    check(reply.status === 200 && reply.json?.verdict?.result === 'auto_approved' && /^lrn_/.test(reply.json.result?.learning_id ?? ''), `${url} answered ${reply.status}`, reply.json);
    answers.push(reply);
  }
  const shape = (r: Reply) => ({ ...r.json, action_id: 'act', result: { learning_id: 'lrn' } });
  check(isDeepStrictEqual(shape(answers[0]!), shape(answers[1]!)), 'the platform and the baseline answer differently', answers.map((a) => a.json));
  const db = new pg.Client({ connectionString: ctx.controlDatabaseUrl });
  await db.connect();
  try {
    const rows = await Promise.all(answers.map((a) => rowsOf(db, a.json.action_id)));
    check(isDeepStrictEqual(rows[0], rows[1]), 'the platform and the baseline write different rows', rows);
    const principles = await db.query(`select count(*)::int as n from substrate_principles where user_id = $1 and status = 'active'`, [userId]);
    process.stderr.write(`substrate: user ${userId}, ${principles.rows[0].n} active principles; both sides write the same rows\n`);
  } finally {
    await db.end();
  }

  const target = (url: string): Target => ({
    url: url + PROPOSE_PATH,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: BODY,
    idReplacement: true,
    expect: ['"result":"auto_approved"', '"learning_id":"lrn_'],
    forbid: ['"error"'],
  });
  return [{ label: 'substrate POST actions/propose record_learning', baselineName: 'raw node:http+pg, same tx, 1 trip', platform: target(ctx.platformUrl), baseline: target(baseline.url) }];
}
