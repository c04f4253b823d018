// Branches and governed change (issue 44): a protected app refuses agents' direct changes and takes a person's; a
// branch copies it with masked end-user rows; changes made on the branch are diffed three ways, proposed by the agent,
// approved by the person and applied; a second branch whose base went stale conflicts and is blocked.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from './frontend-helpers.ts';
import type { SignedInPerson } from '../e2e/e2e-helpers.ts';

let p: TestPlatform;
let owner: SignedInPerson;
let app: { app_id: string; service_key: { key: string } };

const USER = '11111111-1111-4111-8111-111111111111';
const SCHEMA = {
  tables: {
    profiles: {
      access: 'user',
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        user_id: { type: 'uuid', nullable: false },
        email: { type: 'text' },
        full_name: { type: 'text' },
        bio: { type: 'text' },
      },
    },
    notes: { access: 'public', columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, body: { type: 'text' } } },
  },
};

const agent = (method: string, path: string, body?: unknown) => p.api(method, path, { body });
const person = (method: string, path: string, body?: unknown) => p.api(method, path, { body, key: null, headers: owner.headers });

async function readyBranch(parent: string, data: Record<string, unknown>): Promise<string> {
  const made = await agent('POST', `/v1/${parent}/branches`, data);
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const id = made.body.app_id as string;
  await waitFor(async () => {
    const listed = (await agent('GET', `/v1/${parent}/branches`)).body.branches.find((b: { app_id: string }) => b.app_id === id);
    if (listed.status === 'failed') throw new Error(listed.error);
    return listed.status === 'ready' ? listed : undefined;
  }, 60_000, 'branch ready');
  return id;
}

beforeAll(async () => {
  p = await startTestPlatform();
  owner = await p.owner();
  app = (await agent('POST', '/init', { name: 'Production' })).body;
  expect((await agent('POST', `/v1/${app.app_id}/schema/apply`, { schema: SCHEMA, name: 'start' })).status).toBe(200);
  const rows = [
    { user_id: USER, email: 'mia@example.com', full_name: 'Mia Example', bio: 'likes tea' },
    { user_id: USER, email: 'leo@example.com', full_name: 'Leo Example', bio: null },
  ];
  expect((await p.api('POST', `/v1/${app.app_id}/profiles`, { key: app.service_key.key, body: rows })).status).toBe(201);
  expect((await p.api('POST', `/v1/${app.app_id}/notes`, { key: app.service_key.key, body: [{ body: 'first' }] })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await p?.close();
});

describe('protected apps', () => {
  it('refuse an agent direct changes, with the branch workflow as remediation; a person with the role changes them', async () => {
    expect((await agent('PUT', `/v1/${app.app_id}/protection`, { protected: true })).body).toEqual({ app_id: app.app_id, protected: true });
    const change = { schema: { tables: { notes: { columns: { done: { type: 'boolean' } } } } }, name: 'done' };
    const refused = await agent('POST', `/v1/${app.app_id}/schema/apply`, change);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'APP_PROTECTED',
      message: `App '${app.app_id}' is protected: schema_apply (apply a schema) by an agent is refused; a person approves changes to it.`,
    });
    expect(refused.body.error.remediation).toMatch(/^Make the change on a branch: branches_create/);
    // A service key is no person either; a dry run changes nothing and stays open.
    expect((await p.api('POST', `/v1/${app.app_id}/schema/apply`, { key: app.service_key.key, body: change })).body.error.code).toBe('APP_PROTECTED');
    expect((await agent('POST', `/v1/${app.app_id}/schema/apply`, { ...change, dry_run: true })).status).toBe(200);
    expect((await agent('POST', `/v1/${app.app_id}/functions`, { name: 'f', code: 'export default () => new Response("x")' })).body.error.code).toBe('APP_PROTECTED');
    expect((await agent('POST', `/v1/${app.app_id}/frontend/deployments/files`, { framework: 'static', files: { 'index.html': 'x' } })).body.error.code).toBe('APP_PROTECTED');
    expect((await agent('DELETE', `/apps/${app.app_id}`)).body.error.code).toBe('APP_PROTECTED');
    // Every change of the app is governed, not only schema, functions and site: settings too.
    expect((await agent('PUT', `/v1/${app.app_id}/ai/config`, { defaultModel: 'openai/gpt-4o-mini' })).body.error.code).toBe('APP_PROTECTED');
    expect((await agent('PUT', `/v1/${app.app_id}/auth/settings`, { allow_signup: false })).body.error.code).toBe('APP_PROTECTED');
    expect((await agent('POST', `/v1/${app.app_id}/rag/collections`, { name: 'docs' })).body.error.code).toBe('APP_PROTECTED');
    // Nor through storage-js's own bucket routes.
    const bucket = await agent('PUT', `/v1/${app.app_id}/storage/v1/bucket/files`, { id: 'files', public: true });
    expect([bucket.status, bucket.body.statusCode]).toEqual([403, '403']);
    expect(bucket.body.message).toBe(`App '${app.app_id}' is protected: changing a bucket (storage-js) by an agent is refused; a person approves changes to it.`);
    // The app at work is not: end users' and keys' runtime calls pass.
    expect((await p.api('GET', `/v1/${app.app_id}/notes?select=body`, { key: app.service_key.key })).status).toBe(200);

    const applied = await person('POST', `/v1/${app.app_id}/schema/apply`, change);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.applied).toBe(true);
  });

  it('only a person with the admin role lifts the protection', async () => {
    const lifted = await agent('PUT', `/v1/${app.app_id}/protection`, { protected: false });
    expect([lifted.status, lifted.body.error.code]).toEqual([403, 'HUMAN_CONFIRMATION_REQUIRED']);
    expect((await agent('GET', `/v1/${app.app_id}/branches`)).body.protected).toBe(true);
  });
});

describe('a branch, changed and merged with approval', () => {
  let branch: string;
  let stale: string;

  beforeAll(async () => {
    [branch, stale] = await Promise.all([
      readyBranch(app.app_id, { data: 'sample', tables: ['profiles', 'notes'], mask: { profiles: ['email', 'full_name'] } }),
      readyBranch(app.app_id, {}),
    ]);
  }, 120_000);

  it("copies the schema and a sample of the rows, end users' personal columns masked", async () => {
    const branchApp = (await agent('GET', `/apps/${branch}`)).body;
    const key = (await agent('POST', `/apps/${branch}/keys`, {})).body.key as string;
    expect(branchApp.name).toBe('Production (branch)');
    const profiles = (await p.api('GET', `/v1/${branch}/profiles?select=user_id,email,full_name,bio&order=id`, { key })).body;
    expect(profiles).toEqual([
      { user_id: USER, email: expect.stringMatching(/^masked-[0-9a-f]{12}@example\.invalid$/), full_name: expect.stringMatching(/^masked-[0-9a-f]{12}$/), bio: 'likes tea' },
      { user_id: USER, email: expect.stringMatching(/^masked-[0-9a-f]{12}@example\.invalid$/), full_name: expect.stringMatching(/^masked-[0-9a-f]{12}$/), bio: null },
    ]);
    expect(profiles[0].email).not.toBe(profiles[1].email);
    // Keyed: the digest of the address itself is not it, so no guess can be checked against a masked value.
    expect(profiles[0].email).not.toBe(`masked-${createHash('md5').update('mia@example.com').digest('hex').slice(0, 12)}@example.invalid`);
    expect((await p.api('GET', `/v1/${branch}/notes?select=body`, { key })).body).toEqual([{ body: 'first' }]);
    // The branch is not protected: the agent changes it directly.
    const changed = await agent('POST', `/v1/${branch}/schema/apply`, {
      name: 'pinned notes',
      schema: {
        tables: { notes: { columns: { pinned: { type: 'boolean', nullable: false, default: false } }, conditions: { insert: 'length(body) <= 280' } } },
        functions: { note_count: { returns: 'bigint', volatility: 'stable', access: 'public', body: 'select count(*) from notes' } },
      },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect((await agent('POST', `/v1/${branch}/functions`, { name: 'hello', code: 'export default () => new Response("hello from the branch")' })).status).toBe(201);
    const site = await agent('POST', `/v1/${branch}/frontend/deployments/files`, { framework: 'static', files: { 'index.html': '<p>new look</p>' } });
    expect(site.status).toBe(202);
    await waitFor(async () => ((await agent('GET', `/v1/${branch}/frontend/deployments/${site.body.id}`)).body.status === 'READY' ? true : undefined), 30_000, 'branch site');
  });

  it('diffs three ways: what the merge carries over, and the SQL production runs', async () => {
    const diff = await agent('GET', `/v1/${branch}/branch/diff`);
    expect(diff.status, JSON.stringify(diff.body)).toBe(200);
    expect(diff.body.conflicts).toEqual([]);
    expect(diff.body.changes.map((c: { summary: string }) => c.summary)).toEqual([
      'function hello: added',
      'site: added',
      'SQL function note_count: added',
      'table notes, column pinned: added',
      'table notes, conditions: added',
    ]);
    expect(diff.body.statements[0]).toBe('ALTER TABLE "notes" ADD COLUMN "pinned" boolean DEFAULT false NOT NULL');
    expect(diff.body.statements).toContain('CREATE POLICY svc_condition_insert ON "notes" AS RESTRICTIVE FOR INSERT TO svc_anon, svc_user WITH CHECK (length(body) <= 280)');
    expect(diff.body).toMatchObject({ mergeable: true, destructive: [], notes: [] });
  });

  it("is proposed by the agent, approved by the person, and applied: production has the changes and keeps its rows", async () => {
    const proposed = await agent('POST', `/v1/${branch}/branch/merge`);
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
    expect(proposed.body).toMatchObject({ app_id: app.app_id, branch_app_id: branch, status: 'proposed', action_id: expect.stringMatching(/^act_/) });
    // No one proposes a merge through the ledger itself, not even the person with their substrate key.
    const substrateKey = await p.substrateKey();
    const forged = await p.api('POST', '/v1/me/substrate/actions/propose', { key: substrateKey, body: { capability: 'merge_branch', payload: { merge_id: proposed.body.merge_id } } });
    expect([forged.status, forged.body.error.message]).toEqual([403, "Capability 'merge_branch' is proposed by the platform only."]);

    const inbox = (await person('GET', '/v1/me/substrate/actions?status=proposed')).body.actions;
    const action = inbox.find((a: { action_id: string }) => a.action_id === proposed.body.action_id);
    expect(action).toMatchObject({ capability: 'merge_branch', proposer_kind: 'agent', payload: { merge_id: proposed.body.merge_id, app_id: app.app_id, branch_app_id: branch } });
    expect(action.payload.changes).toContain('table notes, column pinned: added');
    // The person sees the code the merge deploys, not only its name.
    expect(action.payload.functions).toEqual([{ name: 'hello', code: 'export default () => new Response("hello from the branch")', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(action.payload.site_digest).toMatch(/^[0-9a-f]{64}$/);

    const approved = await person('POST', `/v1/me/substrate/actions/${proposed.body.action_id}/approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'executed', result: { merge_id: proposed.body.merge_id, status: 'queued' } });
    const merged = await waitFor(async () => {
      const m = (await agent('GET', `/v1/${app.app_id}/branches`)).body.merges.find((x: { merge_id: string }) => x.merge_id === proposed.body.merge_id);
      if (m.status === 'failed') throw new Error(m.error);
      return m.status === 'merged' ? m : undefined;
    }, 60_000, 'merged');
    expect(merged.error).toBeNull();

    const schema = (await agent('GET', `/v1/${app.app_id}/schema`)).body;
    expect(schema.tables.notes.columns.pinned).toMatchObject({ type: 'boolean', nullable: false });
    expect(schema.tables.notes.conditions).toEqual({ insert: 'length(body) <= 280' });
    expect(Object.keys(schema.functions)).toEqual(['note_count']);
    expect((await agent('POST', `/v1/${app.app_id}/rpc/note_count`, {})).body).toBe(1);
    expect((await agent('GET', `/v1/${app.app_id}/functions/hello`)).status).toBe(200);
    const profiles = (await p.api('GET', `/v1/${app.app_id}/profiles?select=email&order=id`, { key: app.service_key.key })).body;
    expect(profiles).toEqual([{ email: 'mia@example.com' }, { email: 'leo@example.com' }]);
    // The branch now stands on what it merged: nothing is left to merge.
    expect((await agent('POST', `/v1/${branch}/branch/merge`)).body.error.code).toBe('NOTHING_TO_MERGE');
  });

  it('a branch whose base went stale conflicts where both changed the same thing, and nothing merges', async () => {
    expect((await agent('POST', `/v1/${stale}/schema/apply`, { name: 'pinned as text', schema: { tables: { notes: { columns: { pinned: { type: 'text' } } } } } })).status).toBe(200);
    const diff = (await agent('GET', `/v1/${stale}/branch/diff`)).body;
    expect(diff.mergeable).toBe(false);
    expect(diff.conflicts).toEqual([
      {
        unit: 'table:notes/column:pinned',
        summary: 'table notes, column pinned: changed on the branch and in production',
        base: null,
        branch: { type: 'text', primary: false, nullable: true, unique: false },
        production: { type: 'boolean', primary: false, nullable: false, unique: false, default: 'false' },
      },
    ]);
    const refused = await agent('POST', `/v1/${stale}/branch/merge`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'MERGE_CONFLICT']);
    expect(refused.body.error.details.conflicts).toHaveLength(1);
    expect((await agent('GET', `/v1/${app.app_id}/branches`)).body.merges).toHaveLength(1);
  });
});

describe('limits and expiry', () => {
  it("holds the plan's branches per app, refuses a branch of a branch, and names a branch's parent", async () => {
    const listed = (await agent('GET', `/v1/${app.app_id}/branches`)).body;
    expect(listed.branches).toHaveLength(2);
    expect(listed.parent_app_id).toBeNull();
    const third = await readyBranch(app.app_id, {});
    expect((await agent('GET', `/v1/${third}/branches`)).body).toMatchObject({ parent_app_id: app.app_id, branches: [], merges: [] });
    const snapshots = async () => (await p.sql('select count(*)::int as n from template_seed_snapshots where app_id = $1', [app.app_id]))[0].n;
    const before = await snapshots();
    const fourth = await agent('POST', `/v1/${app.app_id}/branches`, { data: 'sample', tables: ['profiles'], mask: { profiles: ['email'] } });
    expect([fourth.status, fourth.body.error.code, fourth.body.error.message]).toEqual([403, 'BRANCH_LIMIT', `App '${app.app_id}' has 3 branches, the free plan's limit.`]);
    // Refused before any row was copied.
    expect(await snapshots()).toBe(before);
    const nested = await agent('POST', `/v1/${third}/branches`, {});
    expect([nested.status, nested.body.error.code]).toEqual([400, 'BRANCH_OF_BRANCH']);
    const mixed = await agent('POST', `/v1/${app.app_id}/branches`, { data: 'none', tables: ['notes'] });
    expect([mixed.status, mixed.body.error.message]).toEqual([400, "tables, mask and rows copy rows: set data to 'seed' or 'sample' too."]);
  });

  it('deletes branches idle past their days, but not one whose merge waits for a person; a rejected one goes', async () => {
    const { branches } = (await agent('GET', `/v1/${app.app_id}/branches`)).body;
    const waiting = branches.find((b: { merged_at: string | null; name: string }) => b.merged_at === null)!.app_id as string;
    // The stale branch's conflict is resolved its way (production's column type), then a new change is proposed.
    await agent('POST', `/v1/${waiting}/schema/apply`, { name: 'back', schema: { tables: { notes: { _dropColumns: ['pinned'] } } } });
    await agent('POST', `/v1/${waiting}/schema/apply`, { name: 'tags', schema: { tables: { tags: { access: 'public', columns: { id: { type: 'bigint', primary: true } } } } } });
    const proposed = await agent('POST', `/v1/${waiting}/branch/merge`);
    expect(proposed.body.status, JSON.stringify(proposed.body)).toBe('proposed');
    const deleting = await agent('DELETE', `/v1/${waiting}/branch`);
    expect([deleting.status, deleting.body.error.code]).toEqual([409, 'BRANCH_MERGING']);
    const later = new Date(Date.now() + 8 * 86_400_000);
    expect(await p.services.branches.expireIdle(later)).toBe(2);
    expect((await agent('GET', `/v1/${app.app_id}/branches`)).body.branches.map((b: { app_id: string }) => b.app_id)).toEqual([waiting]);
    expect((await person('POST', `/v1/me/substrate/actions/${proposed.body.action_id}/reject`, { reason: 'not now' })).status).toBe(200);
    const listed = (await agent('GET', `/v1/${app.app_id}/branches`)).body;
    expect(listed.merges.find((m: { merge_id: string }) => m.merge_id === proposed.body.merge_id).status).toBe('rejected');
    expect(await p.services.branches.expireIdle(later)).toBe(1);
    expect((await agent('GET', `/v1/${app.app_id}/branches`)).body.branches).toEqual([]);
    expect((await agent('GET', `/apps/${waiting}`)).status).toBe(404);
  });
});

describe('merges under pressure (an unprotected app, merged at once)', () => {
  let parent: string;
  const table = { id: { type: 'bigint', primary: true }, body: { type: 'text' } };

  beforeAll(async () => {
    parent = (await agent('POST', '/init', { name: 'Busy' })).body.app_id;
    expect((await agent('POST', `/v1/${parent}/schema/apply`, { name: 'start', schema: { tables: { items: { access: 'public', columns: table } } } })).status).toBe(200);
  }, 30_000);

  const mergeDone = (id: string) =>
    waitFor(async () => {
      const m = (await agent('GET', `/v1/${parent}/branches`)).body.merges.find((x: { merge_id: string }) => x.merge_id === id);
      return m.status === 'merged' || m.status === 'failed' ? m : undefined;
    }, 60_000, 'merge done');

  it('two merges of two branches into one app run one after the other: the second finds production moved and changes nothing', async () => {
    const [one, two] = await Promise.all([readyBranch(parent, {}), readyBranch(parent, {})]);
    await agent('POST', `/v1/${one}/schema/apply`, { name: 'short', schema: { tables: { items: { conditions: { insert: 'length(body) < 10' } } } } });
    await agent('POST', `/v1/${two}/schema/apply`, { name: 'long', schema: { tables: { items: { conditions: { insert: 'length(body) > 1000' } } } } });
    const asked = await Promise.all([agent('POST', `/v1/${one}/branch/merge`), agent('POST', `/v1/${two}/branch/merge`)]);
    // Both planned against the same production (the second to run then finds it moved), or one planned after the
    // other had merged (it then conflicts at once): either way exactly one lands.
    const queued = asked.filter((r) => r.status === 202);
    for (const r of asked.filter((x) => x.status !== 202)) expect([r.status, r.body.error.code]).toEqual([409, 'MERGE_CONFLICT']);
    const done = await Promise.all(queued.map((r) => mergeDone(r.body.merge_id)));
    expect(done.filter((m) => m.status === 'merged')).toHaveLength(1);
    for (const m of done.filter((x) => x.status !== 'merged')) expect(m).toMatchObject({ status: 'failed', error: 'Production changed after this merge was planned; nothing was merged.' });
    const winner = done.find((m) => m.status === 'merged').branch_app_id === one ? 'length(body) < 10' : 'length(body) > 1000';
    expect((await agent('GET', `/v1/${parent}/schema`)).body.tables.items.conditions).toEqual({ insert: winner });
  });

  it("a merge whose branch site is gone by the time it runs fails before changing anything", async () => {
    const branch = await readyBranch(parent, {});
    await agent('POST', `/v1/${branch}/schema/apply`, { name: 'flag', schema: { tables: { items: { columns: { flagged: { type: 'boolean' } } } } } });
    const site = await agent('POST', `/v1/${branch}/frontend/deployments/files`, { framework: 'static', files: { 'index.html': 'v2' } });
    await waitFor(async () => ((await agent('GET', `/v1/${branch}/frontend/deployments/${site.body.id}`)).body.status === 'READY' ? true : undefined), 30_000, 'site');
    // Proposed (the app is protected for this one), then the branch's site is deleted before the person approves.
    expect((await agent('PUT', `/v1/${parent}/protection`, { protected: true })).status).toBe(200);
    const proposed = (await agent('POST', `/v1/${branch}/branch/merge`)).body;
    expect((await agent('DELETE', `/v1/${branch}/frontend/deployments/${site.body.id}`)).status).toBe(200);
    expect((await person('POST', `/v1/me/substrate/actions/${proposed.action_id}/approve`)).status).toBe(200);
    const failed = await mergeDone(proposed.merge_id);
    expect(failed).toMatchObject({ status: 'failed', error: "The branch's site deployment is gone; nothing more was merged." });
    expect((await agent('GET', `/v1/${parent}/schema`)).body.tables.items.columns.flagged).toBeUndefined();
  });

  it('deleting an app deletes its branches', async () => {
    const { branches } = (await agent('GET', `/v1/${parent}/branches`)).body;
    expect(branches.length).toBeGreaterThan(0);
    expect((await person('DELETE', `/apps/${parent}`)).status).toBe(200);
    for (const b of branches) expect((await agent('GET', `/apps/${b.app_id}`)).status).toBe(404);
  });
});
