// GET /v1/{app_id}/: the app's tables as PostgREST's OpenAPI (Swagger 2.0) document, from the live catalog, showing
// what the credential that asks may use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';
import { dataOpenApi } from '../../src/data/openapi.ts';
import type { Catalog, ColumnInfo, TableInfo } from '../../src/schema/catalog.ts';

let p: TestPlatform;
let appId: string;
let serviceKey: string;
let otherServiceKey: string;
let endUser: string;

const SCHEMA = {
  tables: {
    authors: {
      access: 'public',
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        name: { type: 'varchar(40)', nullable: false },
        bio: { type: 'text', default: "'it''s me'" },
      },
    },
    posts: {
      access: 'user',
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', nullable: false },
        author_id: { type: 'uuid', references: { table: 'authors', column: 'id' } },
        title: { type: 'text', nullable: false, default: "'untitled'" },
        score: { type: 'integer', default: -1 },
        done: { type: 'boolean', nullable: false, default: false },
        price: { type: 'numeric(10,2)' },
        tags: { type: 'text[]' },
        meta: { type: 'jsonb', default: "'{}'::jsonb" },
        emb: { type: 'vector(3)' },
        created_at: { type: 'timestamptz', default: 'now()' },
      },
    },
    comments: {
      access: 'public',
      columns: {
        id: { type: 'bigint', primary: true },
        user_id: { type: 'uuid' },
        post_id: { type: 'uuid', references: { table: 'posts', column: 'id', onDelete: 'cascade' } },
        body: { type: 'text' },
      },
    },
    secrets: { access: 'service', columns: { id: { type: 'integer', primary: true }, value: { type: 'text' } } },
  },
};

beforeAll(async () => {
  p = await startTestPlatform();
  const app = (await p.api('POST', '/init', { body: { name: 'Docs' } })).body;
  appId = app.app_id;
  serviceKey = app.service_key.key;
  otherServiceKey = (await p.api('POST', '/init', { body: { name: 'Other' } })).body.service_key.key;
  const applied = await p.api('POST', `/v1/${appId}/schema/apply`, { key: serviceKey, body: { schema: SCHEMA, name: 'docs' } });
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  endUser = await p.services.endUserTokens.sign(appId, { sub: '11111111-1111-4111-8111-111111111111', role: 'authenticated' }, 600);
});
afterAll(async () => {
  await p?.close();
});

const doc = async (key: string | null = serviceKey, path = `/v1/${appId}/`) => {
  const res = await p.api('GET', path, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** Every "$ref" of the document, each of which must name an entry of it. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref') out.push(v as string);
      else refs(v, out);
    }
  }
  return out;
}

const pk = 'Note:\nThis is a Primary Key.<pk/>';
const fk = (table: string, column: string) => `Note:\nThis is a Foreign Key to \`${table}.${column}\`.<fk table='${table}' column='${column}'/>`;

describe('GET /v1/{app_id}/ (PostgREST OpenAPI)', () => {
  it('is Swagger 2.0 as application/openapi+json, based at the data API, with every $ref resolving', async () => {
    const res = await p.api('GET', `/v1/${appId}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    const body = res.body;
    const base = new URL(p.services.config.baseUrl);
    expect(body).toMatchObject({
      swagger: '2.0',
      info: { title: 'Docs data API', version: expect.any(String), description: expect.any(String) },
      externalDocs: { url: `${p.services.config.baseUrl}/llms.txt?area=data` },
      host: base.host,
      basePath: `/v1/${appId}`,
      schemes: [base.protocol.slice(0, -1)],
      consumes: ['application/json', 'application/vnd.pgrst.object+json'],
      produces: ['application/json', 'application/vnd.pgrst.object+json'],
      securityDefinitions: { JWT: { type: 'apiKey', in: 'header', name: 'Authorization' } },
      security: [{ JWT: [] }],
    });
    expect(Object.keys(body.paths)).toEqual(['/', '/authors', '/comments', '/posts', '/secrets']);
    expect(body.paths['/'].get).toMatchObject({ tags: ['Introspection'], produces: ['application/openapi+json', 'application/json'] });
    expect(Object.keys(body.definitions)).toEqual(['authors', 'comments', 'posts', 'secrets']);
    const all = refs(body);
    expect(all.length).toBeGreaterThan(50);
    for (const r of all) {
      const [, section, name] = /^#\/(definitions|parameters)\/(.+)$/.exec(r) ?? [];
      expect(section && body[section][name!], r).toBeTruthy();
    }
  });

  it('/v1/{app_id} without the trailing slash serves the same document', async () => {
    const res = await p.api('GET', `/v1/${appId}`);
    expect(res.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    expect(res.body).toEqual(await doc());
  });

  it('a table definition has each column with type, format, default and maxLength; required columns; keys noted as PostgREST notes them', async () => {
    const { definitions } = await doc();
    expect(definitions.posts).toEqual({
      description: 'Access: user (each end user reads and writes only the rows whose user_id is theirs; keys reach every row).',
      required: ['id', 'user_id', 'title', 'done'],
      type: 'object',
      properties: {
        id: { default: 'gen_random_uuid()', description: pk, format: 'uuid', type: 'string' },
        user_id: { format: 'uuid', type: 'string' },
        author_id: { description: fk('authors', 'id'), format: 'uuid', type: 'string' },
        title: { default: 'untitled', format: 'text', type: 'string' },
        score: { default: -1, format: 'integer', type: 'integer' },
        done: { default: false, format: 'boolean', type: 'boolean' },
        price: { format: 'numeric', type: 'number' },
        tags: { format: 'text[]', type: 'array', items: { type: 'string' } },
        meta: { default: {}, format: 'jsonb' },
        // A deliberate difference: vectors travel as JSON number arrays here.
        emb: { format: 'vector', type: 'array', items: { type: 'number' } },
        created_at: { default: 'now()', format: 'timestamp with time zone', type: 'string' },
      },
    });
    expect(definitions.authors).toEqual({
      description: 'Access: public (anyone reads; only keys write; keys reach every row).',
      required: ['id', 'name'],
      type: 'object',
      properties: {
        id: { default: 'gen_random_uuid()', description: pk, format: 'uuid', type: 'string' },
        name: { format: 'character varying', maxLength: 40, type: 'string' },
        bio: { default: "it's me", format: 'text', type: 'string' },
      },
    });
    expect(definitions.comments.properties).toEqual({
      id: { description: pk, format: 'bigint', type: 'integer' },
      user_id: { format: 'uuid', type: 'string' },
      post_id: { description: fk('posts', 'id'), format: 'uuid', type: 'string' },
      body: { format: 'text', type: 'string' },
    });
    expect(definitions.secrets.description).toBe('Access: service (service and platform keys only).');
  });

  it('a path per table: get with the row filters, select, order, Range, offset, limit; post, patch and delete with the body and Prefer', async () => {
    const { paths, parameters } = await doc();
    const filters = ['id', 'value'].map((c) => ({ $ref: `#/parameters/rowFilter.secrets.${c}` }));
    const r = (name: string) => ({ $ref: `#/parameters/${name}` });
    const op = { tags: ['secrets'], summary: 'Access: service (service and platform keys only).' };
    expect(paths['/secrets']).toEqual({
      get: {
        ...op,
        parameters: [...filters, r('select'), r('order'), r('range'), r('offset'), r('limit'), r('preferCount')],
        responses: { '200': { description: 'OK', schema: { items: { $ref: '#/definitions/secrets' }, type: 'array' } }, '206': { description: 'Partial Content' } },
      },
      post: { ...op, parameters: [r('body.secrets'), r('select'), r('on_conflict'), r('preferPost')], responses: { '201': { description: 'Created' } } },
      delete: { ...op, description: expect.stringContaining('FILTER_REQUIRED'), parameters: [...filters, r('preferReturn')], responses: { '204': { description: 'No Content' } } },
      patch: { ...op, description: expect.stringContaining('FILTER_REQUIRED'), parameters: [...filters, r('body.secrets'), r('preferReturn')], responses: { '204': { description: 'No Content' } } },
    });
    expect(parameters['rowFilter.secrets.value']).toEqual({ name: 'value', description: 'value (text)', required: false, in: 'query', type: 'string' });
    expect(parameters['body.secrets']).toEqual({ name: 'secrets', description: 'secrets', required: false, in: 'body', schema: { $ref: '#/definitions/secrets' } });
    expect(parameters.select).toEqual({ name: 'select', description: 'Filtering Columns', required: false, in: 'query', type: 'string' });
    expect(parameters.range).toEqual({ name: 'Range', description: 'Limiting and Pagination', required: false, in: 'header', type: 'string' });
    expect(parameters.preferPost).toMatchObject({ name: 'Prefer', in: 'header', enum: expect.arrayContaining(['return=representation', 'resolution=merge-duplicates', 'missing=default']) });
    expect(parameters.preferCount.enum).toContain('count=exact');
  });

  it('what the caller may use: no credential the public tables, read only; an end user the user and public tables, writing where it owns rows', async () => {
    const anon = await doc(null);
    expect(Object.keys(anon.paths)).toEqual(['/', '/authors', '/comments']);
    expect(Object.keys(anon.definitions)).toEqual(['authors', 'comments']);
    expect(Object.keys(anon.paths['/comments'])).toEqual(['get']);
    // posts is not shown to it, so neither is the foreign key that names it.
    expect(anon.definitions.comments.properties.post_id).toEqual({ format: 'uuid', type: 'string' });
    expect(Object.keys(anon.parameters).filter((k) => k.startsWith('rowFilter.posts') || k.startsWith('rowFilter.secrets'))).toEqual([]);

    const user = await doc(endUser);
    expect(Object.keys(user.paths)).toEqual(['/', '/authors', '/comments', '/posts']);
    expect(Object.keys(user.paths['/authors'])).toEqual(['get']);
    expect(Object.keys(user.paths['/comments'])).toEqual(['get', 'post', 'delete', 'patch']);
    expect(Object.keys(user.paths['/posts'])).toEqual(['get', 'post', 'delete', 'patch']);
    expect(user.definitions.comments.properties.post_id.description).toBe(fk('posts', 'id'));

    // A platform key and the app's service key see the same: everything.
    expect(await doc(p.platformKey)).toEqual(await doc(serviceKey));
  });

  it('a path /rpc/{fn} per declared function the caller may call: POST with the arguments, GET too where it does not write', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'Functions' } })).body;
    const schema = {
      tables: { notes: { access: 'public', columns: { id: { type: 'bigint', primary: true }, body: { type: 'text' } } } },
      functions: {
        note_count: { args: { prefix: 'text', at_least: { type: 'integer', default: 0 } }, returns: 'bigint', volatility: 'stable', access: 'public', body: 'select count(*) from notes where body like note_count.prefix' },
        recent: { returns: 'setof notes', volatility: 'stable', access: 'authenticated', body: 'select * from notes order by id desc limit 10' },
        wipe: { returns: 'void', volatility: 'volatile', access: 'service', body: 'delete from notes where id > 0' },
      },
    };
    const applied = await p.api('POST', `/v1/${app.app_id}/schema/apply`, { key: app.service_key.key, body: { schema, name: 'functions' } });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const user = await p.services.endUserTokens.sign(app.app_id, { sub: '22222222-2222-4222-8222-222222222222', role: 'authenticated' }, 600);
    const rpcPaths = async (key: string | null) => Object.keys((await doc(key, `/v1/${app.app_id}/`)).paths).filter((k) => k.startsWith('/rpc/'));
    expect(await rpcPaths(null)).toEqual(['/rpc/note_count']);
    expect(await rpcPaths(user)).toEqual(['/rpc/note_count', '/rpc/recent']);
    const all = await doc(app.service_key.key, `/v1/${app.app_id}/`);
    expect(Object.keys(all.paths).filter((k) => k.startsWith('/rpc/'))).toEqual(['/rpc/note_count', '/rpc/recent', '/rpc/wipe']);
    const produces = ['application/json', 'application/vnd.pgrst.object+json'];
    const countOp = { tags: ['(rpc) note_count'], summary: 'Returns one bigint value.', produces };
    expect(all.paths['/rpc/note_count']).toEqual({
      post: {
        ...countOp,
        parameters: [
          {
            name: 'args',
            required: true,
            in: 'body',
            schema: { type: 'object', required: ['prefix'], properties: { prefix: { format: 'text', type: 'string' }, at_least: { format: 'integer', type: 'integer' } } },
          },
        ],
        responses: { '200': { description: 'OK' } },
      },
      get: {
        ...countOp,
        parameters: [
          { format: 'text', type: 'string', name: 'prefix', required: true, in: 'query' },
          { format: 'integer', type: 'integer', name: 'at_least', required: false, in: 'query' },
        ],
        responses: { '200': { description: 'OK' } },
      },
    });
    expect(all.paths['/rpc/recent'].get.summary).toBe('Returns a set of notes rows, which select, filters and order apply to.');
    expect(Object.keys(all.paths['/rpc/wipe'])).toEqual(['post']);
    expect(all.paths['/rpc/wipe'].post.summary).toBe('Returns nothing (204).');
  });

  it('follows the live schema: an apply here at once, a change made elsewhere within a second', async () => {
    const applied = await p.api('POST', `/v1/${appId}/schema/apply`, {
      key: serviceKey,
      body: { schema: { tables: { ...SCHEMA.tables, tags: { access: 'public', columns: { name: { type: 'text', primary: true } } } } }, name: 'tags' },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(Object.keys((await doc()).definitions)).toContain('tags');

    // As another instance would: straight into the database, so this process's catalog snapshot is not told.
    const client = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
    await client.connect();
    try {
      await client.query("alter table tags add column colour varchar(7) not null default 'red'");
    } finally {
      await client.end();
    }
    await new Promise((r) => setTimeout(r, 1100));
    expect((await doc()).definitions.tags.properties.colour).toEqual({ default: 'red', format: 'character varying', maxLength: 7, type: 'string' });
  });

  it('errors as the data API sends them: an unknown app 404, another app 403, an unknown query parameter 400', async () => {
    const missing = await p.api('GET', '/v1/zzzzzzzzzzzzzzzz/');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: expect.any(String), error: { code: 'RESOURCE_NOT_FOUND' } });
    const other = await p.api('GET', `/v1/${appId}/`, { key: otherServiceKey });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
    const query = await p.api('GET', `/v1/${appId}/?select=x`);
    expect(query.status).toBe(400);
    expect(query.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('HEAD answers as GET without a body; /openapi.json documents the route as data_openapi', async () => {
    const head = await fetch(`${p.url}/v1/${appId}/`, { method: 'HEAD', headers: { authorization: `Bearer ${serviceKey}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    expect(await head.text()).toBe('');
    const platformDoc = (await p.api('GET', '/openapi.json')).body;
    expect(platformDoc.paths['/v1/{app_id}'].get).toMatchObject({ operationId: 'data_openapi', parameters: [{ name: 'app_id', in: 'path', required: true }] });
  });
});

describe('dataOpenApi (the generator, on hand-built catalogs)', () => {
  const column = (name: string, type: string, extra: Partial<ColumnInfo> = {}): ColumnInfo => ({
    name,
    type,
    udt: type.replace(/\(.*\)|\[\]$/g, ''),
    isArray: type.endsWith('[]'),
    nullable: true,
    default: null,
    ...extra,
  });
  const table = (name: string, extra: Partial<TableInfo>): TableInfo => ({ name, columns: [], primaryKey: [], foreignKeys: [], indexes: [], rls: true, access: 'service', ...extra });
  const fkInfo = (columns: string[], refTable: string, refColumns: string[]) => ({ name: `${columns.join('_')}_fkey`, columns, refTable, refColumns, onDelete: 'no action' as const });
  const catalog: Catalog = new Map(
    [
      table('orders', {
        access: 'user',
        plans: ['pro', 'team'],
        columns: [
          column('id', 'bigint', { nullable: false, identity: true }),
          column('user_id', 'uuid', { nullable: false }),
          column('region', 'text'),
          column('code', 'character(3)', { default: "'abc'::bpchar" }),
          column('status', 'text', { nullable: false, default: "'open'::text" }),
          column('docs', 'jsonb[]'),
          column('at', 'timestamp(3) with time zone'),
          column('ratio', 'double precision', { default: '0.5' }),
        ],
        primaryKey: ['id'],
        foreignKeys: [fkInfo(['region', 'code'], 'regions', ['name', 'code'])],
      }),
      { ...table('regions', { access: 'public', columns: [column('name', 'text', { nullable: false }), column('code', 'character(3)', { nullable: false })], primaryKey: ['name', 'code'] }) },
      table('legacy', { access: null, rls: false, columns: [column('id', 'integer', { nullable: false })], primaryKey: ['id'] }),
      table('locked', { access: null, rls: true, columns: [column('id', 'integer', { nullable: false })] }),
    ].map((t) => [t.name, t]),
  );
  // A definition's enum, as the catalog reads a one-column CHECK of that form.
  (catalog.get('orders') as TableInfo & { checks: unknown }).checks = [
    { name: 'orders_status_check', columns: ['status'], values: ['open', 'paid'] },
    { name: 'orders_ratio_check', columns: ['ratio'], values: null },
  ];
  const build = (role?: 'svc_anon' | 'svc_user' | 'svc_service') => dataOpenApi(catalog, { baseUrl: 'https://api.example.com:8443/v1/app1', title: 'T', ...(role ? { role } : {}) });

  it('host, basePath and schemes come from the base URL; the root path is the document', () => {
    const d = build();
    expect([d.host, d.basePath, d.schemes]).toEqual(['api.example.com:8443', '/v1/app1', ['https']]);
    expect(d).not.toHaveProperty('externalDocs');
    expect(Object.keys(d.paths)).toEqual(['/', '/orders', '/regions', '/legacy', '/locked']);
  });

  it('enums, identity, composite keys, modifiers, array items and plans', () => {
    const orders = build().definitions.orders as { description: string; required: string[]; properties: Record<string, Record<string, unknown>> };
    expect(orders.description).toBe(
      'Access: user (each end user reads and writes only the rows whose user_id is theirs; keys reach every row). Plans: pro, team (end users reach the rows only while subscribed to one).',
    );
    expect(orders.required).toEqual(['id', 'user_id', 'status']);
    expect(orders.properties).toEqual({
      // Identity: no default shown (PostgREST reads none either); the composite foreign key is not noted, as in PostgREST.
      id: { description: 'Note:\nThis is a Primary Key.<pk/>', format: 'bigint', type: 'integer' },
      user_id: { format: 'uuid', type: 'string' },
      region: { format: 'text', type: 'string' },
      // The cast Postgres prints (bpchar) is not the format: the expression stays as it is, as PostgREST leaves it.
      code: { default: "'abc'::bpchar", format: 'character', maxLength: 3, type: 'string' },
      status: { default: 'open', enum: ['open', 'paid'], format: 'text', type: 'string' },
      docs: { format: 'jsonb[]', type: 'array', items: {} },
      at: { format: 'timestamp with time zone', type: 'string' },
      ratio: { default: 0.5, format: 'double precision', type: 'number' },
    });
    expect((build().definitions.regions as { properties: Record<string, { description?: string }> }).properties.name!.description).toBe('Note:\nThis is a Primary Key.<pk/>');
  });

  it('tables outside schema_apply: without row-level security the grants decide, with it only keys see them', () => {
    expect((build().definitions.legacy as { description: string }).description).toBe('Access: not set by schema_apply (row-level security off).');
    expect(Object.keys(build('svc_anon').paths)).toEqual(['/', '/regions', '/legacy']);
    expect(Object.keys(build('svc_anon').paths['/legacy']!)).toEqual(['get']);
    expect(Object.keys(build('svc_user').paths)).toEqual(['/', '/orders', '/regions', '/legacy']);
    expect(Object.keys(build('svc_user').paths['/legacy']!)).toEqual(['get', 'post', 'delete', 'patch']);
    expect(Object.keys(build('svc_user').paths['/regions']!)).toEqual(['get']);
  });
});
