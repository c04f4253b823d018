// The rag_ingest job's work run directly (no worker in this platform): safe to run twice and at once, a retried
// job never duplicates chunks, failures that retrying cannot fix fail the document at once, and transient ones only
// on the last attempt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { AppRecord } from '../../src/apps/types.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let app: AppRecord;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-rag', SVC_AI_TIMEOUT_MS: '2000' });
  const created = await p.api('POST', '/init', { body: { name: 'rag ingest' } });
  app = (await p.services.apps.get(created.body.app_id))!;
  await p.sql(`update accounts set plan = 'enterprise'`);
  await p.services.rag.createCollection(app, { name: 'c', accessMode: 'private', chunkSize: 32, chunkOverlap: 4 });
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

const who = () => ({ app, endUserId: null });
const LONG = Array.from({ length: 400 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`).join(' ');

async function state(documentId: string) {
  const db = await p.services.rag.db(app.id);
  const doc = (await db.query(`select status, chunk_count, error_message from svc_rag.documents where id = $1`, [documentId])).rows[0];
  const chunks = (await db.query(`select count(*)::int as n, count(distinct chunk_index)::int as distinct_n from svc_rag.chunks where document_id = $1`, [documentId])).rows[0];
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
    const db = await p.services.rag.db(app.id);
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
    const db = await p.services.rag.db(app.id);
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
    const db = await p.services.rag.db(app.id);
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
