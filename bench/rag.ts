// Scenario `rag` (issue 11, "Performance"): RAG retrieval and ingestion against the physical limit of the same work.
//
// 1. Query throughput at BENCH_CONNECTIONS: `POST /v1/{app}/rag/collections/{name}/query` {query, topK: 5} on a
//    collection of BENCH_RAG_SEED_CHUNKS (10,000) chunks of 1536 dimensions, against this file run as its own process:
//    raw node:http that, per request, calls the same fake upstream's /embeddings for the query and runs the same
//    transaction as src/rag/service.ts (BEGIN with the `set local` hnsw settings in one round trip, the same statement,
//    the same parameters) with `pg`
//    on the same app database. A harness pair (platform, baseline, interleaved rounds) in the main table.
// 2. Ingestion throughput, chunks per second end to end: BENCH_RAG_DOCS texts of ~20 chunks each ingested through the
//    API with the worker of the same process (as `npm start` runs it), timed until every document is ready, against
//    the bare loop: the same texts chunked with the platform's chunker (src/rag/chunk.ts), embedded straight on the
//    fake in batches of 96 and inserted with `pg`.
//    Printed as its own table (and bench/results/rag-ingest.json).
//
// The fake upstream is scenario `ai`'s (bench/ai.ts run as its own process, `record: false`), started once before
// the platform by sharedAiUpstream whichever of the two scenarios is selected. See bench/README.md.
//
// Run as its own entry point (`node bench/rag.ts`), this file IS the query baseline process (prints `ready <port>`).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { chunkText } from '../src/rag/chunk.ts';
import { loadConfig } from '../src/config.ts';
import { aiUpstream, UPSTREAM_IDLE_MS } from './ai.ts';
import { CLUSTER_URL, ROUNDS, WARMUP, envInt, serveBaseline, startBaseline, type BenchContext, type Pair, type Target, median, requiredEnv } from './harness.ts';

// ---------------------------------------------------------------------------------------------- shared with the baseline

/** The collection's default embedding model (src/rag/types.ts DEFAULT_EMBEDDING_MODEL): 1536 dimensions, no `dimensions`. */
const MODEL = 'openai/text-embedding-3-small';
const DIMENSIONS = 1536;

/** visibleTo('$3', 'd.') of src/rag/service.ts, spelled out (the app's keys: $3 is null). */
const VISIBLE_TO = '($3::uuid is null or d.owner_user_id is null or d.owner_user_id = $3::uuid)';
/**
 * RagService.query's statement, copied. Pre-flight checks that src/rag/service.ts still holds exactly this text
 * (with `${visibleTo('$3', 'd.')}` in place of VISIBLE_TO), so the two cannot drift apart unnoticed.
 */
const QUERY_SQL = `select text, score, document_id, metadata from (
         select c.text, 1 - (c.embedding <=> $1::vector) as score, c.document_id, c.metadata, c.embedding <=> $1::vector as distance
         from svc_rag.chunks c join svc_rag.documents d on d.id = c.document_id
         where c.collection_id = $2 and d.status = 'ready' and ${VISIBLE_TO} and c.metadata @> $4::jsonb
           and 1 - (c.embedding <=> $1::vector) >= $5
         order by c.embedding <=> $1::vector
         limit $6
       ) nearest order by distance`;
/** The `set local` line of RagService.query, for a given topK. */
const setLocal = (topK: number) => `set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${Math.max(40, topK * 2)}`;
const SET_LOCAL_SOURCE = 'set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${Math.max(40, input.topK * 2)}';

/** toVectorLiteral of src/rag/service.ts. */
const vectorLiteral = (v: readonly number[]) => `[${v.join(',')}]`;

interface Reply {
  status: number;
  text: string;
}

function postJson(agent: http.Agent, url: URL, authorization: string, body: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** The upstream's /embeddings for `texts`, as the gateway asks for them (embedTexts: float, no dimensions). */
async function embedDirect(agent: http.Agent, upstreamUrl: string, apiKey: string, texts: readonly string[]): Promise<number[][]> {
  const body = JSON.stringify({ model: MODEL, input: texts, encoding_format: 'float' });
  const reply = await postJson(agent, new URL(`${upstreamUrl}/embeddings`), `Bearer ${apiKey}`, body);
  if (reply.status !== 200) throw new Error(`embeddings answered ${reply.status}: ${reply.text.slice(0, 500)}`);
  const out = JSON.parse(reply.text) as { data: { index: number; embedding: number[] }[] };
  const vectors: number[][] = [];
  for (const item of out.data) vectors[item.index] = item.embedding;
  if (vectors.length !== texts.length || vectors.some((v) => v?.length !== DIMENSIONS)) throw new Error('embeddings: the answer does not match the request');
  return vectors;
}

// ---------------------------------------------------------------------------------------------- the baseline process

if (import.meta.main) {
  const pool = new pg.Pool({ connectionString: requiredEnv('DATABASE_URL'), max: Number(requiredEnv('POOL_SIZE')), pipeline: true });
  pool.on('error', () => {});
  const upstreamUrl = requiredEnv('UPSTREAM_URL');
  const upstreamKey = requiredEnv('UPSTREAM_KEY');
  const queryPath = requiredEnv('QUERY_PATH');
  const collectionId = requiredEnv('COLLECTION_ID');
  /** One keep-alive agent, no socket limit: as many calls in flight as requests; idle sockets dropped before the fake drops them. */
  const agent = new http.Agent({ keepAlive: true, timeout: UPSTREAM_IDLE_MS });

  const send = (res: http.ServerResponse, status: number, json: string) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  };

  /** The query's vector first (no connection held meanwhile), then the transaction, as RagService.query does. */
  async function query(input: { query: string; topK: number; threshold?: number; filter?: Record<string, unknown> }): Promise<string> {
    const [vector] = await embedDirect(agent, upstreamUrl, upstreamKey, [input.query]);
    const client = await pool.connect();
    // BEGIN with the settings, the statement and COMMIT written together on a pipeline-mode connection: one round
    // trip, as RagService.query sends them.
    const sent = await Promise.allSettled([
      client.query(`begin; ${setLocal(input.topK)}`),
      client.query<{ text: string; score: number; document_id: string; metadata: Record<string, unknown> }>(QUERY_SQL, [vectorLiteral(vector!), collectionId, null, JSON.stringify(input.filter ?? {}), input.threshold ?? -1, input.topK]),
      client.query('commit'),
    ]);
    client.release();
    const failed = sent.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const { rows } = (sent[1] as PromiseFulfilledResult<pg.QueryResult<{ text: string; score: number; document_id: string; metadata: Record<string, unknown> }>>).value;
    return JSON.stringify({ chunks: rows.map((r) => ({ text: r.text, score: Number(r.score), documentId: r.document_id, metadata: r.metadata })) });
  }

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== queryPath) return send(res, 404, '{"error":"not found"}');
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.once('end', () => {
      let input: { query: string; topK: number };
      try {
        input = JSON.parse(Buffer.concat(chunks).toString()) as { query: string; topK: number };
        if (typeof input.query !== 'string' || !Number.isInteger(input.topK)) throw new Error('bad input');
      } catch {
        return send(res, 400, '{"error":"bad request"}');
      }
      query(input).then(
        (json) => send(res, 200, json),
        (err: unknown) => send(res, 500, JSON.stringify({ error: String(err) })),
      );
    });
  });
  serveBaseline(server, pool);
}

// ---------------------------------------------------------------------------------------------- the driver side


/** Chunks of the query collection. */
export const SEED_CHUNKS = envInt('BENCH_RAG_SEED_CHUNKS', 10_000);
/** Documents per ingestion run (each ~20 chunks). */
export const INGEST_DOCS = envInt('BENCH_RAG_DOCS', 50);
const TOP_K = 5;
/** Chunks per document the ingestion texts are sized for, at the collection defaults (512 tokens, 64 overlap). */
const CHUNKS_PER_DOC = 20;
const CHUNK_SIZE = 512;
const CHUNK_OVERLAP = 64;
/** Texts per embeddings request (RAG_LIMITS.embedBatch). */
const EMBED_BATCH = 96;
/** Rows per insert statement when seeding. */
const SEED_INSERT_ROWS = 500;
/** How often the ingestion run polls the documents list. */
const POLL_MS = 50;

let upstream: Promise<Record<string, string>> | undefined;

/**
 * Scenario `ai`'s fake upstream (bench/ai.ts as its own process), started once before the platform whichever of
 * `ai` and `rag` asks first; returns the platform's AI environment (SVC_AI_BASE_URL, SVC_AI_API_KEY).
 */
export async function sharedAiUpstream(cleanups: Array<() => Promise<void>>): Promise<Record<string, string>> {
  upstream ??= aiUpstream(cleanups);
  return upstream;
}

// ---- deterministic text

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VOCABULARY = (
  'account action answer area army art attack author baby back bank bed bird blood board body book box boy brother ' +
  'building business camera car card care case cause cell center century chair chance change child church city class ' +
  'college color community company computer condition control country couple course court cup culture customer data ' +
  'daughter day death decision degree design development difference dinner direction disease doctor dog door dream ' +
  'economy edge education effect election energy environment evening event evidence example experience eye face fact ' +
  'family father fear field figure film finger fire fish floor flower food foot force forest form friend future game ' +
  'garden glass goal government ground group growth gun hair hand head health heart heat history home hope hospital ' +
  'hotel house idea image industry information interest island job kitchen knowledge lake land language law leader ' +
  'letter level library light line list machine magazine manager market material meeting memory message method minute ' +
  'model moment money month morning mother mountain movie music nation nature network news night number ocean office ' +
  'oil operation order owner page paper parent party patient pattern peace people period person picture piece plan ' +
  'plant player point police policy power president pressure price problem process product program project property ' +
  'question radio rain reason record region report research resource result river road rock role room rule safety ' +
  'scene school science sea season seat security sense series service shape ship shop shoulder side sign silver skill ' +
  'skin sky snow society soldier song sound source space speech sport spring staff stage star station stone store ' +
  'story street student study style subject success summer sun system table teacher team technology television term ' +
  'test theory thing thought time tool town trade training travel tree truth unit valley value village visit voice ' +
  'wall war water wave weather week weight wind window winter woman wood word work world writer year youth ' +
  'bright calm dark deep early easy fast fresh green heavy high large late light long loud new old open quiet quick ' +
  'rich round short simple slow small soft strong sweet warm wide wild young builds carries finds gives holds keeps ' +
  'leads makes moves opens reads runs sees shows takes tells turns uses waits walks wants writes'
).split(' ');

/** Sentences of 6 to 15 words, paragraphs of 3 to 7 sentences, about `words` words. */
function prose(seed: number, words: number): string {
  const next = prng(seed);
  const word = () => VOCABULARY[Math.floor(next() * VOCABULARY.length)]!;
  const paragraphs: string[] = [];
  let n = 0;
  while (n < words) {
    const sentences: string[] = [];
    for (let s = 3 + Math.floor(next() * 5); s > 0 && n < words; s--) {
      const len = 6 + Math.floor(next() * 10);
      const w = Array.from({ length: len }, word);
      w[0] = w[0]![0]!.toUpperCase() + w[0]!.slice(1);
      sentences.push(`${w.join(' ')}.`);
      n += len;
    }
    paragraphs.push(sentences.join(' '));
  }
  return paragraphs.join('\n\n');
}

// ---- platform helpers

async function api(ctx: BenchContext, key: string, method: string, route: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${ctx.platformUrl}${route}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function createApp(ctx: BenchContext, name: string): Promise<{ appId: string; serviceKey: string }> {
  const init = await fetch(`${ctx.platformUrl}/init`, { method: 'POST', headers: { Authorization: ctx.authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
  const app = (await init.json()) as { app_id?: string; service_key?: { key?: string } };
  if (init.status !== 201 || !app.app_id || !app.service_key?.key) throw new Error(`POST /init answered ${init.status}: ${JSON.stringify(app)}`);
  return { appId: app.app_id, serviceKey: app.service_key.key };
}

async function createCollection(ctx: BenchContext, appId: string, key: string, name: string): Promise<string> {
  const res = await api(ctx, key, 'POST', `/v1/${appId}/rag/collections`, { name, chunkSize: CHUNK_SIZE, chunkOverlap: CHUNK_OVERLAP });
  if (res.status !== 201) throw new Error(`rag: creating collection ${name} answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json.id as string;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The account's plan (BENCH_AI_PLAN, default `pro`, as in scenario `ai`), before the first AI call: with `pro` every
 * embedding call reserves credit before the upstream call and settles it after, as for a paying account. The plan's
 * own grant ($10 a period) covers a run many times over: a run embeds a few million tokens at $0.02 per million.
 */
async function setPlan(ctx: BenchContext, appId: string): Promise<string> {
  const plan = process.env.BENCH_AI_PLAN || 'pro';
  if (plan !== 'pro' && plan !== 'enterprise') throw new Error(`BENCH_AI_PLAN must be 'pro' or 'enterprise', got '${plan}'`);
  await withClient(ctx.controlDatabaseUrl, (c) => c.query('update accounts set plan = $2 where id = (select account_id from apps where id = $1)', [appId, plan]));
  return plan;
}

/** The statement and the set local line of the baseline are RagService.query's, character for character. */
function checkSqlCopy(): void {
  const source = readFileSync(path.join(import.meta.dirname, '..', 'src', 'rag', 'service.ts'), 'utf8');
  const statement = QUERY_SQL.replace(VISIBLE_TO, "${visibleTo('$3', 'd.')}");
  if (!source.includes(statement) || !source.includes(SET_LOCAL_SOURCE)) {
    throw new Error("rag: RagService.query's SQL (src/rag/service.ts) changed: update QUERY_SQL / setLocal in bench/rag.ts to match");
  }
}

// ---- 1. ingestion

interface Row {
  doc: number;
  chunkIndex: number;
  text: string;
  metadata: string;
  /** As Postgres prints it: the bare loop must write the same vectors. */
  embedding: string;
}

interface IngestRun {
  side: 'platform' | 'bare';
  docs: number;
  chunks: number;
  seconds: number;
  chunksPerSecond: number;
}

/** Texts of ~CHUNKS_PER_DOC chunks at the collection's chunk settings: the word count is calibrated with the platform's chunker. */
async function ingestTexts(docs: number): Promise<string[]> {
  const chunks = (words: number) => chunkText(prose(1, words), { chunkSize: CHUNK_SIZE, chunkOverlap: CHUNK_OVERLAP }).length;
  let words = CHUNKS_PER_DOC * 400;
  for (let i = 0; i < 6; i++) {
    const n = chunks(words);
    if (n === CHUNKS_PER_DOC) break;
    words = Math.round(words * (CHUNKS_PER_DOC - 0.5) / (n - 0.5));
  }
  return Array.from({ length: docs }, (_, i) => prose(1000 + i, words));
}

/** The metadata of ingestion document `i` (and of its chunks). */
const ingestMetadata = (i: number) => ({ source: 'bench-ingest', doc: i });

/** Through the API: every ingest request, then the documents list polled until all are ready. */
async function ingestPlatform(ctx: BenchContext, appId: string, key: string, collection: string, texts: readonly string[]): Promise<IngestRun> {
  const t0 = performance.now();
  const posted = await Promise.all(
    texts.map((text, i) => api(ctx, key, 'POST', `/v1/${appId}/rag/collections/${collection}/ingest`, { text, metadata: ingestMetadata(i) })),
  );
  const bad = posted.find((r) => r.status !== 202);
  if (bad) throw new Error(`rag ingest answered ${bad.status}: ${JSON.stringify(bad.json)}`);
  let docs: Array<{ status: string; chunkCount: number; errorMessage: string | null }>;
  for (;;) {
    const list = await api(ctx, key, 'GET', `/v1/${appId}/rag/collections/${collection}/documents`);
    if (list.status !== 200) throw new Error(`rag documents list answered ${list.status}: ${JSON.stringify(list.json)}`);
    docs = list.json;
    const failed = docs.find((d) => d.status === 'failed');
    if (failed) throw new Error(`rag: a document failed: ${failed.errorMessage}`);
    if (docs.length === texts.length && docs.every((d) => d.status === 'ready')) break;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const seconds = (performance.now() - t0) / 1000;
  const chunks = docs.reduce((n, d) => n + d.chunkCount, 0);
  return { side: 'platform', docs: texts.length, chunks, seconds, chunksPerSecond: chunks / seconds };
}

/** The rows written for a collection, in document and chunk order, with their embeddings as text. */
async function rowsOf(appDb: string, collectionId: string): Promise<Row[]> {
  return withClient(appDb, async (c) =>
    (
      await c.query<{ doc: number; chunk_index: number; text: string; metadata: string; embedding: string }>(
        `select (metadata->>'doc')::int as doc, chunk_index, text, metadata::text as metadata, embedding::text as embedding from svc_rag.chunks
         where collection_id = $1 order by 1, 2`,
        [collectionId],
      )
    ).rows.map((r) => ({ doc: r.doc, chunkIndex: r.chunk_index, text: r.text, metadata: r.metadata, embedding: r.embedding })),
  );
}

/**
 * The bare loop: the document rows, then the texts chunked with the platform's own chunker (chunkText of
 * src/rag/chunk.ts, the collection's chunk settings) one document at a time as the batches need them, the chunks in
 * batches of EMBED_BATCH across documents, as many batches in flight as the platform's worker runs jobs: each embedded
 * straight on the fake and inserted with one statement; then the documents marked ready with their chunk counts in one
 * statement. Chunking runs here, in-process, with the tokenizer already loaded (ingestTexts used it): the platform
 * chunks each document of more than 8 KB in a child process (src/rag/document-children.ts), kept warm for the app's next
 * documents, which loads the tokenizer again when it starts; that isolation is part of what the ratio prices.
 */
async function ingestBare(appDb: string, upstreamUrl: string, upstreamKey: string, collectionId: string, texts: readonly string[], concurrency: number): Promise<IngestRun> {
  const agent = new http.Agent({ keepAlive: true });
  const pool = new pg.Pool({ connectionString: appDb, max: concurrency });
  const options = { chunkSize: CHUNK_SIZE, chunkOverlap: CHUNK_OVERLAP };
  try {
    const ids = texts.map(() => randomUUID());
    const metadata = texts.map((_, i) => JSON.stringify(ingestMetadata(i)));
    const counts = texts.map(() => 0);
    let chunks = 0;
    await pool.query('select 1'); // connect one before the clock starts, as the platform's pool is
    const t0 = performance.now();
    await pool.query(
      `insert into svc_rag.documents (id, collection_id, status, metadata)
       select id, $1, 'processing', m::jsonb from unnest($2::uuid[], $3::text[]) as u(id, m)`,
      [collectionId, ids, metadata],
    );
    // The next batch: documents chunked as they are needed, so chunking overlaps the other batches' calls and inserts.
    let nextDoc = 0;
    const pending: Array<{ doc: number; chunkIndex: number; text: string }> = [];
    const take = () => {
      while (pending.length < EMBED_BATCH && nextDoc < texts.length) {
        const doc = nextDoc++;
        const made = chunkText(texts[doc]!, options);
        counts[doc] = made.length;
        chunks += made.length;
        for (const c of made) pending.push({ doc, chunkIndex: c.index, text: c.text });
      }
      return pending.length ? pending.splice(0, EMBED_BATCH) : undefined;
    };
    const loop = async () => {
      for (let batch = take(); batch; batch = take()) {
        const vectors = await embedDirect(agent, upstreamUrl, upstreamKey, batch.map((r) => r.text));
        await pool.query(
          `insert into svc_rag.chunks (document_id, chunk_index, collection_id, text, metadata, embedding)
           select d, i, $1, t, m::jsonb, v::vector from unnest($2::uuid[], $3::int[], $4::text[], $5::text[], $6::text[]) as u(d, i, t, m, v)`,
          [collectionId, batch.map((r) => ids[r.doc]), batch.map((r) => r.chunkIndex), batch.map((r) => r.text), batch.map((r) => metadata[r.doc]), vectors.map(vectorLiteral)],
        );
      }
    };
    await Promise.all(Array.from({ length: concurrency }, loop));
    await pool.query(
      `update svc_rag.documents d set status = 'ready', chunk_count = u.n, updated_at = now() from unnest($1::uuid[], $2::int[]) as u(id, n) where d.id = u.id`,
      [ids, counts],
    );
    const seconds = (performance.now() - t0) / 1000;
    return { side: 'bare', docs: texts.length, chunks, seconds, chunksPerSecond: chunks / seconds };
  } finally {
    agent.destroy();
    await pool.end();
  }
}

async function ingestionScenario(ctx: BenchContext, upstreamUrl: string, upstreamKey: string, plan: string): Promise<void> {
  const concurrency = loadConfig({}).workerConcurrency;
  const { appId, serviceKey } = await createApp(ctx, 'Bench RAG ingest');
  const appDb = `${CLUSTER_URL}/${ctx.appPrefix}${appId}`;
  const texts = await ingestTexts(INGEST_DOCS);
  const runs: IngestRun[] = [];

  // Every run starts from an empty chunks table (and HNSW index): what a run costs depends on the index it inserts
  // into, so runs that followed each other into one growing index would not be comparable.
  const empty = () => withClient(appDb, (c) => c.query('truncate svc_rag.chunks'));
  // A pair of runs: the platform's, then the bare loop chunking, embedding and inserting the same texts; both must
  // write the same rows.
  const pair = async (name: string, docs: readonly string[]) => {
    const pId = await createCollection(ctx, appId, serviceKey, `${name}-p`);
    const bId = await createCollection(ctx, appId, serviceKey, `${name}-b`);
    await empty();
    const p = await ingestPlatform(ctx, appId, serviceKey, `${name}-p`, docs);
    const rows = await rowsOf(appDb, pId);
    if (rows.length !== p.chunks) throw new Error(`rag ingest: ${p.chunks} chunks reported, ${rows.length} rows written`);
    await empty();
    const b = await ingestBare(appDb, upstreamUrl, upstreamKey, bId, docs, concurrency);
    if (!isDeepStrictEqual(await rowsOf(appDb, bId), rows)) throw new Error('rag ingest: the bare loop wrote other rows than the platform');
    return [p, b] as const;
  };

  if (WARMUP > 0) {
    const warm = texts.slice(0, Math.max(2, Math.ceil(texts.length / 10)));
    process.stderr.write(`rag ingest: warm-up (${warm.length} documents each)\n`);
    await pair('warm', warm);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const [p, b] = await pair(`round-${round}`, texts);
    runs.push(p, b);
    process.stderr.write(
      `rag ingest: round ${round}/${ROUNDS}: platform ${p.chunks} chunks in ${p.seconds.toFixed(2)} s = ${p.chunksPerSecond.toFixed(0)} chunks/s, bare ${b.chunksPerSecond.toFixed(0)} chunks/s\n`,
    );
  }
  const platform = runs.filter((r) => r.side === 'platform');
  const bare = runs.filter((r) => r.side === 'bare');
  const pMed = median(platform.map((r) => r.chunksPerSecond));
  const bMed = median(bare.map((r) => r.chunksPerSecond));
  const chunks = platform[0]!.chunks;
  const f = (n: number) => n.toFixed(0);
  console.log('');
  console.log(
    `rag ingestion, ${texts.length} documents of ~${CHUNKS_PER_DOC} chunks (${chunks} chunks, ${DIMENSIONS} dimensions) per run, median of ${ROUNDS} runs ` +
      `(plan ${plan}; worker concurrency ${concurrency}, the bare loop ${concurrency} batches of ${EMBED_BATCH} in flight):`,
  );
  console.log(`  ${''.padEnd(34)}  ${'chunks/s'.padStart(8)}  ${'s per run'.padStart(9)}  chunks/s per run`);
  console.log(`  ${'platform (ingest API + worker)'.padEnd(34)}  ${f(pMed).padStart(8)}  ${median(platform.map((r) => r.seconds)).toFixed(2).padStart(9)}  ${platform.map((r) => f(r.chunksPerSecond)).join(' / ')}`);
  console.log(`  ${'bare loop (chunk + embed + insert)'.padEnd(34)}  ${f(bMed).padStart(8)}  ${median(bare.map((r) => r.seconds)).toFixed(2).padStart(9)}  ${bare.map((r) => f(r.chunksPerSecond)).join(' / ')}`);
  console.log(`  ${'ratio platform/bare'.padEnd(34)}  ${`${(pMed / bMed).toFixed(2)}x`.padStart(8)}`);
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(import.meta.dirname, 'results', 'rag-ingest.json'),
    JSON.stringify({ date: new Date().toISOString(), plan, rounds: ROUNDS, documents: texts.length, chunks, worker_concurrency: concurrency, platform: pMed, bare: bMed, ratio: pMed / bMed, runs }, null, 2) + '\n',
  );
}

// ---- 2. query

/** BENCH_RAG_SEED_CHUNKS chunk texts of ~380 words (about a 512-token chunk), embedded on the fake, in one document. */
async function seed(appDb: string, upstreamUrl: string, upstreamKey: string, collectionId: string): Promise<{ documentId: string; texts: string[] }> {
  const agent = new http.Agent({ keepAlive: true });
  const t0 = performance.now();
  const texts = Array.from({ length: SEED_CHUNKS }, (_, i) => prose(i + 1, 380));
  try {
    return await withClient(appDb, async (c) => {
      const metadata = JSON.stringify({ source: 'bench-seed' });
      const { rows } = await c.query<{ id: string }>(
        `insert into svc_rag.documents (collection_id, filename, status, chunk_count, metadata) values ($1, 'bench-seed.txt', 'ready', $2, $3) returning id`,
        [collectionId, SEED_CHUNKS, metadata],
      );
      const documentId = rows[0]!.id;
      // Loading first and building the HNSW index after is much faster than inserting into it row by row.
      await c.query('drop index svc_rag.chunks_embedding_idx');
      let pending: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < texts.length; i += SEED_INSERT_ROWS) {
        const part = texts.slice(i, i + SEED_INSERT_ROWS);
        const vectors: number[][] = [];
        for (let j = 0; j < part.length; j += EMBED_BATCH) vectors.push(...(await embedDirect(agent, upstreamUrl, upstreamKey, part.slice(j, j + EMBED_BATCH))));
        await pending;
        pending = c.query(
          `insert into svc_rag.chunks (document_id, chunk_index, collection_id, text, metadata, embedding)
           select $1, idx, $2, t, $3::jsonb, v::vector from unnest($4::int[], $5::text[], $6::text[]) as u(idx, t, v)`,
          [documentId, collectionId, metadata, part.map((_, j) => i + j), part, vectors.map(vectorLiteral)],
        );
      }
      await pending;
      process.stderr.write(`rag: ${SEED_CHUNKS} chunks embedded and loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s; building the HNSW index\n`);
      await c.query(`set maintenance_work_mem = '512MB'`);
      // The same definition as src/rag/store.sql.ts.
      await c.query('create index chunks_embedding_idx on svc_rag.chunks using hnsw (embedding vector_cosine_ops)');
      await c.query('vacuum analyze svc_rag.chunks');
      await c.query('vacuum analyze svc_rag.documents');
      process.stderr.write(`rag: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      return { documentId, texts };
    });
  } finally {
    agent.destroy();
  }
}

export async function ragScenario(ctx: BenchContext): Promise<Pair[]> {
  if (!upstream) throw new Error('rag: the fake upstream was not started before the platform (run.ts calls sharedAiUpstream)');
  const aiEnv = await upstream;
  const upstreamUrl = aiEnv.SVC_AI_BASE_URL!;
  const upstreamKey = aiEnv.SVC_AI_API_KEY!;
  checkSqlCopy();

  // The query's app; the plan is the account's, so it holds for the ingestion app too. Ingestion is measured first,
  // in an app (a database) of its own, so its chunks never share the query collection's index.
  const { appId, serviceKey } = await createApp(ctx, 'Bench RAG');
  const plan = await setPlan(ctx, appId);
  await ingestionScenario(ctx, upstreamUrl, upstreamKey, plan);

  // The query collection: created through the API (the svc_rag schema with it), seeded directly.
  const appDb = `${CLUSTER_URL}/${ctx.appPrefix}${appId}`;
  const collection = 'bench';
  const collectionId = await createCollection(ctx, appId, serviceKey, collection);
  const { documentId, texts } = await seed(appDb, upstreamUrl, upstreamKey, collectionId);
  // A question made of words of one chunk: its nearest neighbours are the chunks that share most of them.
  const query = texts[4242 % texts.length]!.replace(/[.\n]/g, ' ').split(/\s+/).filter(Boolean).slice(0, 8).join(' ').toLowerCase();
  const body = JSON.stringify({ query, topK: TOP_K });

  // The query plan both sides get, printed: with 10,000 chunks an HNSW index scan (with a small BENCH_RAG_SEED_CHUNKS
  // Postgres may rather compute every distance and sort).
  const [vector] = await embedDirect(new http.Agent(), upstreamUrl, upstreamKey, [query]);
  const queryPlan = await withClient(appDb, async (c) => {
    await c.query('begin');
    await c.query(setLocal(TOP_K));
    const { rows } = await c.query<{ 'QUERY PLAN': string }>(`explain ${QUERY_SQL}`, [vectorLiteral(vector!), collectionId, null, '{}', -1, TOP_K]);
    await c.query('commit');
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  const hnsw = queryPlan.includes('chunks_embedding_idx');
  process.stderr.write(`rag: the query's plan (${hnsw ? 'HNSW index scan' : 'NO HNSW index: every vector compared'}):\n${queryPlan.replace(/'\[[^\]]*\]'::vector/g, '$1').replace(/^/gm, '  ')}\n`);

  const queryPath = `/v1/${appId}/rag/collections/${collection}/query`;
  const baseline = await startBaseline(path.join('bench', 'rag.ts'), {
    DATABASE_URL: appDb,
    POOL_SIZE: String(ctx.appPoolSize),
    UPSTREAM_URL: upstreamUrl,
    UPSTREAM_KEY: upstreamKey,
    QUERY_PATH: queryPath,
    COLLECTION_ID: collectionId,
  });
  ctx.cleanups.push(baseline.child.stop);

  // Pre-flight: both answer the same topK chunks of the seeded document.
  const answers = [];
  for (const url of [ctx.platformUrl, baseline.url]) {
    const res = await fetch(url + queryPath, { method: 'POST', headers: { Authorization: `Bearer ${serviceKey}`, 'Content-Type': 'application/json' }, body });
    const json = (await res.json()) as { chunks?: Array<{ text: string; documentId: string }> };
    if (res.status !== 200 || json.chunks?.length !== TOP_K || json.chunks.some((c) => c.documentId !== documentId)) {
      throw new Error(`rag pre-flight: ${url} answered ${res.status}: ${JSON.stringify(json).slice(0, 500)}`);
    }
    answers.push(json);
  }
  if (!isDeepStrictEqual(answers[0], answers[1])) throw new Error('rag pre-flight: the platform and the baseline answer different chunks');
  const top = JSON.stringify(answers[0]!.chunks![0]!.text).slice(0, 60);
  process.stderr.write(`rag: query "${query}"; top chunk ${top}...\n`);

  const target = (url: string): Target => ({
    url: url + queryPath,
    method: 'POST',
    headers: { authorization: `Bearer ${serviceKey}`, 'content-type': 'application/json' },
    body,
    expect: [`"documentId":"${documentId}"`, `"text":${top}`],
    forbid: ['"error"'],
  });
  return [{ label: 'rag POST /v1/{app}/rag/.../query topK 5', baselineName: 'node:http + fake embed + pg', platform: target(ctx.platformUrl), baseline: target(baseline.url) }];
}
