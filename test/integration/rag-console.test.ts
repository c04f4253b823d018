// What the console's RAG page needs of the API, for every client: a collection's documents a page at a time
// (before / next_before, REST's bare array with the cursor in X-Next-Before), and a synthesized answer, which spends
// the account's AI credits, refused to a platform caller below developer while plain retrieval stays a viewer's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { AppRecord } from '../../src/apps/types.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let app: AppRecord;
let viewerKey: string;
let developerKey: string;

const CURSOR = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z~[0-9a-f-]{36}$/;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-rag-console' });
  const created = await p.api('POST', '/init', { body: { name: 'rag console' } });
  app = (await p.services.apps.get(created.body.app_id))!;
  await p.sql(`update accounts set plan = 'enterprise'`);
  await p.services.rag.createCollection(app, { name: 'docs', accessMode: 'private', chunkSize: 512, chunkOverlap: 64 });
  const mint = async (role: string) => (await p.api('POST', '/dashboard/keys', { body: { name: role, role } })).body.key as string;
  [viewerKey, developerKey] = [await mint('viewer'), await mint('developer')];
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

const documents = (query: string, key?: string) => p.api('GET', `/v1/${app.id}/rag/collections/docs/documents${query}`, { key });

describe('rag documents, a page at a time', () => {
  it('pages oldest first with before / next_before; REST answers a bare array with the cursor in X-Next-Before', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await p.services.rag.ingest({ app, endUserId: null }, 'docs', { text: `document ${i}`, filename: `d${i}.txt` })).documentId);
    // Two documents with the same timestamp at a page's edge are neither repeated nor skipped.
    await p.services.rag.db(app.id).query(`update svc_rag.documents set created_at = (select created_at from svc_rag.documents where id = $1) where id = $2`, [ids[1], ids[2]]);
    const ordered = (await documents('')).body.map((d: { id: string }) => d.id);
    expect(ordered).toHaveLength(5);
    expect(new Set(ordered)).toEqual(new Set(ids));

    const seen: string[] = [];
    let before: string | null = null;
    for (let page = 0; page < 3; page++) {
      const res = await documents(`?limit=2${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.map((d: { id: string }) => d.id));
      before = res.headers.get('x-next-before');
      if (page < 2) expect(before).toMatch(CURSOR);
    }
    expect(before).toBeNull();
    expect(seen).toEqual(ordered);

    // Over MCP-shaped output (the tool's own result), the cursor is next_before.
    const out = await p.services.rag.listDocuments({ app, endUserId: null }, 'docs', { limit: 4 });
    expect([out.documents.length, out.next_before]).toEqual([4, expect.stringMatching(CURSOR)]);
    expect((await p.services.rag.listDocuments({ app, endUserId: null }, 'docs', { limit: 1000 })).next_before).toBeNull();
  });

  it('refuses a cursor it did not make and a limit out of range with 400 naming the field', async () => {
    for (const [query, field] of [
      ['?before=2026-01-01', 'before'],
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
    ]) {
      const res = await documents(query!);
      expect([query, res.status, res.body.error.code, res.body.error.details[0].path]).toEqual([query, 400, 'VALIDATION_FAILED', field]);
    }
  });
});

describe('rag_query and the roles of platform callers', () => {
  const query = (key: string, synthesize: boolean) =>
    p.api('POST', `/v1/${app.id}/rag/collections/docs/query`, { key, body: { query: 'which document?', topK: 2, synthesize } });

  it('a viewer retrieves, but a synthesized answer (AI credits) needs developer: 403 FORBIDDEN_ROLE', async () => {
    const retrieved = await query(viewerKey, false);
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.answer).toBeUndefined();
    const calls = fake.requests.length;
    const refused = await query(viewerKey, true);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN_ROLE', details: { required_role: 'developer', role: 'viewer' } });
    // Refused before anything reached the upstream.
    expect(fake.requests.length).toBe(calls);
  });

  it('a developer and a service key get the answer', async () => {
    const developer = await query(developerKey, true);
    expect(developer.status).toBe(200);
    expect(typeof developer.body.answer).toBe('string');
    const created = await p.api('POST', '/init', { body: { name: 'rag console 2' } });
    const other = (await p.services.apps.get(created.body.app_id))!;
    await p.services.rag.createCollection(other, { name: 'docs', accessMode: 'private', chunkSize: 512, chunkOverlap: 64 });
    const service = await p.api('POST', `/v1/${other.id}/rag/collections/docs/query`, { key: created.body.service_key.key, body: { query: 'q', synthesize: true } });
    expect(service.status).toBe(200);
    expect(typeof service.body.answer).toBe('string');
  });
});

describe('rag_query and a soft-locked account', () => {
  const query = (synthesize: boolean) => p.api('POST', `/v1/${app.id}/rag/collections/docs/query`, { key: developerKey, body: { query: 'which document?', topK: 2, synthesize } });

  beforeAll(async () => {
    await p.sql(`update accounts set status = 'soft_locked', status_reason = 'over the free plan''s AI credit' where id = $1`, [app.account_id]);
    p.services.billing.gate.forget(app.account_id);
  });
  afterAll(async () => {
    await p.sql(`update accounts set status = 'active', status_reason = null where id = $1`, [app.account_id]);
    p.services.billing.gate.forget(app.account_id);
  });

  it('refuses a synthesized answer as the gateway refuses a chat (402 ACCOUNT_SOFT_LOCKED), before the upstream; retrieval still works', async () => {
    const calls = fake.requests.length;
    const refused = await query(true);
    const chat = await p.api('POST', `/v1/${app.id}/chat/completions`, { key: developerKey, body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect([refused.status, refused.body.error?.code]).toEqual([402, 'ACCOUNT_SOFT_LOCKED']);
    // The gateway answers in OpenAI's shape, its code in lower case.
    expect([chat.status, chat.body.error?.code]).toEqual([402, 'account_soft_locked']);
    expect(fake.requests.length).toBe(calls);
    const retrieved = await query(false);
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.answer).toBeUndefined();
  });
});
