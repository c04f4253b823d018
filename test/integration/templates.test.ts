// Templates and clones on one platform: the shipped Notes template installed at start and cloned (every step, the
// to-do list, the migration history's source), publishing an app of one's own with its options checked, the clone
// cap, retry and delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { listMigrations } from '../../src/schema/service.ts';

let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_TEMPLATES_INSTALL: 'true', SVC_CLONES_PER_ACCOUNT: '2' });
  await p.shippedTemplates;
}, 120_000);
afterAll(async () => {
  await p?.close();
});

async function untilSettled(cloneId: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const { body } = await p.api('GET', `/v1/clones/${cloneId}`);
    if (process.env.DEBUG_CLONE) console.log(body.status, body.error);
    if (body.status === 'ready' || body.status === 'failed') return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`clone ${cloneId} did not settle`);
}

describe('the shipped Notes template', () => {
  it('is installed at start as a public template whose manifest says what a clone creates', async () => {
    const list = await p.api('GET', '/v1/templates');
    expect(list.status).toBe(200);
    const notes = list.body.templates.find((t: any) => t.title === 'Notes');
    expect(notes).toMatchObject({ visibility: 'public', shipped: true });
    expect(notes.version).toMatch(/^[0-9a-f]{12}$/);
    const manifest = await p.api('GET', `/v1/templates/${notes.app_id}`);
    expect(manifest.status).toBe(200);
    expect(manifest.body.creates).toMatchObject({
      tables: [
        { name: 'notes', access: 'user', seed_rows: null },
        { name: 'tips', access: 'public', seed_rows: 3 },
      ],
      migrations: 1,
      functions: [
        { name: 'summary', trigger: 'http' },
        { name: 'tidy', trigger: 'cron', schedule: '17 3 * * *' },
      ],
      site: { framework: 'static', files: 1 },
      rag_collections: [{ name: 'help', documents: 1 }],
      billing: { plans: [], products: [] },
    });
    expect(manifest.body.owner_must_supply).toEqual([]);
  });

  it('clones into a new app: schema with its source, functions, site, seed rows, RAG collection', async () => {
    const notes = (await p.api('GET', '/v1/templates')).body.templates.find((t: any) => t.title === 'Notes');
    const res = await p.api('POST', `/v1/templates/${notes.app_id}/clone`, { body: { name: 'My notes' } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ name: 'My notes', region: 'local', status: 'queued', template: { app_id: notes.app_id, version: notes.version } });
    expect(res.body.poll_url).toBe(`${p.services.config.baseUrl}/v1/clones/${res.body.clone_id}`);
    // Invisible until ready.
    const hidden = await p.api('GET', `/apps/${res.body.app_id}`);
    expect([403, 404]).toContain(hidden.status);

    const done = await untilSettled(res.body.clone_id);
    expect(done).toMatchObject({ status: 'ready', failed_step: null, error: null, todo: [] });
    const appId = done.app_id;
    const app = await p.api('GET', `/apps/${appId}`);
    expect(app.status).toBe(200);
    expect(app.body).toMatchObject({ name: 'My notes', region: 'local' });

    const migrations = await p.api('GET', `/v1/${appId}/migrations`);
    expect(migrations.body.migrations).toHaveLength(1);
    expect(migrations.body.migrations[0].source).toMatchObject({ template_app_id: notes.app_id, template_version: notes.version });
    // The template is the platform's own app: its history read directly.
    const original = await listMigrations(p.services.databases.sql(notes.app_id));
    expect(migrations.body.migrations[0]).toMatchObject({ name: original[0]!.name, checksum: original[0]!.checksum, statements: original[0]!.statements });

    const fns = await p.api('GET', `/v1/${appId}/functions`);
    expect(fns.body.functions.map((f: any) => f.name).sort()).toEqual(['summary', 'tidy']);
    const tips = await p.api('GET', `/v1/${appId}/tips?select=id,text&order=id`, { key: null });
    expect(tips.status).toBe(200);
    expect(tips.body).toHaveLength(3);

    const site = await fetch(`${p.url}/sites/${appId}/`);
    expect(site.status).toBe(200);
    expect(await site.text()).toContain('<h1>Notes</h1>');

    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { key: null, body: { email: 'a@example.com', password: 'long enough pw' } });
    expect(signup.status).toBe(201);
    const summary = await fetch(`${p.url}/v1/${appId}/fn/summary`, { headers: { authorization: `Bearer ${signup.body.access_token}` } });
    expect(summary.status).toBe(200);
    expect(await summary.json()).toEqual({ notes: 0, open: 0, done: 0 });

    // The cron function tidies done notes older than KEEP_DONE_DAYS (a copied variable): as the app, through ctx.data.
    const userId = signup.body.user.id;
    await p.services.databases.sql(appId).query(
      `insert into notes (user_id, title, done, done_at) values ($1, 'old', true, now() - interval '30 days'), ($1, 'recent', true, now())`,
      [userId],
    );
    const tidy = await p.api('POST', `/v1/${appId}/functions/tidy/invoke`, { body: { body: { scheduled_at: new Date().toISOString() } } });
    expect(tidy.status, JSON.stringify(tidy.body)).toBe(200);
    expect(tidy.body).toMatchObject({ status: 200, body: { deleted: 1, error: null } });

    // A ready clone is an app: nothing to retry, and it is deleted as an app.
    const retry = await p.api('POST', `/v1/clones/${res.body.clone_id}/retry`);
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('CONFLICT');
    const del = await p.api('DELETE', `/v1/clones/${res.body.clone_id}`);
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('CONFLICT');

    const collections = await p.api('GET', `/v1/${appId}/rag/collections`);
    expect(collections.body.map((c: any) => c.name)).toEqual(['help']);
  });
});

describe('publishing an app as a template', () => {
  it('refuses options naming what the app lacks, and public templates unless the operator allows them', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'mine' } })).body;
    const bad = await p.api('POST', '/v1/templates', { body: { app_id: app.app_id, title: 'Mine', options: { seed_tables: ['nope'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.message).toBe('Unknown seed_tables: nope. The app has: none.');
    const pub = await p.api('POST', '/v1/templates', { body: { app_id: app.app_id, title: 'Mine', visibility: 'public' } });
    expect(pub.status).toBe(403);
    expect(pub.body.error.code).toBe('TEMPLATES_PUBLIC_DISABLED');
    const ok = await p.api('POST', '/v1/templates', { body: { app_id: app.app_id, title: 'Mine' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ app_id: app.app_id, title: 'Mine', visibility: 'account', shipped: false });
    const unknown = await p.api('POST', '/v1/templates', { body: { app_id: app.app_id, title: 'Mine', colour: 'red' } });
    expect(unknown.status).toBe(400);
    const gone = await p.api('DELETE', `/v1/templates/${app.app_id}`);
    expect(gone.status).toBe(200);
    expect((await p.api('GET', `/v1/templates/${app.app_id}`)).status).toBe(404);
  });

  it('an unknown region is a 400 naming the valid ones', async () => {
    const res = await p.api('POST', '/init', { body: { name: 'x', region: 'mars' } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("Unknown region 'mars'. Regions: local (omit region for local).");
    const regions = await p.api('GET', '/regions');
    expect(regions.body).toEqual({ regions: [{ name: 'local', default: true }] });
  });
});

describe('clone failures', () => {
  it('a failing step gives failed with the reason; retry and delete work; the cap holds', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'breaks' } })).body;
    const deploy = await p.api('POST', `/v1/${app.app_id}/functions`, { body: { name: 'ok', code: 'export default () => new Response("ok")' } });
    expect(deploy.status).toBe(201);
    await p.api('POST', '/v1/templates', { body: { app_id: app.app_id, title: 'Breaks' } });
    // The template's stored code stops loading: every clone's functions step fails the same way.
    await p.sql(`update functions set code = 'export default 42' where app_id = $1`, [app.app_id]);

    const first = (await p.api('POST', `/v1/templates/${app.app_id}/clone`, { body: { name: 'c1' } })).body;
    const second = (await p.api('POST', `/v1/templates/${app.app_id}/clone`, { body: { name: 'c2' } })).body;
    const failed = await untilSettled(first.clone_id);
    expect(failed).toMatchObject({ status: 'failed', failed_step: 'functions' });
    expect(failed.error).toContain('default');
    const retried = await p.api('POST', `/v1/clones/${first.clone_id}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe('functions');
    expect((await untilSettled(first.clone_id)).status).toBe('failed');

    await p.sql(`update functions set code = 'export default () => new Response("fixed")' where app_id = $1`, [app.app_id]);
    await p.api('POST', `/v1/clones/${first.clone_id}/retry`);
    // The clone copies the template as it was when asked for: still the broken code.
    expect((await untilSettled(first.clone_id)).status).toBe('failed');

    const del = await p.api('DELETE', `/v1/clones/${first.clone_id}`);
    expect(del.status).toBe(200);
    expect((await p.api('GET', `/v1/clones/${first.clone_id}`)).status).toBe(404);
    expect(await p.sql('select 1 from apps where id = $1', [first.app_id])).toEqual([]);
    await untilSettled(second.clone_id);

    // The cap (2 here): two clones in progress (held at a step with no job), and the third request is refused.
    const third = (await p.api('POST', `/v1/templates/${app.app_id}/clone`, { body: { name: 'c3' } })).body;
    await untilSettled(third.clone_id);
    await p.sql(`update template_clones set status = 'schema' where id = any($1::uuid[])`, [[second.clone_id, third.clone_id]]);
    const refused = await p.api('POST', `/v1/templates/${app.app_id}/clone`, { body: { name: 'c4' } });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('CLONE_LIMIT');
    expect(await p.sql('select count(*)::int as n from apps where name = $1', ['c4'])).toEqual([{ n: 0 }]);
  });
});
