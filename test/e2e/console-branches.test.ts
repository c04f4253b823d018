// Branches and governed change in the console (issue 44) in Debian's Chromium against the platform started as `npm
// start` starts it. The owner protects an app holding a row on its Branches tab; an agent (the platform key over
// REST) branches it twice, adds a column on one branch and asks for its merge, which a protected app turns into a
// proposal. The branch's own page shows the diff against its parent; the owner reads the merge's change and SQL on
// the Approvals page and approves; the merge runs, production has the column and keeps its row, and the Branches tab
// lists the branches and the merge. Merging the merged branch again from its page shows the API's refusal (nothing is
// left); the other branch, which added the same column differently, shows the conflict and its merge is refused. A
// merge that drops a column shows the destructive-change warning, and the owner rejects it.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { heading, nav, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';
import { request } from './e2e-helpers.ts';

const NOTES = { tables: { notes: { access: 'public', columns: { id: { type: 'bigint', primary: true, identity: true }, body: { type: 'text' }, scratch: { type: 'text' } } } } };
const PINNED = { tables: { notes: { columns: { pinned: { type: 'boolean', nullable: false, default: false } } } } };
const PINNED_AS_TEXT = { tables: { notes: { columns: { pinned: { type: 'text' } } } } };
const NO_SCRATCH = { tables: { notes: { _dropColumns: ['scratch'] } } };
const ADD_PINNED = 'ALTER TABLE "notes" ADD COLUMN "pinned" boolean DEFAULT false NOT NULL';

/** CONSOLE_SCREENSHOTS=1 also saves the merge as Approvals shows it and the Branches tab to docs/screenshots/ (docs/branches.md shows them). */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const shot = async (page: Page, name: string) => {
  if (SCREENSHOTS) await page.screenshot({ path: path.resolve(import.meta.dirname, `../../docs/screenshots/console-${name}.png`) });
};

let h: ConsoleHarness;
let app: { appId: string; serviceKey: string };

/** The agent: the platform key over REST. */
const agent = (method: string, path: string, body?: unknown) => request(h.server.url, path, { method, key: h.server.platformKey, body });

/** The value `probe` finds (undefined: not yet), polled for up to `timeout` ms. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeout = 30_000): Promise<T> =>
  vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`no ${what} yet`);
      return value;
    },
    { timeout, interval: 100 },
  );

/** The parent's branches list as the agent reads it. */
const listed = async () => {
  const res = await agent('GET', `/v1/${app.appId}/branches`);
  expect(res.status, res.text).toBe(200);
  return res.json as { protected: boolean; branches: Array<{ app_id: string; status: string; error: string | null }>; merges: Array<{ merge_id: string; status: string; error: string | null }> };
};

/** A branch the agent makes, once its copy is ready: its app_id. */
async function readyBranch(name: string): Promise<string> {
  const made = await agent('POST', `/v1/${app.appId}/branches`, { name });
  expect(made.status, made.text).toBe(201);
  expect(made.json).toMatchObject({ parent_app_id: app.appId, name, data: 'none' });
  const id = made.json.app_id as string;
  await until(
    `ready branch ${name}`,
    async () => {
      const b = (await listed()).branches.find((x) => x.app_id === id)!;
      if (b.status === 'failed') throw new Error(`branch ${name} failed: ${b.error}`);
      return b.status === 'ready' ? b : undefined;
    },
    60_000,
  );
  return id;
}

/** The agent's schema apply on a branch. */
async function change(branch: string, schema: unknown): Promise<void> {
  const applied = await agent('POST', `/v1/${branch}/schema/apply`, { schema, name: 'branch change' });
  expect(applied.status, applied.text).toBe(200);
}

/** The agent asks for a branch's merge; into the protected app it is proposed. */
async function proposeMerge(branch: string): Promise<{ merge_id: string; action_id: string; changes: string[]; statements: string[]; destructive: string[] }> {
  const proposed = await agent('POST', `/v1/${branch}/branch/merge`);
  expect(proposed.status, proposed.text).toBe(202);
  expect(proposed.json).toMatchObject({ app_id: app.appId, branch_app_id: branch, status: 'proposed', action_id: expect.stringMatching(/^act_/) });
  return proposed.json;
}

/** The merge once it reaches `status` (a failure or another end fails at once). */
const mergeReaches = (mergeId: string, status: string) =>
  until(
    `${status} merge`,
    async () => {
      const m = (await listed()).merges.find((x) => x.merge_id === mergeId)!;
      if (m.status === status) return m;
      if (m.status === 'failed' || m.status === 'rejected' || m.status === 'merged') throw new Error(`merge ${m.status}: ${m.error}`);
      return undefined;
    },
    60_000,
  );

/** A pending proposal on the Approvals page, found by its action id. */
const proposal = (page: Page, actionId: string) =>
  page.getByRole('list', { name: 'Pending proposals' }).getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(actionId), level: 2 }) });

const openApp = async (page: Page, appId: string, name: string) => {
  await page.goto(`${h.consoleUrl}#/apps/${appId}`);
  await heading(page, name);
  await tab(page, 'App', 'Branches');
  await page.getByRole('heading', { name: 'Branches', level: 2 }).waitFor();
};

beforeAll(async () => {
  h = await startConsole();
  app = await h.createApp('Notes');
  const applied = await agent('POST', `/v1/${app.appId}/schema/apply`, { schema: NOTES, name: 'notes' });
  expect(applied.status, applied.text).toBe(200);
  const row = await request(h.server.url, `/v1/${app.appId}/notes`, { method: 'POST', key: app.serviceKey, body: [{ body: 'first' }] });
  expect(row.status, row.text).toBe(201);
}, 90_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail') await h?.owner.screenshot({ path: `/tmp/console-branches-${t.task.name.slice(0, 24).replace(/\W+/g, '-')}.png` }).catch(() => {});
});
afterAll(async () => {
  await h?.close();
});

describe('branches in the console', () => {
  let branchId: string;
  let staleId: string;
  let merge: Awaited<ReturnType<typeof proposeMerge>>;

  it('the owner protects the app on its Branches tab; an agent is then refused a direct change', async () => {
    const page = h.owner;
    await openApp(page, app.appId, 'Notes');
    await page.getByText('No branches.').waitFor();
    expect(await page.locator('#protection-state').textContent()).toBe('Not protected. Agents change this app directly.');
    await page.getByRole('button', { name: 'Protect this app' }).click();
    await page.getByRole('button', { name: 'Lift the protection' }).waitFor();
    expect(await page.locator('#protection-state').textContent()).toMatch(/^Protected\. Agents \(platform keys, OAuth clients, MCP\) cannot change this app directly/);
    expect((await listed()).protected).toBe(true);
    const refused = await agent('POST', `/v1/${app.appId}/schema/apply`, { schema: PINNED, name: 'pinned' });
    expect([refused.status, refused.json.error.code]).toEqual([403, 'APP_PROTECTED']);
  });

  it('an agent branches the app twice, adds a column on one branch and asks for its merge: it is proposed', async () => {
    [branchId, staleId] = await Promise.all([readyBranch('Notes pinned'), readyBranch('Notes stale')]);
    await change(branchId, PINNED);
    await change(staleId, PINNED_AS_TEXT);
    merge = await proposeMerge(branchId);
    expect(merge.changes).toEqual(['table notes, column pinned: added']);
  });

  it("the branch's page shows its diff against the parent", async () => {
    const page = h.owner;
    await openApp(page, branchId, 'Notes pinned');
    await page.getByText('This app is a branch of Notes.').waitFor();
    await page.getByRole('heading', { name: 'Compared with Notes', level: 3 }).waitFor();
    expect(await page.getByRole('list', { name: 'Changes' }).getByRole('listitem').allTextContents()).toEqual(['table notes, column pinned: added']);
    expect(await page.locator('pre.sql').textContent()).toBe(`${ADD_PINNED};`);
    expect(await page.getByRole('note').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Merge into Notes' }).isVisible()).toBe(true);
  });

  it('the owner reads the merge on the Approvals page and approves it; production gets the column and keeps its row', async () => {
    const page = h.owner;
    await nav(page, 'Approvals');
    await heading(page, 'Approvals');
    const item = proposal(page, merge.action_id);
    await item.getByRole('heading', { name: 'Merge branch Notes pinned into Notes', level: 3 }).waitFor();
    expect(await item.getByRole('list', { name: 'Changes' }).getByRole('listitem').allTextContents()).toEqual(['table notes, column pinned: added']);
    expect(await item.locator('pre.sql').textContent()).toBe(`${ADD_PINNED};`);
    // Adding a column destroys nothing: no warning.
    expect(await item.getByRole('note').count()).toBe(0);
    expect(await item.getByRole('link', { name: 'Notes pinned' }).getAttribute('href')).toBe(`#/apps/${branchId}/branches`);
    await shot(page, 'merge-approval');

    await item.getByRole('button', { name: `Approve ${merge.action_id}` }).click();
    await item.waitFor({ state: 'detached' });
    const merged = await mergeReaches(merge.merge_id, 'merged');
    expect(merged.error).toBeNull();
    const schema = await agent('GET', `/v1/${app.appId}/schema`);
    expect(schema.json.tables.notes.columns.pinned).toMatchObject({ type: 'boolean', nullable: false });
    const rows = await request(h.server.url, `/v1/${app.appId}/notes?select=body,pinned`, { key: app.serviceKey });
    expect(rows.json).toEqual([{ body: 'first', pinned: false }]);
  });

  it('the Branches tab lists the branch and the merge, the app still protected; the branch has nothing left to merge', async () => {
    const page = h.owner;
    await openApp(page, app.appId, 'Notes');
    expect(await page.locator('#protection-state strong').textContent()).toBe('Protected.');
    const branchRow = page.getByRole('table', { name: 'Branches' }).locator(`tr[data-branch="${branchId}"]`);
    await branchRow.waitFor();
    expect(await branchRow.getByRole('link', { name: 'Notes pinned' }).getAttribute('href')).toBe(`#/apps/${branchId}`);
    expect(await branchRow.locator('td:nth-child(2)').textContent()).toMatch(/^ready \(merged /);
    const mergeRow = page.getByRole('table', { name: 'Merges' }).locator(`tr[data-merge="${merge.merge_id}"]`);
    expect(await mergeRow.locator('td:nth-child(3)').textContent()).toBe('merged');
    expect(await mergeRow.locator('td:nth-child(4) li').allTextContents()).toEqual(['table notes, column pinned: added']);
    await shot(page, 'branches');

    await branchRow.getByRole('link', { name: 'Notes pinned' }).click();
    await heading(page, 'Notes pinned');
    await tab(page, 'App', 'Branches');
    await page.getByText('No changes.').waitFor();
    await page.getByRole('button', { name: 'Merge into Notes' }).click();
    await page.getByRole('alert').filter({ hasText: `Branch '${branchId}' has no change production lacks.` }).waitFor();
    expect(h.problems).toEqual([]);
  });

  it('the other branch shows its conflict with production, and its merge is refused', async () => {
    const page = h.owner;
    await openApp(page, staleId, 'Notes stale');
    const conflicts = page.getByRole('note', { name: 'Conflicts: nothing merges until they are resolved' });
    await conflicts.waitFor();
    // Each conflict in words, with the branch's and production's values as the API gives them.
    const [conflict] = (await agent('GET', `/v1/${staleId}/branch/diff`)).json.conflicts;
    expect(conflict).toMatchObject({ summary: 'table notes, column pinned: changed on the branch and in production', branch: { type: 'text' }, production: { type: 'boolean' } });
    expect(await conflicts.getByRole('listitem').allTextContents()).toEqual([
      `${conflict.summary}branch: ${JSON.stringify(conflict.branch)}; production: ${JSON.stringify(conflict.production)}`,
    ]);
    await page.getByRole('button', { name: 'Merge into Notes' }).click();
    await page.getByRole('alert').filter({ hasText: `The branch and app '${app.appId}' both changed 1 thing differently; nothing was merged.` }).waitFor();
    expect((await listed()).merges.map((m) => m.merge_id)).toEqual([merge.merge_id]);
    expect(h.problems).toEqual([]);
  });

  it('a merge that drops a column is shown with the destructive-change warning; the owner rejects it', async () => {
    const tidy = await readyBranch('Notes tidy');
    await change(tidy, NO_SCRATCH);
    const dropping = await proposeMerge(tidy);
    expect(dropping.changes).toEqual(['table notes, column scratch: removed']);
    expect(dropping.destructive).toEqual([expect.stringMatching(/^ALTER TABLE "notes" DROP COLUMN "scratch"/)]);

    const page = h.owner;
    await nav(page, 'Approvals');
    await heading(page, 'Approvals');
    const item = proposal(page, dropping.action_id);
    await item.getByRole('heading', { name: 'Merge branch Notes tidy into Notes', level: 3 }).waitFor();
    const warning = item.getByRole('note', { name: 'Warning: a statement destroys data' });
    expect(await warning.getByRole('listitem').allTextContents()).toEqual(dropping.destructive);
    expect(await item.locator('pre.sql').textContent()).toBe(dropping.statements.map((s) => `${s};`).join('\n'));

    await item.getByLabel('Reason for rejecting (optional)').fill('Keep the scratch notes');
    await item.getByRole('button', { name: 'Reject', exact: true }).click();
    await item.waitFor({ state: 'detached' });
    await mergeReaches(dropping.merge_id, 'rejected');
    const schema = await agent('GET', `/v1/${app.appId}/schema`);
    expect(Object.keys(schema.json.tables.notes.columns)).toContain('scratch');

    await openApp(page, app.appId, 'Notes');
    const row = page.getByRole('table', { name: 'Merges' }).locator(`tr[data-merge="${dropping.merge_id}"]`);
    expect(await row.locator('td:nth-child(3)').textContent()).toBe('rejected');
    expect(h.problems).toEqual([]);
  });

  it("a developer is told that lifting the protection takes an admin; the owner lifts it", async () => {
    const developer = await h.personAs('developer', 'dev@example.com');
    await openApp(developer, app.appId, 'Notes');
    await developer.getByRole('button', { name: 'Lift the protection' }).click();
    await developer.getByRole('alert').filter({ hasText: `Only a person signed in with the admin role can lift the protection of app '${app.appId}'.` }).waitFor();
    expect((await listed()).protected).toBe(true);

    const page = h.owner;
    await openApp(page, app.appId, 'Notes');
    await page.getByRole('button', { name: 'Lift the protection' }).click();
    await page.getByRole('button', { name: 'Protect this app' }).waitFor();
    expect(await page.locator('#protection-state').textContent()).toBe('Not protected. Agents change this app directly.');
    expect((await listed()).protected).toBe(false);
    expect(h.problems).toEqual([]);
  });
});
