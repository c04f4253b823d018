// RAG end to end: the server as `npm start` runs it (API and worker in one process), a fake OpenAI-compatible
// upstream for embeddings and answers, an agent over MCP and an app over REST.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';
import { makeDocx, makePdf } from '../helpers/documents.ts';

let fake: FakeOpenAI;
let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;
let serviceKey: string;

const api = (path: string, opts: { method?: string; key?: string | null; body?: unknown } = {}) =>
  request(server.url, `/v1/${appId}/rag${path}`, { method: opts.method, key: opts.key === null ? undefined : (opts.key ?? serviceKey), body: opts.body });

async function appQuery(text: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: databaseUrl(`${server.appDbPrefix}${appId}`) });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function waitForDocument(collection: string, documentId: string, key = serviceKey): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await api(`/collections/${collection}/documents/${documentId}`, { key });
    expect(res.status).toBe(200);
    if (res.json.status === 'ready' || res.json.status === 'failed') return res.json;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`document ${documentId} never finished`);
}

async function ingestText(collection: string, text: string, metadata: Record<string, unknown> = {}, key = serviceKey): Promise<any> {
  const res = await api(`/collections/${collection}/ingest`, { method: 'POST', key, body: { text, metadata } });
  expect(res.status).toBe(202);
  return waitForDocument(collection, res.json.documentId, key);
}

async function endUser(email: string): Promise<string> {
  const res = await request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email, password: 'correct horse battery staple' } });
  expect(res.status).toBe(201);
  return res.json.access_token;
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  server = await spawnServer({ SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-rag' });
  mcp = await connectMcp(server.url, server.platformKey);
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'RAG E2E' } });
  appId = created.json.app_id;
  serviceKey = created.json.service_key.key;
  const control = new pg.Client({ connectionString: databaseUrl(server.controlDb) });
  await control.connect();
  await control.query(`update accounts set plan = 'enterprise'`);
  await control.end();
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
  await fake?.close();
});

describe('collections', () => {
  it('create (defaults), duplicate 409, bad names 400, list, get with counts, delete 204 then 404', async () => {
    const created = await api('/collections', { method: 'POST', body: { name: 'docs-1', description: 'Manuals' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.any(String),
      name: 'docs-1',
      description: 'Manuals',
      accessMode: 'private',
      chunkSize: 512,
      chunkOverlap: 64,
      embeddingModel: 'openai/text-embedding-3-small',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const dup = await api('/collections', { method: 'POST', body: { name: 'docs-1' } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe('CONFLICT');
    for (const name of ['Docs', 'a b', '', 'x'.repeat(101)]) {
      const bad = await api('/collections', { method: 'POST', body: { name } });
      expect(bad.status, name).toBe(400);
      expect(bad.json.error.code).toBe('VALIDATION_FAILED');
    }
    const overlap = await api('/collections', { method: 'POST', body: { name: 'bad-overlap', chunkSize: 100, chunkOverlap: 100 } });
    expect(overlap.status).toBe(400);
    const list = await api('/collections');
    expect(list.json.map((c: { name: string }) => c.name)).toContain('docs-1');
    const details = await api('/collections/docs-1');
    expect(details.json).toMatchObject({ name: 'docs-1', documentCount: 0, chunkCount: 0 });
    expect((await api('/collections/docs-1', { method: 'DELETE' })).status).toBe(204);
    expect((await api('/collections/docs-1')).status).toBe(404);
    expect((await api('/collections/docs-1', { method: 'DELETE' })).status).toBe(404);
  });
});

describe('ingestion and query', () => {
  it('ingests text, queries with topK, threshold and filter, synthesizes a cited answer, deletes chunks with the document', async () => {
    await api('/collections', { method: 'POST', body: { name: 'animals', chunkSize: 64, chunkOverlap: 8 } });
    const cats = await ingestText('animals', 'Cats are small furry animals. Cats purr and chase mice.', { topic: 'cats' });
    expect(cats).toMatchObject({ status: 'ready', chunkCount: 1, errorMessage: null, metadata: { topic: 'cats' } });
    const dogs = await ingestText('animals', 'Dogs are loyal animals. Dogs bark at strangers and fetch sticks.', { topic: 'dogs' });
    expect(dogs.status).toBe('ready');

    const q = await api('/collections/animals/query', { method: 'POST', body: { query: 'why do cats purr', topK: 1 } });
    expect(q.status).toBe(200);
    expect(q.json.chunks).toEqual([{ text: 'Cats are small furry animals. Cats purr and chase mice.', score: expect.any(Number), documentId: cats.id, metadata: { topic: 'cats' } }]);
    const both = await api('/collections/animals/query', { method: 'POST', body: { query: 'animals' } });
    expect(both.json.chunks).toHaveLength(2);
    expect(both.json.chunks[0].score).toBeGreaterThanOrEqual(both.json.chunks[1].score);
    const filtered = await api('/collections/animals/query', { method: 'POST', body: { query: 'cats purr', filter: { topic: 'dogs' } } });
    expect(filtered.json.chunks.map((c: { documentId: string }) => c.documentId)).toEqual([dogs.id]);
    const strict = await api('/collections/animals/query', { method: 'POST', body: { query: 'cats purr', threshold: 0.99 } });
    expect(strict.json.chunks).toEqual([]);

    fake.reset();
    const answered = await api('/collections/animals/query', { method: 'POST', body: { query: 'Do cats purr?', topK: 1, synthesize: true, model: 'openai/gpt-4o' } });
    expect(answered.status).toBe(200);
    expect(answered.json.model).toBe('openai/gpt-4o');
    expect(answered.json.answer).toContain('[1]');
    const sent = fake.requests.find((r) => r.path === '/chat/completions')!.body;
    expect(sent.messages[0].content).toContain('Cite the sources you use as [n]');
    expect(sent.messages[1].content).toContain('[1] Cats are small furry animals.');

    fake.reset();
    const unknown = await api('/collections/animals/query', { method: 'POST', body: { query: 'Do cats purr?', threshold: 0.999, synthesize: true } });
    expect(unknown.json).toEqual({ chunks: [], answer: expect.stringContaining('I do not know'), model: 'openai/gpt-4o-mini' });
    expect(fake.requests.filter((r) => r.path === '/chat/completions')).toHaveLength(0);

    expect(await appQuery(`select count(*)::int as n from svc_rag.chunks where document_id = $1`, [cats.id])).toEqual([{ n: 1 }]);
    expect((await api(`/collections/animals/documents/${cats.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await appQuery(`select count(*)::int as n from svc_rag.chunks where document_id = $1`, [cats.id])).toEqual([{ n: 0 }]);
    expect((await api(`/collections/animals/documents/${cats.id}`)).status).toBe(404);
  });

  it('a collection known from an earlier query is checked in each query: changed under the platform, deleted or made anew, it is read again', async () => {
    await api('/collections', { method: 'POST', body: { name: 'kept', accessMode: 'shared' } });
    const first = await ingestText('kept', 'Owls hunt at night and sleep by day.');
    const alice = await endUser('alice-kept@example.com');
    const ask = (key = serviceKey) => api('/collections/kept/query', { method: 'POST', key, body: { query: 'owls at night' } });
    expect((await ask(alice)).json.chunks.map((c: { documentId: string }) => c.documentId)).toEqual([first.id]);
    // Made private by a hand in the database (a restore, another process's change): the next end-user query is refused.
    await appQuery(`update svc_rag.collections set access_mode = 'private' where name = 'kept'`);
    const refused = await ask(alice);
    expect([refused.status, refused.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await ask()).status).toBe(200);
    expect((await api('/collections/kept', { method: 'DELETE' })).status).toBe(204);
    const gone = await ask();
    expect([gone.status, gone.json.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
    await api('/collections', { method: 'POST', body: { name: 'kept' } });
    const second = await ingestText('kept', 'Herons wade in shallow water at night.');
    expect((await ask()).json.chunks.map((c: { documentId: string }) => c.documentId)).toEqual([second.id]);
  });

  it('ingests stored files (Markdown, HTML, JSON, PDF, DOCX); a corrupt PDF or an image fails the document with a message', async () => {
    await api('/collections', { method: 'POST', body: { name: 'files' } });
    const upload = async (filename: string, contentType: string, content: string, encoding = 'utf8') => {
      const res = await request(server.url, `/storage/${appId}/upload/inline`, { method: 'POST', key: serviceKey, body: { filename, contentType, content, encoding } });
      expect(res.status).toBe(201);
      return res.json.objectId as string;
    };
    const cases: [string, string, string, string?][] = [
      ['guide.md', 'text/markdown', '# Setup\n\nInstall the widget with npm.\n\n## Usage\n\nCall widget().'],
      ['page.html', 'text/html', '<html><head><script>var hidden = 1;</script></head><body><h1>Hello</h1><p>Visible paragraph.</p></body></html>'],
      ['data.json', 'application/json', JSON.stringify({ product: 'widget', price: 12 })],
      ['report.pdf', 'application/pdf', makePdf([['Quarterly report: revenue grew.'], ['Second page about costs.']]).toString('base64'), 'base64'],
      [
        'memo.docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        (await makeDocx(['Memo to staff.', 'The office closes at six.'])).toString('base64'),
        'base64',
      ],
    ];
    for (const [filename, type, content, encoding] of cases) {
      const objectId = await upload(filename, type, content, encoding);
      const res = await api('/collections/files/ingest', { method: 'POST', body: { storage_object_id: objectId } });
      expect(res.status).toBe(202);
      const doc = await waitForDocument('files', res.json.documentId);
      expect(doc, filename).toMatchObject({ status: 'ready', filename, chunkCount: 1 });
    }
    const html = await api('/collections/files/query', { method: 'POST', body: { query: 'visible paragraph', topK: 1 } });
    expect(html.json.chunks[0].text).toContain('Visible paragraph.');
    expect(html.json.chunks[0].text).not.toContain('hidden');
    const pdfText = await api('/collections/files/query', { method: 'POST', body: { query: 'revenue grew costs', topK: 1 } });
    expect(pdfText.json.chunks[0].text).toBe('Quarterly report: revenue grew.\n\nSecond page about costs.');
    const docxText = await api('/collections/files/query', { method: 'POST', body: { query: 'office closes', topK: 1 } });
    expect(docxText.json.chunks[0].text).toContain('The office closes at six.');

    const pdf = await upload('broken.pdf', 'application/pdf', Buffer.from('%PDF-1.7 this is not really a pdf').toString('base64'), 'base64');
    const failed = await waitForDocument('files', (await api('/collections/files/ingest', { method: 'POST', body: { storage_object_id: pdf } })).json.documentId);
    expect(failed).toMatchObject({ status: 'failed', chunkCount: 0, errorMessage: expect.stringContaining('PDF') });
    const png = await upload('pic.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), 'base64');
    const refused = await waitForDocument('files', (await api('/collections/files/ingest', { method: 'POST', body: { storage_object_id: png } })).json.documentId);
    expect(refused).toMatchObject({ status: 'failed', errorMessage: expect.stringContaining('image/png') });

    const bigMetadata = await api('/collections/files/ingest', { method: 'POST', body: { text: 'x', metadata: { blob: 'm'.repeat(9000) } } });
    expect(bigMetadata.status).toBe(400);
    expect(bigMetadata.json.error.message).toContain('metadata');
    const neither = await api('/collections/files/ingest', { method: 'POST', body: { filename: 'x' } });
    expect(neither.status).toBe(400);
    const missing = await api('/collections/files/ingest', { method: 'POST', body: { storage_object_id: '00000000-0000-4000-8000-000000000000' } });
    expect(missing.status).toBe(404);
  });
});

describe('access modes', () => {
  it('private: keys only; shared: end users query but do not ingest; custom: end users see their own and the app documents', async () => {
    const alice = await endUser('alice-rag@example.com');
    const bob = await endUser('bob-rag@example.com');
    for (const [name, accessMode] of [['priv', 'private'], ['pub', 'shared'], ['mine', 'custom']]) {
      expect((await api('/collections', { method: 'POST', body: { name, accessMode } })).status).toBe(201);
    }
    await ingestText('priv', 'secret plans of the company');
    await ingestText('pub', 'public handbook of the company');
    const appDoc = await ingestText('mine', 'company holiday calendar');

    expect((await api('/collections/priv/query', { method: 'POST', key: alice, body: { query: 'plans' } })).status).toBe(403);
    const listed = await api('/collections', { key: alice });
    expect(listed.json.map((c: { name: string }) => c.name).sort()).toEqual(['mine', 'pub']);

    const shared = await api('/collections/pub/query', { method: 'POST', key: alice, body: { query: 'handbook' } });
    expect(shared.status).toBe(200);
    expect(shared.json.chunks).toHaveLength(1);
    const noIngest = await api('/collections/pub/ingest', { method: 'POST', key: alice, body: { text: 'mine now' } });
    expect(noIngest.status).toBe(403);

    const aliceDoc = await ingestText('mine', 'alice diary entry about the company', {}, alice);
    expect(aliceDoc.status).toBe('ready');
    const aliceSees = await api('/collections/mine/query', { method: 'POST', key: alice, body: { query: 'company', topK: 10 } });
    expect(aliceSees.json.chunks.map((c: { documentId: string }) => c.documentId).sort()).toEqual([aliceDoc.id, appDoc.id].sort());
    const bobSees = await api('/collections/mine/query', { method: 'POST', key: bob, body: { query: 'company', topK: 10 } });
    expect(bobSees.json.chunks.map((c: { documentId: string }) => c.documentId)).toEqual([appDoc.id]);
    expect((await api(`/collections/mine/documents/${aliceDoc.id}`, { key: bob })).status).toBe(404);
    // Counts too cover only what the caller may see.
    expect((await api('/collections/mine', { key: bob })).json.documentCount).toBe(1);
    expect((await api('/collections/mine', { key: alice })).json.documentCount).toBe(2);
    expect((await api(`/collections/mine/documents/${aliceDoc.id}`, { method: 'DELETE', key: bob })).status).toBe(404);
    expect((await api(`/collections/mine/documents/${appDoc.id}`, { method: 'DELETE', key: bob })).status).toBe(403);
    expect((await api('/collections/mine', { method: 'DELETE', key: alice })).status).toBe(403);
    // The service key sees every document.
    const all = await api('/collections/mine/documents');
    expect(all.json).toHaveLength(2);

    const other = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'other' } });
    const foreign = await api('/collections/pub/query', { method: 'POST', key: other.json.service_key.key, body: { query: 'handbook' } });
    expect(foreign.status).toBe(403);
  });
});

describe('an agent over MCP', () => {
  it('creates a collection, ingests a Markdown file from storage and a text, polls them, queries with a filter and gets a cited answer', async () => {
    const call = async (name: string, args: Record<string, unknown>) => {
      const res = await callTool(mcp.client, name, { app_id: appId, ...args });
      expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
      return resultJson(res);
    };
    await call('rag_collections_create', { name: 'kb', accessMode: 'shared' });
    const file = await call('storage_upload_inline', {
      filename: 'faq.md',
      contentType: 'text/markdown',
      content: '# FAQ\n\nRefunds are possible within 30 days of purchase.',
      encoding: 'utf8',
    });
    const fromFile = await call('rag_ingest', { name: 'kb', storage_object_id: file.objectId, metadata: { source: 'faq' } });
    const fromText = await call('rag_ingest', { name: 'kb', text: 'Shipping takes five business days.', metadata: { source: 'shipping' } });
    for (const id of [fromFile.documentId, fromText.documentId]) {
      let doc;
      for (let i = 0; i < 200 && (!doc || doc.status === 'pending' || doc.status === 'processing'); i++) {
        doc = await call('rag_documents_get', { name: 'kb', document_id: id });
        if (doc.status === 'pending' || doc.status === 'processing') await new Promise((r) => setTimeout(r, 100));
      }
      expect(doc.status).toBe('ready');
    }
    const answer = await call('rag_query', { name: 'kb', query: 'How long do refunds take?', filter: { source: 'faq' }, synthesize: true });
    expect(answer.chunks).toHaveLength(1);
    expect(answer.chunks[0].metadata).toEqual({ source: 'faq' });
    expect(answer.answer).toContain('[1]');
    expect(answer.answer).toContain('Refunds are possible within 30 days');
  });
});
