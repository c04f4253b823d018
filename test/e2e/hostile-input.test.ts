// Bad input is a 4xx, never a 500: hostile path parameters, query values, headers and JSON bodies on every
// operation of /openapi.json (with a valid credential and with none), hostile arguments on every MCP tool, and
// malformed HTTP itself. Deterministic: a seeded PRNG picks the cases, and a failure lists every request that
// answered 5xx so it can be replayed.
import http from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { followLikeABrowser, startFakeComposio, type FakeComposio } from '../fakes/composio.ts';
import { FakeRecall } from '../fakes/recall.ts';
import { profileUrl, startFakeProxycurl, type FakeProxycurl, type FakeVendor } from '../fakes/people-proxycurl.ts';
import { startFakeExa } from '../fakes/people-exa.ts';
import { tools } from '../../tools/index.ts';
import { connectMcp, readResponse, request, resultJson, signUpOwner, substrateKeyOf, type McpConnection, type RawResponse } from './e2e-helpers.ts';

const SEED = 0x5eed;
/** Per operation and credential: how many of the generated query, header and body cases are sent. */
const SAMPLED_CASES = 40;
const CONCURRENCY = 4;
const DEPTH = 5000;

const TABLE = 'notes';
const SCHEMA = {
  tables: {
    [TABLE]: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        title: { type: 'text' },
        n: { type: 'integer' },
        big: { type: 'bigint' },
        price: { type: 'numeric' },
        flag: { type: 'boolean' },
        tags: { type: 'text[]' },
        meta: { type: 'jsonb' },
        at: { type: 'timestamptz' },
      },
      access: 'public',
    },
  },
};
const FUNCTION_NAME = 'echo';
const RAG_COLLECTION = 'fuzz-docs';
const FUNCTION_CODE = 'export default async (req: Request) => new Response(await req.text(), { status: 200 });';

/** Path segments as they go on the wire (already percent-encoded, or deliberately not). */
const PATH_VALUES = [
  '%00',
  'a%00b',
  '%E0%A4%A',
  'no%C3%28tes',
  '%',
  '%zz',
  '%C0%AF',
  '%FF',
  '%ED%A0%80',
  '..',
  '.',
  '%2e%2e',
  '..%2F..%2Fetc%2Fpasswd',
  'x'.repeat(4000),
  '%F0%9F%8E%89',
  encodeURIComponent('名前ü'),
  '\u00e9',
  '0',
  '-1',
  '1e400',
  '9'.repeat(40),
  'null',
  'NaN',
  '%20',
  '%0D%0A',
  "%27%3B%20drop%20table%20x%3B--",
  '%5C',
  '*',
  '00000000-0000-0000-0000-000000000000',
];

/** Routes outside the registry (so not in /openapi.json); `{v}` takes each hostile path segment. */
const RAW_ROUTES = [
  ['GET', '/blob/storage/{v}?op=get&exp=1&sig=x'],
  ['PUT', '/blob/storage/{v}?op=put&exp=1&sig=x'],
  ['PUT', '/v1/{app}/frontend/deployments/{v}/upload?expires=1&signature=x'],
  ['GET', '/sites/{v}/'],
  ['GET', '/sites/{app}/{v}'],
  ['GET', '/sites/{app}/d/{v}/'],
  ['POST', '/v1/{app}/fn/{v}'],
  ['GET', `/v1/{app}/fn/${FUNCTION_NAME}/{v}`],
] as const;

/** Query values as they go on the wire; a value with `&` repeats the parameter. */
const QUERY_VALUES = [...PATH_VALUES, '', '1&{name}=2', '1e400', '-9999999999999999999999', '1.5', 'true', '2024-13-45T99:99:99Z', '[]', '{}'];

/** Whole query strings for the data routes, whose query keys are PostgREST syntax. */
const DATA_QUERIES = [
  'select=%00',
  'title=eq.%00',
  'title=eq.a%00b',
  'title=like.*%00*',
  '%00=eq.1',
  'id=eq.%00',
  'id=eq.%E0%A4%A',
  'id=eq.not-a-uuid',
  'n=eq.1e400',
  'n=gt.99999999999999999999999',
  'big=eq.1e400',
  'price=eq.1e400',
  'at=eq.2024-13-45',
  'flag=eq.maybe',
  'tags=cs.{%00}',
  'tags=cs.{' + 'a,'.repeat(3000) + '}',
  'meta->%00=eq.1',
  'meta->>a=eq.%00',
  'order=%00',
  'order=title.%E0%A4%A',
  'limit=1e400',
  'limit=-1',
  'offset=99999999999999999999',
  'select=' + '('.repeat(DEPTH),
  'select=' + 'a('.repeat(2000) + ')'.repeat(2000),
  'or=(' + 'and('.repeat(2000) + ')'.repeat(2001),
  'title=in.(' + 'a,'.repeat(3000) + ')',
  'select=*,' + 'x'.repeat(4000),
  'on_conflict=%00',
  'columns=%00',
];

/** Header values (latin-1 only: that is all HTTP carries). */
const HEADER_VALUES = ['', '\u00e9', '*/*;q=1e400', 'x'.repeat(8000), 'bytes=99999999999999999999-', 'items=-5', 'return=representation,count=exact,%00', 'application/vnd.pgrst.object+json;nulls=stripped', '0-1e400', ',,,;;;'];

const deepArray = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);

/** JSON texts for one value (raw, so that 1e400 and lone surrogates survive). */
const JSON_VALUES = [
  '"a\\u0000b"',
  '"\\u0000"',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '-1',
  '0',
  '1.5',
  '-0',
  'true',
  'null',
  '[]',
  '{}',
  '[1,"a",null]',
  '{"a":1}',
  deepArray,
  deepObject,
  JSON.stringify('x'.repeat(200_000)),
  '"\\ud800"',
  JSON.stringify('名前🎉ü'),
  '"../../etc/passwd"',
  '"%00"',
  '"%E0%A4%A"',
  `"' OR 1=1 --"`,
  '"__proto__"',
  '{"__proto__":{"polluted":true}}',
];

/** Whole request bodies. */
const BODIES: Array<string | Buffer> = ['', 'null', '[]', '"str"', '1e400', '{', '{"a":', Buffer.from([0xff, 0xfe, 0x7b]), deepArray, deepObject, '[{}]', '{"a":"\\ud800"}', '{"\\u0000":1}', '{"__proto__":{"polluted":true}}'];

/** Data API cases known to have answered 5xx (NUL in filter values, 1e400 and deep JSON in rows): always sent. */
const KNOWN_DATA_QUERIES = ['title=eq.%00', 'title=like.*%00*', 'tags=cs.{%00}', 'meta->>a=eq.%00', 'n=eq.1e400'];
const KNOWN_DATA_ROW = { title: 'known' };

const ROW_COLUMNS = ['id', 'title', 'n', 'big', 'price', 'flag', 'tags', 'meta', 'at', 'no such column', 'title\\u0000'];

interface Fixtures {
  appId: string;
  serviceKey: string;
  /** Destroyed by apps_delete and service_keys_revoke instead of the app the other operations use. */
  victimAppId: string;
  victimKeyId: string;
  substrateKeyId: string;
  userToken: string;
  rowId: string;
  objectId: string;
  deploymentId: string;
  documentId: string;
  actionId: string;
  entityId: string;
  artifactId: string;
  ruleId: string;
  planId: string;
  productId: string;
  orderId: string;
  botId: string;
  lookupId: string;
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; schema?: JsonSchema }>;
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  'x-query-string'?: string;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
};

interface HttpCase {
  operation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

let server: SpawnedServer;
/** The AI upstream, so that AI and RAG operations run their whole path under fuzzing (not a 503 for no provider). */
let fake: FakeOpenAI;
/** Stripe, so that billing and monetization operations run their whole path too (not a 503 for no Stripe). */
let stripe: FakeStripe;
/** Recall, so that meetings operations reach the provider too (not a 501 for no provider). */
let recall: FakeRecall;
/** The integrations vendor, so that integrations operations run their whole path too (not a 400 for no vendor). */
let composio: FakeComposio;
/** The people vendors (structured and semantic), so that people operations reach a provider (not a 503 for none). */
let proxycurl: FakeProxycurl;
let exa: FakeVendor;
let fx: Fixtures;

/** mulberry32: small, fast and good enough to pick test cases reproducibly. */
function prng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sample<T>(items: readonly T[], count: number, random: () => number): T[] {
  const pool = [...items];
  const picked: T[] = [];
  while (picked.length < count && pool.length) picked.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  return picked;
}

/** One request with the path exactly as given (no URL normalisation, so `..` and bad escapes reach the server). */
function send(c: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse> {
  const headers: Record<string, string> = { ...c.headers };
  const payload = typeof c.body === 'string' ? Buffer.from(c.body) : c.body;
  if (payload) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path: c.path, method: c.method, headers, agent: false }, (res) => readResponse(res).then(resolve, reject));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Raw bytes on a fresh TCP connection; resolves with everything the server sent before it closed. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' && chunks.length ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(err)));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.write(bytes);
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; json: any } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, json: JSON.parse(body) };
}

/** Sends every case (a few at a time) and describes each that answered 5xx or cut the connection. */
async function fiveHundreds(cases: readonly HttpCase[]): Promise<string[]> {
  const failures: string[] = [];
  await inParallel(cases, CONCURRENCY, async (c) => {
    const res = await send(c).catch((err: Error) => ({ status: 599, text: `transport error: ${err.message}` }));
    if (res.status < 500) return;
    const body = c.body === undefined ? '' : ` body ${String(c.body).slice(0, 200)}`;
    failures.push(`${res.status} ${c.operation}: ${c.method} ${c.path.slice(0, 300)}${c.headers.authorization ? ' (credential)' : ''}${body} -> ${res.text.slice(0, 300)}`);
  });
  return failures;
}

async function inParallel<T>(items: readonly T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await each(items[next++]!);
  }));
}

/** The standard envelope, whose documentation_url is the guide section of `area` (the guide itself when none). */
function expectEnvelope(res: { status: number; json: any; headers: Record<string, unknown> }, status: number, code: string, area?: string): void {
  expect(res.status, JSON.stringify(res.json)).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const envelope = {
    error: {
      code,
      message: expect.any(String),
      remediation: expect.any(String),
      documentation_url: server.docsUrl(area),
      ...(res.json?.error?.details ? { details: expect.anything() } : {}),
    },
  };
  // The data API's bodies also carry PostgREST's fields at the top level, the envelope's message among them.
  const postgrest = res.json?.code === undefined ? {} : { code: expect.any(String), message: res.json.error.message, details: null, hint: res.json.error.remediation };
  expect(res.json).toEqual({ ...postgrest, ...envelope });
}

/** The JSON of a fixture request, which must succeed. */
async function ok(res: Promise<RawResponse>): Promise<any> {
  const r = await res;
  expect(r.status, `${r.text}\n${server.output().slice(-2000)}`).toBeLessThan(300);
  return r.json;
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ record: false });
  stripe = await startFakeStripe();
  recall = await FakeRecall.start();
  composio = await startFakeComposio();
  proxycurl = await startFakeProxycurl();
  exa = await startFakeExa();
  server = await spawnServer({
    SVC_PEOPLE_PRIMARY_URL: proxycurl.url,
    SVC_PEOPLE_PRIMARY_KEY: 'pc-test-key',
    SVC_PEOPLE_SECONDARY_URL: exa.url,
    SVC_PEOPLE_SECONDARY_KEY: 'exa-test-key',
    SVC_INTEGRATIONS_BASE_URL: composio.url,
    SVC_INTEGRATIONS_API_KEY: composio.apiKey,
    ...recall.env(),
    SVC_AI_BASE_URL: fake.url,
    SVC_AI_API_KEY: 'sk-fuzz',
    SVC_STRIPE_SECRET_KEY: 'sk_test_fuzz',
    SVC_STRIPE_API_URL: stripe.url,
    SVC_STRIPE_PRO_PRICE_ID: 'price_fuzz',
    SVC_STRIPE_WEBHOOK_SECRET: 'whsec_fuzz',
    PAYMENTS_CONNECT_WEBHOOK_SECRET: 'whsec_fuzz_connect',
  });
  const key = server.platformKey;
  const main = await ok(request(server.url, '/init', { method: 'POST', key, body: { name: 'Hostile main' } }));
  const victim = await ok(request(server.url, '/init', { method: 'POST', key, body: { name: 'Hostile victim' } }));
  const appId: string = main.app_id;
  // Queued first, while the free plan's credit is whole: a lookup holds $0.08.
  const lookup = await ok(request(server.url, `/v1/${appId}/people/profile/email`, { method: 'POST', key, body: { socialProfileUrl: profileUrl(1) } }));
  await ok(request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key, body: { schema: SCHEMA, name: 'fuzz' } }));
  const rows = await ok(
    request(server.url, `/v1/${appId}/${TABLE}`, { method: 'POST', key, headers: { prefer: 'return=representation' }, body: { title: 'first', n: 1, tags: ['a'], meta: { a: 1 } } }),
  );
  const upload = await ok(request(server.url, `/storage/${appId}/upload`, { method: 'POST', key, body: { filename: 'a.txt', contentType: 'text/plain', sizeBytes: 3 } }));
  const deployment = await ok(request(server.url, `/v1/${appId}/frontend/deployments`, { method: 'POST', key, body: { framework: 'static' } }));
  await ok(request(server.url, `/v1/${appId}/functions`, { method: 'POST', key, body: { name: FUNCTION_NAME, code: FUNCTION_CODE } }));
  const person = await signUpOwner(server);
  const substrate = await substrateKeyOf(server, person, 'fuzz');
  await ok(request(server.url, `/v1/${appId}/rag/collections`, { method: 'POST', key, body: { name: RAG_COLLECTION } }));
  const ragDoc = await ok(request(server.url, `/v1/${appId}/rag/collections/${RAG_COLLECTION}/ingest`, { method: 'POST', key, body: { text: 'fuzz document' } }));
  const substrateKey = (await substrateKeyOf(server, person, 'fuzz human')).key;
  const action = await ok(
    request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key: substrateKey, body: { capability: 'record_learning', payload: { title: 't', description: 'd' } } }),
  );
  const entity = await ok(
    request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key: substrateKey, body: { capability: 'upsert_entity', payload: { type: 'person', display_name: 'Fuzz' } } }),
  );
  const artifact = await ok(
    request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key: substrateKey, body: { capability: 'upsert_source_artifact', payload: { kind: 'note', title: 'Fuzz' } } }),
  );
  const rule = await ok(
    request(server.url, '/v1/me/substrate/attention-rules', {
      method: 'POST',
      key: substrateKey,
      body: {
        name: 'fuzz',
        trigger_cron: '0 9 * * *',
        condition_mode: 'row_query',
        condition: { from: 'learnings' },
        action_capability: 'record_learning',
        action_payload_template: { title: '{{title}}', description: 'again' },
      },
    }),
  );
  const user = await ok(request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: 'fuzz@example.com', password: 'correct horse battery' } }));
  const onboarding = await ok(request(server.url, `/v1/${appId}/billing/connect/onboard`, { method: 'POST', key, body: {} }));
  expect((await fetch(onboarding.onboardingUrl, { redirect: 'manual' })).status).toBe(303);
  const plan = await ok(request(server.url, `/v1/${appId}/billing/plans`, { method: 'POST', key, body: { name: 'Fuzz', priceCents: 500, interval: 'month' } }));
  const product = await ok(request(server.url, `/v1/${appId}/billing/products`, { method: 'POST', key, body: { name: 'Fuzz', priceCents: 300 } }));
  const urls = { successUrl: 'https://example.com/ok', cancelUrl: 'https://example.com/no' };
  const order = await ok(request(server.url, `/v1/${appId}/billing/purchase`, { method: 'POST', key: user.access_token, body: { productId: product.id, ...urls } }));
  for (const toolkit of ['gmail', 'notion']) {
    await ok(request(server.url, `/v1/${appId}/integrations/configure`, { method: 'POST', key, body: { toolkit, displayName: toolkit, redirectOrigins: ['https://example.com'] } }));
  }
  const link = await ok(request(server.url, `/v1/${appId}/integrations/connect`, { method: 'POST', key: user.access_token, body: { toolkit: 'gmail', redirectUrl: 'https://example.com/ok' } }));
  expect((await followLikeABrowser(link.authUrl, 'https://example.com')).location.searchParams.get('status')).toBe('success');
  const bot = await ok(request(server.url, `/v1/${appId}/ai/meetings`, { method: 'POST', key, body: { meetingUrl: 'https://zoom.us/j/123' } }));
  fx = {
    appId,
    serviceKey: main.service_key.key,
    victimAppId: victim.app_id,
    victimKeyId: victim.service_key.id,
    substrateKeyId: substrate.id,
    userToken: user.access_token,
    rowId: rows[0].id,
    objectId: upload.objectId,
    deploymentId: deployment.id,
    documentId: ragDoc.documentId,
    actionId: action.action_id,
    entityId: entity.result.entity_id,
    artifactId: artifact.result.artifact_id,
    ruleId: rule.rule_id,
    planId: plan.id,
    productId: product.id,
    orderId: order.orderId,
    botId: bot.id,
    lookupId: lookup.lookupId,
  };
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
  await stripe?.close();
  await composio?.close();
  await recall?.close();
  await proxycurl?.close();
  await exa?.close();
});

/** The valid value of a path parameter, so that the other parameters' hostility reaches past the lookup. */
function validParam(operationId: string, path: string, name: string): string {
  const destroysApp = operationId === 'apps_delete' || operationId === 'service_keys_revoke';
  switch (name) {
    case 'app_id':
      return destroysApp ? fx.victimAppId : fx.appId;
    case 'table':
      return TABLE;
    // No function is declared in the fuzz app: a valid call answers 404 PGRST202.
    case 'function':
      return 'no_such_function';
    case 'id':
      return path.includes('/frontend/deployments/') ? fx.deploymentId : fx.rowId;
    case 'key_id':
      return path.startsWith('/substrate-keys') ? fx.substrateKeyId : fx.victimKeyId;
    case 'object_id':
      return fx.objectId;
    case 'name':
      return path.includes('/rag/') ? RAG_COLLECTION : FUNCTION_NAME;
    case 'document_id':
      return fx.documentId;
    case 'action_id':
      return fx.actionId;
    case 'entity_id':
      return fx.entityId;
    case 'artifact_id':
      return fx.artifactId;
    case 'capability':
      return 'record_learning';
    case 'rule_id':
      return fx.ruleId;
    case 'delivery_id':
      return 'dlv_aaaaaaaaaaaaaaaaaaaa';
    case 'plan_id':
      return fx.planId;
    case 'product_id':
      return fx.productId;
    case 'order_id':
      return fx.orderId;
    case 'toolkit':
      // Not gmail, which the fixture user connected: disabling notion leaves the connected toolkit to fuzz.
      return 'notion';
    case 'bot_id':
      return fx.botId;
    case 'lookup_id':
      return fx.lookupId;
    // No such member or invitation: the lookup answers 404 once the input is valid, which hostile input never is.
    case 'person_id':
    case 'invitation_id':
    case 'clone_id':
      return '00000000-0000-4000-8000-000000000001';
    // The fixture account is on free: a valid domain call answers 403 PLAN_UPGRADE_REQUIRED (remove: 404).
    case 'domain':
      return 'www.example.com';
    // The fuzz server has no AI upstream: a valid models call answers 503 provider_unavailable.
    case 'model':
      return 'openai/gpt-4o-mini';
    // Responses are not stored: any id answers 404.
    case 'response_id':
      return 'resp_0000';
    // A realtime channel and event (realtime_broadcast_event): any name is valid.
    case 'topic':
      return 'room';
    case 'event':
      return 'ping';
    // A bucket the fixture app does not have: set creates it, delete answers 404 once the input is valid.
    case 'bucket_id':
      return 'fuzzed';
    default:
      throw new Error(`no valid value for path parameter ${name} of ${operationId}`);
  }
}

/** A value that satisfies the schema where that is easy (enums, types, minimums), so a mutation of one field is the only fault. */
function exampleOf(schema: JsonSchema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const first = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (first) return exampleOf(first);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return schema.format === 'email' ? 'fuzz@example.com' : schema.pattern ? 'FUZZ_1' : 'x'.repeat(Math.max(schema.minLength ?? 0, 8));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, (schema.exclusiveMinimum ?? 0) + 1);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => exampleOf(schema.items));
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((k) => [k, exampleOf(schema.properties?.[k])]));
    default:
      return null;
  }
}

/** `base` as JSON text with `key` set to a raw JSON text. */
function withField(base: Record<string, unknown>, key: string, rawValue: string): string {
  const { [key]: _replaced, ...rest } = base;
  const others = JSON.stringify(rest).slice(1, -1);
  return `{${JSON.stringify(key)}:${rawValue}${others ? ',' + others : ''}}`;
}

const KNOWN_DATA_BODIES = [
  withField(KNOWN_DATA_ROW, 'meta', deepObject),
  withField(KNOWN_DATA_ROW, 'meta', deepArray),
  withField(KNOWN_DATA_ROW, 'n', '1e400'),
  withField(KNOWN_DATA_ROW, 'big', '1e400'),
  withField(KNOWN_DATA_ROW, 'price', '1e400'),
  withField(KNOWN_DATA_ROW, 'title', '"a\\u0000b"'),
];

function bodyCases(op: Operation): Array<string | Buffer> {
  const schema = op.requestBody?.content['application/json'].schema;
  if (!schema) return [];
  if (op.path.includes('{table}')) {
    const row = { title: 'fuzz', n: 1 };
    const rows = ROW_COLUMNS.flatMap((column) => JSON_VALUES.map((v) => withField(row, column, v)));
    return [...rows, ...rows.slice(0, 40).map((r) => `[${JSON.stringify(row)},${r}]`), '[1]', '[[]]', ...BODIES];
  }
  const base = (exampleOf(schema) ?? {}) as Record<string, unknown>;
  const fields = [...Object.keys(schema.properties ?? {}), ...(schema.additionalProperties ? ['FUZZ_KEY'] : []), 'unknown_key'];
  return [...fields.flatMap((field) => JSON_VALUES.map((v) => withField(base, field, v))), ...BODIES];
}

function httpCases(op: Operation, credential: Record<string, string>, random: () => number, allPathValues: boolean): HttpCase[] {
  const pathNames = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
  const fill = (hostile?: { name: string; value: string }) =>
    op.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => (hostile?.name === name ? hostile.value : encodeURIComponent(validParam(op.operationId, op.path, name))));
  const at = (path: string, extra: Partial<HttpCase> = {}): HttpCase => ({ operation: op.operationId, method: op.method, path, headers: { ...credential, ...extra.headers }, body: extra.body });
  const cases: HttpCase[] = [];
  for (const name of pathNames) {
    const values = allPathValues ? PATH_VALUES : sample(PATH_VALUES, 5, random);
    for (const value of values) cases.push(at(fill({ name, value })));
  }
  const valid = fill();
  const generated: HttpCase[] = [];
  for (const param of op.parameters.filter((p) => p.in === 'query')) {
    for (const value of QUERY_VALUES) generated.push(at(`${valid}?${param.name}=${value.replace('{name}', param.name)}`));
  }
  if (op['x-query-string']) for (const query of DATA_QUERIES) generated.push(at(`${valid}?${query}`));
  for (const param of op.parameters.filter((p) => p.in === 'header')) {
    for (const value of HEADER_VALUES) generated.push(at(valid, { headers: { [param.name]: value } }));
  }
  for (const body of bodyCases(op)) generated.push(at(valid, { body }));
  // The data routes' known offenders are always sent, so a regression there cannot hide behind the sampling.
  const always = op['x-query-string']
    ? [...KNOWN_DATA_QUERIES.map((q) => at(`${valid}?${q}`)), ...(op.requestBody ? KNOWN_DATA_BODIES.map((body) => at(valid, { body })) : [])]
    : [];
  return [...cases, ...always, ...sample(generated, SAMPLED_CASES, random)];
}

/** Credential for an operation: the platform key where it is accepted, else an end-user token. */
function credentialFor(operationId: string): Record<string, string> {
  const tool = tools.find((t) => t.name === operationId)!;
  const key = tool.auth.includes('platform') ? server.platformKey : tool.auth.includes('user') ? fx.userToken : fx.serviceKey;
  return { authorization: `Bearer ${key}` };
}

const PATH_PARAMS = new Set(['app_id', 'table', 'function', 'id', 'name', 'object_id', 'key_id', 'document_id', 'action_id', 'entity_id', 'artifact_id', 'capability', 'delivery_id', 'rule_id']);

/** The REST path a tool's `id` and `key_id` belong to, for validParam. */
function pathOfTool(name: string): string {
  if (name.startsWith('rag_')) return '/rag/';
  return name.startsWith('frontend_') ? '/frontend/deployments/' : name.startsWith('substrate_') ? '/substrate-keys' : '';
}

/** A failure description when a tool call ended in an internal error, else undefined: through the SDK client. */
async function sdkCall(mcp: McpConnection, name: string, argsText: string): Promise<string | undefined> {
  try {
    const result = await mcp.client.callTool({ name, arguments: JSON.parse(argsText) });
    return result.isError && resultJson(result as never).status >= 500 ? JSON.stringify(result.content).slice(0, 300) : undefined;
  } catch (err) {
    return err instanceof McpError && err.code !== ErrorCode.InternalError ? undefined : `threw ${String(err).slice(0, 300)}`;
  }
}

/** tools/call as raw JSON-RPC on the SDK client's session, for arguments the SDK cannot serialise (1e400, 5,000 levels). */
async function rawToolCall(mcp: McpConnection, name: string, argsText: string): Promise<{ status: number; text: string; message: any }> {
  const res = await send({
    method: 'POST',
    path: '/mcp',
    headers: {
      authorization: `Bearer ${server.platformKey}`,
      accept: 'application/json, text/event-stream',
      'mcp-session-id': mcp.transport.sessionId!,
      'mcp-protocol-version': mcp.transport.protocolVersion ?? '2025-06-18',
    },
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argsText}}}`,
  });
  // The call's own stream also carries its log and progress notifications (and starts with a priming event without
  // data): the answer is the message with the call's id.
  const messages = res.text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 'data: '.length)
    .map((line) => JSON.parse(line.slice('data: '.length)) as { id?: unknown });
  return { status: res.status, text: res.text, message: messages.length ? messages.find((m) => m.id === 1) : res.json };
}

/** The same verdict as sdkCall, over rawToolCall. */
async function rawCall(mcp: McpConnection, name: string, argsText: string): Promise<string | undefined> {
  const { status, text, message } = await rawToolCall(mcp, name, argsText);
  const internal = status >= 500 || message?.error?.code === ErrorCode.InternalError || (message?.result?.isError && JSON.parse(message.result.content[0].text).status >= 500);
  return internal ? `${status} ${text.slice(0, 300)}` : undefined;
}

describe('findings: the exact answers that used to be 500 or bare', () => {
  it('a badly percent-encoded path parameter is 400 VALIDATION_FAILED on generated and raw routes', async () => {
    for (const path of [
      `/v1/${fx.appId}/no%C3%28tes`,
      `/v1/${fx.appId}/${TABLE}/%E0%A4%A`,
      `/storage/${fx.appId}/download/%E0%A4%A`,
      `/apps/%E0%A4%A`,
      `/v1/${fx.appId}/functions/%E0%A4%A/logs`,
      `/blob/storage/%E0%A4%A?op=get`,
    ]) {
      const res = await send({ method: 'GET', path, headers: { authorization: `Bearer ${server.platformKey}` } });
      expectEnvelope(res, 400, 'VALIDATION_FAILED');
      expect(res.json.error.message).toContain('percent-encoded');
    }
    expectEnvelope(await send({ method: 'DELETE', path: `/storage/${fx.appId}/%E0%A4%A` }), 400, 'VALIDATION_FAILED');
    expectEnvelope(await send({ method: 'PUT', path: `/v1/${fx.appId}/frontend/deployments/%E0%A4%A/upload`, body: 'zip' }), 400, 'VALIDATION_FAILED');
  });

  it('oversized headers or request line are 431 HEADERS_TOO_LARGE with the envelope', async () => {
    const bigHeader = await send({ method: 'GET', path: '/health', headers: { 'x-filler': 'x'.repeat(20_000) } });
    expectEnvelope(bigHeader, 431, 'HEADERS_TOO_LARGE');
    expect(bigHeader.json.error.message).toContain('16 KB');
    expectEnvelope(await send({ method: 'GET', path: '/health?q=' + 'x'.repeat(20_000) }), 431, 'HEADERS_TOO_LARGE');
  });

  it('a malformed request is 400 MALFORMED_REQUEST with the envelope', async () => {
    const res = parseRaw(await sendRaw('GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expectEnvelope(res, 400, 'MALFORMED_REQUEST');
    expect(res.headers.connection).toBe('close');
    expectEnvelope(parseRaw(await sendRaw('GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n')), 400, 'MALFORMED_REQUEST');
  });

  it('a NUL in a path parameter, query value or JSON string is 400 VALIDATION_FAILED naming the field', async () => {
    const auth = { authorization: `Bearer ${server.platformKey}` };
    const cases: Array<[Parameters<typeof send>[0], string, string]> = [
      [{ method: 'GET', path: `/storage/${fx.appId}/download/a%00b`, headers: auth }, 'object_id', 'storage'],
      [{ method: 'DELETE', path: `/storage/${fx.appId}/a%00b`, headers: auth }, 'object_id', 'storage'],
      [{ method: 'GET', path: `/v1/${fx.appId}/functions/${FUNCTION_NAME}/logs?since=a%00b`, headers: auth }, 'since', 'functions'],
      [{ method: 'POST', path: '/init', headers: auth, body: '{"name":"a\\u0000b"}' }, 'name', 'apps'],
      [{ method: 'PUT', path: `/v1/${fx.appId}/frontend/env`, headers: auth, body: '{"GREETING":"a\\u0000b"}' }, 'env.GREETING', 'frontend'],
      [{ method: 'POST', path: `/v1/${fx.appId}/functions/${FUNCTION_NAME}/invoke`, headers: auth, body: '{"headers":{"x-a":"\\u0000"}}' }, 'headers.x-a', 'functions'],
      [{ method: 'POST', path: `/v1/${fx.appId}/${TABLE}`, headers: auth, body: '{"title":"a\\u0000b"}' }, 'body.title', 'data'],
      [{ method: 'GET', path: `/v1/${fx.appId}/${TABLE}/a%00b`, headers: auth }, 'id', 'data'],
      // A lone surrogate is no text either (it once reached Stripe's form encoder and threw there).
      [{ method: 'POST', path: `/v1/${fx.appId}/billing/products`, headers: auth, body: '{"name":"a\\ud800b","priceCents":100}' }, 'name', 'billing'],
      [{ method: 'POST', path: `/v1/${fx.appId}/${TABLE}`, headers: auth, body: '{"\\udc00":1}' }, 'body.\udc00', 'data'],
    ];
    for (const [c, field, area] of cases) {
      const res = await send(c);
      expectEnvelope(res, 400, 'VALIDATION_FAILED', area);
      expect(res.json.error.message, `${c.method} ${c.path}`).toContain(`'${field}'`);
    }
  });

  it('input nested deeper than 100 levels is 400 VALIDATION_FAILED naming the field, over REST and MCP', async () => {
    const res = await send({ method: 'POST', path: `/v1/${fx.appId}/${TABLE}`, headers: { authorization: `Bearer ${server.platformKey}` }, body: withField({}, 'meta', deepObject) });
    expectEnvelope(res, 400, 'VALIDATION_FAILED', 'data');
    expect(res.json.error.message).toMatch(/^Invalid 'body\.meta(\.a)+': values may nest at most 100 levels deep\.$/);
    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const { message } = await rawToolCall(mcp, 'functions_invoke', withField({ app_id: fx.appId, name: FUNCTION_NAME }, 'body', deepArray));
      expect(message.result.isError).toBe(true);
      expect(JSON.parse(message.result.content[0].text)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/^Invalid 'body(\.0)+': values may nest/) } });
    } finally {
      await mcp.close();
    }
  });

  it('a NUL in an MCP tool argument is an isError result with 400 VALIDATION_FAILED naming the field', async () => {
    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const result = await mcp.client.callTool({ name: 'frontend_env_set', arguments: { app_id: fx.appId, env: { GREETING: 'a\u0000b' } } });
      expect(result.isError).toBe(true);
      expect(resultJson(result as never)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining("'env.GREETING'") } });
    } finally {
      await mcp.close();
    }
  });
});

/** A fuzz sends thousands of requests: seconds alone, several times that beside other test files on 2 cores. */
const FUZZ_TIMEOUT_MS = 180_000;

describe('fuzz', () => {
  it('no operation of /openapi.json answers 5xx to hostile input, with a credential or without', async () => {
    const doc = (await request(server.url, '/openapi.json')).json as { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> };
    const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })));
    // Deletions last (and the app's own deletion last of all), so the other operations still find their fixtures.
    const rank = (op: Operation) => (op.operationId === 'apps_delete' ? 2 : op.method === 'DELETE' ? 1 : 0);
    operations.sort((a, b) => rank(a) - rank(b));
    expect(operations.length).toBeGreaterThan(40);

    const random = prng(SEED);
    const cases = operations.flatMap((op) => [...httpCases(op, credentialFor(op.operationId), random, true), ...httpCases(op, {}, random, false)]);
    expect(cases.length).toBeGreaterThan(1000);
    expect(await fiveHundreds(cases)).toEqual([]);
  }, FUZZ_TIMEOUT_MS);

  it('no raw route (blob, upload, sites, public functions) answers 5xx to hostile path segments', async () => {
    const credentials: Array<Record<string, string>> = [{}, { authorization: `Bearer ${server.platformKey}` }];
    const cases: HttpCase[] = RAW_ROUTES.flatMap(([method, template]) =>
      PATH_VALUES.flatMap((value) =>
        credentials.map((headers) => ({
          operation: 'raw',
          method,
          path: template.replace('{app}', fx.appId).replace('{v}', value),
          headers,
          body: method === 'GET' ? undefined : 'abc',
        })),
      ),
    );
    expect(await fiveHundreds(cases)).toEqual([]);
  });

  it('no MCP tool call ends in an internal error on hostile arguments', async () => {
    const mcp: McpConnection = await connectMcp(server.url, server.platformKey);
    const random = prng(SEED + 1);
    const failures: string[] = [];
    try {
      const { tools: listed } = await mcp.client.listTools();
      const rank = (name: string) => (name === 'apps_delete' ? 2 : /_(delete|revoke)/.test(name) ? 1 : 0);
      listed.sort((a, b) => rank(a.name) - rank(b.name));
      for (const tool of listed) {
        const schema = tool.inputSchema as JsonSchema;
        const fields = Object.keys(schema.properties ?? {});
        const base = exampleOf(schema) as Record<string, unknown>;
        for (const name of fields.filter((f) => PATH_PARAMS.has(f))) base[name] = validParam(tool.name, pathOfTool(tool.name), name);
        const argTexts = [
          '{}',
          ...sample(
            [...fields, 'unknown_key'].flatMap((f) => JSON_VALUES.map((v) => withField(base, f, v))),
            SAMPLED_CASES,
            random,
          ),
        ];
        if (tool.name.startsWith('data_')) {
          argTexts.push(...KNOWN_DATA_QUERIES.map((q) => JSON.stringify({ ...base, query: q })));
          if (fields.includes('body')) argTexts.push(...KNOWN_DATA_BODIES.map((b) => withField(base, 'body', b)));
        }
        for (const args of argTexts) {
          const viaSdk = args.length < 10_000 && !args.includes('1e400');
          const verdict = await (viaSdk ? sdkCall(mcp, tool.name, args) : rawCall(mcp, tool.name, args));
          if (verdict) failures.push(`${tool.name} ${args.slice(0, 200)} -> ${verdict}`);
        }
      }
    } finally {
      await mcp.close();
    }
    expect(failures).toEqual([]);
  }, FUZZ_TIMEOUT_MS);

  it('the process is still alive and ready', async () => {
    expect(server.child.exitCode).toBeNull();
    expect((await request(server.url, '/health/ready')).status).toBe(200);
  });
});
