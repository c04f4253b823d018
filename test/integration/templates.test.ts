// Templates and clones on one platform: the shipped Notes template installed at start and cloned (every step, the
// to-do list, the migration history's source), a shipped template built at install (a function bundled with its
// lib, a site bundled from source, its toolkit and AI settings) beside one that does not build, publishing an app of
// one's own with its options checked, the clone cap, retry and delete.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startFakeComposio, type FakeComposio } from '../fakes/composio.ts';
import { listMigrations } from '../../src/schema/service.ts';
import { bundleFunctions, TemplateBuildError } from '../../src/templates/build.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/templates');

let p: TestPlatform;
let composio: FakeComposio;
let templatesDir: string;

beforeAll(async () => {
  // Notes as shipped and the two fixtures, each a link to its folder (the way an operator selects templates).
  templatesDir = mkdtempSync(path.join(tmpdir(), 'svc-templates-'));
  symlinkSync(path.join(ROOT, 'templates/notes'), path.join(templatesDir, 'notes'), 'dir');
  for (const name of ['built', 'broken']) symlinkSync(path.join(FIXTURES, name), path.join(templatesDir, name), 'dir');
  composio = await startFakeComposio();
  p = await startTestPlatform({
    SVC_TEMPLATES_INSTALL: 'true',
    SVC_TEMPLATES_DIR: templatesDir,
    SVC_CLONES_PER_ACCOUNT: '2',
    SVC_INTEGRATIONS_BASE_URL: composio.url,
    SVC_INTEGRATIONS_API_KEY: composio.apiKey,
  });
  await p.shippedTemplates;
}, 120_000);
afterAll(async () => {
  await p?.close();
  await composio?.close();
  if (templatesDir) rmSync(templatesDir, { recursive: true, force: true });
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

describe('a shipped template built at install', () => {
  async function built(): Promise<{ app_id: string; version: string }> {
    const list = await p.api('GET', '/v1/templates');
    return list.body.templates.find((t: any) => t.title === 'Built fixture');
  }

  it('deploys each function bundled with the lib it imports', async () => {
    const { app_id } = await built();
    const res = await fetch(`${p.url}/v1/${app_id}/fn/greet?name=Ada`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ greeting: 'bundled hello, Ada' });
    const [fn] = await p.sql(`select code from functions where app_id = $1 and name = 'greet'`, [app_id]);
    // One module: the lib inlined, no import left for the sandbox to resolve.
    expect(fn.code).toContain('bundled hello');
    expect(fn.code).not.toMatch(/^\s*import\b/m);
    expect(fn.code).toMatch(/export\s*\{\s*\w+ as default\s*\}/);
  });

  it('serves the site built from source beside its static files, with no CDN and no import left', async () => {
    const { app_id } = await built();
    const site = `${p.url}/sites/${app_id}`;
    const html = await fetch(`${site}/`);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<script type="module" src="assets/main.js"></script>');
    const js = await fetch(`${site}/assets/main.js`);
    expect(js.status).toBe(200);
    const code = await js.text();
    // The site's own module and preact's render and hooks, minified into the one file.
    expect(code).toContain('built from the fixture source');
    expect(code).toContain('clicked ');
    expect(code).not.toMatch(/\bimport\s*[{*"'(]|\bfrom\s*"/);
    // The only URLs are the XML namespaces preact names; nothing is fetched at run time.
    expect(new Set(code.match(/https?:\/\/[^"'\s]+/g))).toEqual(new Set(['http://www.w3.org/2000/svg', 'http://www.w3.org/1998/Math/MathML', 'http://www.w3.org/1999/xhtml']));
    expect(code.split('\n').length).toBeLessThan(5);
    expect((await fetch(`${site}/style.css`)).status).toBe(200);
    expect((await fetch(`${site}/img/dot.svg`)).status).toBe(200);
    // The sources stay out of the deployment.
    for (const source of ['src/main.jsx', 'src/message.ts']) expect((await fetch(`${site}/${source}`)).status).toBe(404);
    const [deployment] = await p.sql(`select file_count from frontend_deployments where app_id = $1 and live`, [app_id]);
    expect(deployment.file_count).toBe(4);
  });

  it('enables its toolkits and AI settings on the template app, so the manifest says a clone gets them', async () => {
    const { app_id } = await built();
    const manifest = await p.api('GET', `/v1/templates/${app_id}`);
    expect(manifest.status).toBe(200);
    expect(manifest.body.creates).toMatchObject({ functions: [{ name: 'greet', trigger: 'http' }], site: { framework: 'static', files: 4 }, ai: { default_model: 'fixture/model-1' }, integrations: ['gmail'] });
    expect(manifest.body.owner_must_supply).toEqual([expect.objectContaining({ kind: 'integration', name: 'gmail' })]);
    const [toolkit] = await p.sql(`select toolkit, display_name, scopes from integration_toolkits where app_id = $1`, [app_id]);
    expect(toolkit).toEqual({ toolkit: 'gmail', display_name: 'Gmail', scopes: null });
  });

  it('a template that does not build is not installed, saying which import failed; the others are', async () => {
    const titles = (await p.api('GET', '/v1/templates')).body.templates.map((t: any) => t.title).sort();
    expect(titles).toEqual(['Built fixture', 'Notes']);
    const [{ n }] = await p.sql(`select count(*)::int as n from apps where name = 'Broken fixture'`);
    expect(n).toBe(0);
    const failure = await bundleFunctions(path.join(FIXTURES, 'broken'), { bad: 'functions/bad.ts' }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(TemplateBuildError);
    expect((failure as Error).message).toMatch(/functions\/bad\.ts:2:\d+: Could not resolve "\.\.\/lib\/missing\.ts"/);
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
