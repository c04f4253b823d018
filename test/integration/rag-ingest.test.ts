// The rag_ingest job's work run directly (no worker in this platform): safe to run twice and at once, a retried
// job never duplicates chunks, failures that retrying cannot fix fail the document at once, and transient ones only
// on the last attempt. Hostile documents end ready or failed with a clear message, and never hold the event loop.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDocxBomb } from '../helpers/documents.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { startFakeOpenAIProcess, type FakeOpenAIProcess } from '../helpers/fake-openai-process.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { AppRecord } from '../../src/apps/types.ts';
import { countTokens } from '../../src/rag/chunk.ts';
import { INLINE_CHARS } from '../../src/rag/document-process.ts';
import { ingestDocument } from '../../src/rag/ingest.ts';

// The upstream runs in a process of its own: its work would count in this process's event-loop delays.
let fake: FakeOpenAIProcess;
let p: TestPlatform;
let app: AppRecord;

beforeAll(async () => {
  fake = await startFakeOpenAIProcess();
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-rag', SVC_AI_TIMEOUT_MS: '2000' });
  const created = await p.api('POST', '/init', { body: { name: 'rag ingest' } });
  app = (await p.services.apps.get(created.body.app_id))!;
  await p.sql(`update accounts set plan = 'enterprise'`);
  await p.services.rag.createCollection(app, { name: 'c', accessMode: 'private', chunkSize: 32, chunkOverlap: 4 });
  await p.services.rag.createCollection(app, { name: 'big', accessMode: 'private', chunkSize: 512, chunkOverlap: 64 });
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

const who = () => ({ app, endUserId: null });
const LONG = Array.from({ length: 400 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`).join(' ');

async function state(documentId: string) {
  const db = p.services.rag.db(app.id);
  const doc = (await db.query<{ status: string; chunk_count: number; error_message: string | null }>(`select status, chunk_count, error_message from svc_rag.documents where id = $1`, [documentId])).rows[0];
  const chunks = (await db.query<{ n: number; distinct_n: number }>(`select count(*)::int as n, count(distinct chunk_index)::int as distinct_n from svc_rag.chunks where document_id = $1`, [documentId])).rows[0]!;
  return { ...doc, chunks };
}

describe('rag ingestion job', () => {
  it('three runs at once and a rerun afterwards leave exactly one set of chunks', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: LONG });
    const attempt = { number: 1, max: 5 };
    await Promise.all([1, 2, 3].map(() => p.services.rag.process(app.id, documentId, attempt)));
    await p.services.rag.process(app.id, documentId, attempt);
    const s = await state(documentId);
    expect(s.status).toBe('ready');
    expect(s.chunk_count).toBeGreaterThan(96);
    expect(s.chunks).toEqual({ n: s.chunk_count, distinct_n: s.chunk_count });
  });

  it('a run that dies before its chunks are written (the upstream hangs) leaves none; the retry writes every chunk once', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: LONG });
    const db = p.services.rag.db(app.id);
    // The collection's model is switched to one the fake never answers for the first run only.
    await db.query(`update svc_rag.collections set embedding_model = 'fake/hang' where name = 'c'`);
    await expect(p.services.rag.process(app.id, documentId, { number: 1, max: 5 })).rejects.toMatchObject({ status: 502 });
    expect(await state(documentId)).toMatchObject({ status: 'processing', chunks: { n: 0, distinct_n: 0 } });
    await db.query(`update svc_rag.collections set embedding_model = 'openai/text-embedding-3-small' where name = 'c'`);
    await p.services.rag.process(app.id, documentId, { number: 2, max: 5 });
    const s = await state(documentId);
    expect(s.status).toBe('ready');
    expect(s.chunks.n).toBe(s.chunk_count);
  });

  it('an upstream rate limit (429) is retried, not a failure of the document', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: 'short text' });
    const db = p.services.rag.db(app.id);
    await db.query(`update svc_rag.collections set embedding_model = 'fake/error-429' where name = 'c'`);
    try {
      await expect(p.services.rag.process(app.id, documentId, { number: 1, max: 5 })).rejects.toMatchObject({ status: 429 });
    } finally {
      await db.query(`update svc_rag.collections set embedding_model = 'openai/text-embedding-3-small' where name = 'c'`);
    }
    expect(await state(documentId)).toMatchObject({ status: 'processing' });
    await p.services.rag.process(app.id, documentId, { number: 2, max: 5 });
    expect(await state(documentId)).toMatchObject({ status: 'ready' });
  });

  it('a transient failure on the last attempt fails the document with the reason', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: 'short text' });
    const db = p.services.rag.db(app.id);
    await db.query(`update svc_rag.collections set embedding_model = 'fake/error-500' where name = 'c'`);
    await p.services.rag.process(app.id, documentId, { number: 5, max: 5 });
    await db.query(`update svc_rag.collections set embedding_model = 'openai/text-embedding-3-small' where name = 'c'`);
    expect(await state(documentId)).toMatchObject({ status: 'failed', error_message: expect.stringContaining('answered 500'), chunks: { n: 0 } });
  });

  it('a refusal (a model the app does not allow) fails the document on the first attempt, with the reason', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: 'short text' });
    await p.services.aiSettings.update(app.id, { allowedModels: ['openai/gpt-4o'] });
    try {
      await p.services.rag.process(app.id, documentId, { number: 1, max: 5 });
    } finally {
      await p.services.aiSettings.update(app.id, { allowedModels: null });
    }
    expect(await state(documentId)).toMatchObject({ status: 'failed', error_message: expect.stringContaining('allowedModels'), chunks: { n: 0 } });
  });

  it('a document deleted while its job waits is skipped', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'c', { text: 'to be deleted' });
    await p.services.rag.deleteDocument(who(), 'c', documentId);
    await p.services.rag.process(app.id, documentId, { number: 1, max: 5 });
    expect(await state(documentId)).toEqual({ chunks: { n: 0, distinct_n: 0 } });
    const jobs = await p.sql(`select count(*)::int as n from graphile_worker.jobs where key = $1`, [`rag:${documentId}`]);
    expect(jobs).toEqual([{ n: 0 }]);
  });
});

describe('hostile documents: a clear outcome, and the event loop never held for 200 ms', () => {
  const attempt = { number: 1, max: 5 };
  const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  const TIME_LIMIT =
    'The document could not be processed: extracting and chunking its text took longer than 50 ms (it is too large or too complex); split it';
  const OUT_OF_MEMORY =
    'The document could not be processed: extracting and chunking its text needs more than 512 MB of memory (it is too large or too complex); split it';

  /** Stores a file of the app and makes a pending document of it (in collection big, as the hostile texts). */
  async function ingestFile(filename: string, contentType: string, bytes: Buffer): Promise<string> {
    const { objectId } = await p.services.storage.uploadInline(app.id, { kind: 'service' }, { filename, contentType }, bytes);
    return (await p.services.rag.ingest(who(), 'big', { storage_object_id: objectId })).documentId;
  }

  const LARGE = Array.from({ length: 5000 }, (_, i) => `Section ${i}. ${'Internationalization considerations. '.repeat(10)}`).join('\n\n');

  /** Runs the job for the document (with a time limit of timeoutMs when given) and the loop's longest delay. */
  async function run(label: string, documentId: string, timeoutMs?: number): Promise<number> {
    const deps = { ...p.services, maxFileBytes: p.services.config.storage.maxFileBytes, log: pino({ level: 'silent' }), documentTimeoutMs: timeoutMs };
    const started = performance.now();
    const { maxDelayMs } = await withEventLoopDelay(() => ingestDocument(deps, app.id, documentId, attempt));
    console.log(`${label}: ${(performance.now() - started).toFixed(0)} ms, event loop max delay ${maxDelayMs.toFixed(0)} ms`);
    return maxDelayMs;
  }

  beforeAll(() => {
    // The tokenizer's one-time load on this thread (~0.2 s) is not a cost of any input.
    countTokens('warm up');
    expect(LARGE.length).toBeGreaterThan(1_800_000);
  });

  const texts: [string, string][] = [
    ['60 KB, one line of spaces before a letter', `${' '.repeat(60_000)}x`],
    ['60 KB, many such lines', `Title.\n${`${' '.repeat(10_000)}x\n`.repeat(6)}`],
    ['60 KB, tabs', `Title.\n${'\t'.repeat(60_000)}x`],
    ['60 KB, spaces and tabs between words', `a${' \t'.repeat(30_000)}b`],
    [`${INLINE_CHARS} characters (chunked inline), spaces before a letter`, `${' '.repeat(INLINE_CHARS - 1)}x`],
    [`${INLINE_CHARS} characters (chunked inline), many such lines`, `${' '.repeat(1000)}x\n`.repeat(8).slice(0, INLINE_CHARS)],
    [`${INLINE_CHARS} characters (chunked inline), runs of CJK full stops`, `${'。'.repeat(125)}a`.repeat(64).slice(0, INLINE_CHARS)],
  ];
  it.each(texts)('a text given inline, %s: ready', async (label, text) => {
    const { documentId } = await p.services.rag.ingest(who(), 'big', { text });
    const delay = await run(`text: ${label}`, documentId);
    expect(await state(documentId)).toMatchObject({ status: 'ready', error_message: null });
    expect(delay).toBeLessThan(200);
  });

  it('a 60 KB text of zero-width and blank characters only: failed, with no text', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'big', { text: `${'\u200b '.repeat(30_000)}\u200b` });
    const delay = await run('text: 60 KB of zero-width spaces', documentId);
    expect(await state(documentId)).toMatchObject({ status: 'failed', error_message: 'The document contains no text.', chunks: { n: 0 } });
    expect(delay).toBeLessThan(200);
  });

  it('a 150 KB stored text file of spaces before a letter: ready', async () => {
    const documentId = await ingestFile('spaces.txt', 'text/plain', Buffer.from(`Intro.\n${' '.repeat(150_000)}x\n${' '.repeat(150)}y`));
    const delay = await run('file: 150 KB of spaces before a letter', documentId);
    expect(await state(documentId)).toMatchObject({ status: 'ready', error_message: null });
    expect(delay).toBeLessThan(200);
  });

  it('a 6 KB JSON file of 3,000 nested arrays: ready, its indentation capped', async () => {
    const documentId = await ingestFile('deep.json', 'application/json', Buffer.from('['.repeat(3000) + ']'.repeat(3000)));
    const delay = await run('file: 6 KB of nested JSON arrays', documentId);
    const s = await state(documentId);
    expect(s).toMatchObject({ status: 'ready', error_message: null });
    expect(s.chunk_count).toBeGreaterThan(0);
    expect(delay).toBeLessThan(200);
  });

  it('a document over the time limit: failed, with the limit in the message', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'big', { text: LARGE });
    const delay = await run('text: 1.9 MB with a 50 ms time limit', documentId, 50);
    expect(await state(documentId)).toMatchObject({ status: 'failed', error_message: TIME_LIMIT, chunks: { n: 0 } });
    expect(delay).toBeLessThan(200);
  });

  it('a DOCX zip bomb (300 MB of paragraphs): failed, out of memory, and this process goes on', async () => {
    const bomb = await makeDocxBomb(300);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const documentId = await ingestFile('bomb.docx', DOCX, bomb);
    const delay = await run('file: DOCX zip bomb', documentId);
    expect(await state(documentId)).toMatchObject({ status: 'failed', error_message: OUT_OF_MEMORY, chunks: { n: 0 } });
    expect(delay).toBeLessThan(200);
  }, 120_000);

  it('a malformed PDF: failed, with the parser message', async () => {
    const documentId = await ingestFile('bad.pdf', 'application/pdf', Buffer.from('%PDF-1.4\nthis is not really a PDF\n'));
    const delay = await run('file: malformed PDF', documentId);
    expect(await state(documentId)).toMatchObject({
      status: 'failed',
      error_message: 'The PDF could not be read (it is damaged or encrypted): Invalid PDF structure.',
    });
    expect(delay).toBeLessThan(200);
  });

  it('a 1.9 MB text (half a second of chunking) is chunked off the event loop within the time limit: ready', async () => {
    const { documentId } = await p.services.rag.ingest(who(), 'big', { text: LARGE });
    const delay = await run('text: 1.9 MB', documentId, 30_000);
    const s = await state(documentId);
    expect(s).toMatchObject({ status: 'ready', error_message: null });
    expect(s.chunk_count).toBeGreaterThan(100);
    expect(delay).toBeLessThan(200);
  });
});
