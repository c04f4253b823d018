// What a clone's seed step copies: the rows the publisher published, pinned when the template was published, never
// rows written after it, never end users' rows (a user_id or a group's column set) unless the publisher lists them;
// republishing takes a new snapshot, and a clone asked for before keeps its own until it is ready. A seed over the
// limits is refused at publish with 413 TEMPLATE_SEED_TOO_LARGE, and a large seed passes through the process in
// bounded batches: the event loop is never held for 200 ms while it is published and cloned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { SEED_MAX_BYTES, SEED_MAX_ROWS } from '../../src/templates/seed.ts';

let p: TestPlatform;
let cloner: string;
let app: { app_id: string; service_key: { key: string } };
let eve: string;
let eveId: string;
const WORKSPACE = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

const SCHEMA = {
  tables: {
    // Public tips: the publisher's (user_id null) and each end user's own (user_id filled by the platform).
    tips: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, text: { type: 'text', nullable: false }, user_id: { type: 'uuid' } },
      access: 'public',
    },
    workspaces: {
      columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, name: { type: 'text', nullable: false } },
      access: { members: 'members', column: 'id', key: 'workspace_id', write: 'service' },
    },
    members: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        workspace_id: { type: 'uuid', nullable: false, references: { table: 'workspaces', column: 'id', onDelete: 'cascade' } },
        user_id: { type: 'uuid', nullable: false },
      },
      access: { members: 'members', column: 'workspace_id', write: 'service' },
    },
    big: { columns: { id: { type: 'bigint', primary: true, identity: true }, body: { type: 'text', nullable: false } }, access: 'service' },
    many: { columns: { id: { type: 'bigint', primary: true } }, access: 'service' },
  },
};

async function newApp(name: string, schema: unknown): Promise<{ app_id: string; service_key: { key: string } }> {
  const init = await p.api('POST', '/init', { body: { name } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  const applied = await p.api('POST', `/v1/${init.body.app_id}/schema/apply`, { body: { schema }, key: init.body.service_key.key });
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
  return init.body;
}

const write = (path: string, key: string, body: unknown) => p.api('POST', `/v1/${app.app_id}/${path}`, { key, body });
const publish = (appId: string, options: Record<string, unknown>) => p.api('POST', '/v1/templates', { body: { app_id: appId, title: 'Seeded', visibility: 'public', options } });
const tableOf = (manifest: any, name: string) => manifest.creates.tables.find((t: any) => t.name === name);
const appRows = async (appId: string, text: string): Promise<any[]> => (await p.services.databases.sql(appId).query(text)).rows;

/** Polls the clone until it is ready (its app_id); a failed one throws its step and reason. */
async function untilReady(cloneId: string): Promise<string> {
  for (;;) {
    const { body } = await p.api('GET', `/v1/clones/${cloneId}`, { key: cloner });
    if (body.status === 'failed') throw new Error(`clone failed at ${body.failed_step}: ${body.error}`);
    if (body.status === 'ready') return body.app_id;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function cloneReady(templateAppId: string, name: string): Promise<string> {
  const started = await p.api('POST', `/v1/templates/${templateAppId}/clone`, { key: cloner, body: { name } });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  return untilReady(started.body.clone_id);
}

beforeAll(async () => {
  p = await startTestPlatform({ SVC_TEMPLATES_PUBLIC: 'true' });
  const account = (await p.sql(`insert into accounts (name) values ('cloner') returning id`))[0].id;
  cloner = (await p.services.keys.create('platform', account, 'cloner')).key;
  app = await newApp('Seeded', SCHEMA);
  const signup = await p.api('POST', `/v1/${app.app_id}/auth/signup`, { key: null, body: { email: 'eve@example.com', password: 'long enough pw' } });
  expect(signup.status).toBe(201);
  eve = signup.body.access_token;
  eveId = signup.body.user.id;
}, 60_000);
afterAll(async () => {
  await p?.close();
});

describe('a clone copies what the publisher published', () => {
  let version: string;

  it("publishing pins the publisher's rows and leaves out end users' rows and groups' rows", async () => {
    const key = app.service_key.key;
    expect((await write('tips', key, { text: 'from the publisher' })).status).toBe(201);
    expect((await write('tips', eve, { text: 'eve before publishing' })).status).toBe(201);
    expect((await write('workspaces', key, { id: WORKSPACE, name: "Eve's team" })).status).toBe(201);
    expect((await write('members', key, { workspace_id: WORKSPACE, user_id: eveId })).status).toBe(201);

    const published = await publish(app.app_id, { seed_tables: ['workspaces', 'members', 'tips'] });
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect([tableOf(published.body, 'tips').seed_rows, tableOf(published.body, 'workspaces').seed_rows, tableOf(published.body, 'members').seed_rows]).toEqual([1, 0, 0]);
    version = published.body.version;
  });

  it('rows written after publishing, by end users or by the publisher, change neither the manifest nor a clone', async () => {
    expect((await write('tips', eve, { text: 'eve after publishing' })).status).toBe(201);
    expect((await write('tips', app.service_key.key, { text: 'publisher after publishing' })).status).toBe(201);
    const manifest = await p.api('GET', `/v1/templates/${app.app_id}`, { key: cloner });
    expect(manifest.status).toBe(200);
    expect(tableOf(manifest.body, 'tips').seed_rows).toBe(1);
    expect(manifest.body.version).toBe(version);

    const clone = await cloneReady(app.app_id, 'first clone');
    expect(await appRows(clone, 'select text, user_id from tips order by id')).toEqual([{ text: 'from the publisher', user_id: null }]);
    expect(await appRows(clone, 'select * from workspaces')).toEqual([]);
    expect(await appRows(clone, 'select * from members')).toEqual([]);
    // The id sequence moved past the copied ids.
    await p.services.databases.sql(clone).query(`insert into tips (text) values ('new')`);
    expect((await appRows(clone, 'select count(distinct id)::int as n from tips'))[0].n).toBe(2);
  });

  it('republishing takes a new snapshot: the publisher\'s later row, still no end user\'s', async () => {
    const republished = await publish(app.app_id, { seed_tables: ['workspaces', 'members', 'tips'] });
    expect(republished.status).toBe(200);
    expect(tableOf(republished.body, 'tips').seed_rows).toBe(2);
    expect(republished.body.version).not.toBe(version);
    const clone = await cloneReady(app.app_id, 'second clone');
    expect(await appRows(clone, 'select text, user_id from tips order by id')).toEqual([
      { text: 'from the publisher', user_id: null },
      { text: 'publisher after publishing', user_id: null },
    ]);
    // One snapshot kept: the one published last (no clone in progress holds the first).
    expect(await p.sql('select count(*)::int as n from template_seed_snapshots where app_id = $1', [app.app_id])).toEqual([{ n: 1 }]);
  });

  it('a clone keeps the snapshot it was asked for: its seed step retried after a republish copies the rows of then', async () => {
    const asked = await publish(app.app_id, { seed_tables: ['tips'] });
    const clone = await cloneReady(app.app_id, 'retried clone');
    const [row] = await p.sql(`select id from template_clones where app_id = $1`, [clone]);
    // The seed step failed (as a lost connection would leave it), then the template is published with another row.
    await p.sql(`update template_clones set status = 'failed', failed_step = 'seed' where id = $1`, [row.id]);
    await p.services.databases.sql(clone).query('delete from tips');
    expect((await write('tips', app.service_key.key, { text: 'published later' })).status).toBe(201);
    const later = await publish(app.app_id, { seed_tables: ['tips'] });
    expect(tableOf(later.body, 'tips').seed_rows).toBe(tableOf(asked.body, 'tips').seed_rows + 1);
    expect(await p.sql('select count(*)::int as n from template_seed_snapshots where app_id = $1', [app.app_id])).toEqual([{ n: 2 }]);

    expect((await p.api('POST', `/v1/clones/${row.id}/retry`, { key: cloner })).status).toBe(202);
    await untilReady(row.id);
    expect((await appRows(clone, 'select text from tips order by id')).map((t) => t.text)).toEqual(['from the publisher', 'publisher after publishing']);
    // Ready, the clone no longer needs its snapshot: only the template's current one is left.
    expect(await p.sql('select count(*)::int as n from template_seed_snapshots where app_id = $1', [app.app_id])).toEqual([{ n: 1 }]);
  });

  it("end users' rows cross only when the publisher lists their table, without their user_id", async () => {
    const unknown = await publish(app.app_id, { seed_tables: ['tips'], seed_end_user_rows: ['members'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toBe('Unknown seed_end_user_rows: members. options.seed_tables has: tips.');
    // Memberships cannot exist without their end users (user_id is required): listing them is refused.
    const required = await publish(app.app_id, { seed_tables: ['workspaces', 'members', 'tips'], seed_end_user_rows: ['members'] });
    expect(required.status).toBe(400);
    expect(required.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: "Seed table 'members' requires user_id: its end users' rows cannot be pinned without their end users.",
    });
    const listed = await publish(app.app_id, { seed_tables: ['workspaces', 'members', 'tips'], seed_end_user_rows: ['tips', 'workspaces'] });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect([tableOf(listed.body, 'tips').seed_rows, tableOf(listed.body, 'workspaces').seed_rows, tableOf(listed.body, 'members').seed_rows]).toEqual([5, 1, 0]);
    const clone = await cloneReady(app.app_id, 'third clone');
    expect(await appRows(clone, 'select text, user_id from tips order by id')).toEqual([
      { text: 'from the publisher', user_id: null },
      { text: 'eve before publishing', user_id: null },
      { text: 'eve after publishing', user_id: null },
      { text: 'publisher after publishing', user_id: null },
      { text: 'published later', user_id: null },
    ]);
    expect(await appRows(clone, 'select id, name from workspaces')).toEqual([{ id: WORKSPACE, name: "Eve's team" }]);
    expect(await appRows(clone, 'select * from members')).toEqual([]);
  });
});

describe('the limits of a seed', () => {
  it(`a seed over ${SEED_MAX_BYTES} bytes is refused at publish with 413, and the template stays as it was`, async () => {
    const before = await publish(app.app_id, { seed_tables: ['tips'] });
    expect(before.status).toBe(200);
    // Rows of 1 MiB each, past the limit.
    await p.services.databases.sql(app.app_id).query(`insert into big (body) select repeat(md5(i::text), 32768) from generate_series(1, $1) i`, [SEED_MAX_BYTES / 1_048_576 + 1]);
    const refused = await publish(app.app_id, { seed_tables: ['tips', 'big'] });
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('TEMPLATE_SEED_TOO_LARGE');
    expect(refused.body.error.message).toMatch(new RegExp(`^The seed rows to publish take \\d+ bytes; a template's seed holds at most ${SEED_MAX_BYTES} bytes \\(64 MiB\\)\\.$`));
    const manifest = await p.api('GET', `/v1/templates/${app.app_id}`);
    expect(manifest.body.version).toBe(before.body.version);
    expect(tableOf(manifest.body, 'big').seed_rows).toBeNull();
  });

  it(`a seed table of more than ${SEED_MAX_ROWS} rows is refused at publish with 413`, async () => {
    await p.services.databases.sql(app.app_id).query(`insert into many select generate_series(1, $1)`, [SEED_MAX_ROWS + 1]);
    const refused = await publish(app.app_id, { seed_tables: ['many'] });
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe('TEMPLATE_SEED_TOO_LARGE');
    expect(refused.body.error.message).toBe(`Seed table 'many' has ${SEED_MAX_ROWS + 1} rows to publish; a seed table holds at most ${SEED_MAX_ROWS}.`);
  });
});

describe('a large seed', () => {
  it('is published and cloned without holding the event loop for 200 ms', async () => {
    const large = await newApp('Large seed', { tables: { docs: SCHEMA.tables.big } });
    // 40 rows of 1 MiB as JSON and one of 16 MiB, of quotes, backslashes, newlines and tabs (each escaped in JSON): 56 MiB,
    // under the limit.
    await p.services.databases.sql(large.app_id).query(
      `insert into docs (body) select repeat(E'"\\\\\\n\\t', case when i = 20 then 2097152 else 131072 end) from generate_series(1, 41) i`,
    );
    const published = await withEventLoopDelay(() => publish(large.app_id, { seed_tables: ['docs'] }));
    expect(published.result.status, JSON.stringify(published.result.body)).toBe(200);
    const cloned = await withEventLoopDelay(() => cloneReady(large.app_id, 'large clone'));
    console.log(`event loop max delay: publishing ${published.maxDelayMs.toFixed(0)} ms, cloning ${cloned.maxDelayMs.toFixed(0)} ms`);
    const digest = 'select count(*)::int as n, md5(string_agg(body, \'\' order by id)) as md5 from docs';
    expect(await appRows(cloned.result, digest)).toEqual(await appRows(large.app_id, digest));
    expect(published.maxDelayMs).toBeLessThan(200);
    expect(cloned.maxDelayMs).toBeLessThan(200);
  }, 120_000);
});
