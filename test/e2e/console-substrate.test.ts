// The console's Substrate tabs (issue 30) in Debian's Chromium against the platform started as `npm start` starts it.
// The owner's substrate is seeded through the API (their session over REST as the person, the platform key over MCP
// as an agent); then the owner filters the ledger and reverts an executed action, searches and browses memory, opens
// an entity and edits it, creates an attention rule after reading its preview, sees it fire (the per-minute tick told
// the next minute has come) and its firing, and sets an outbox target to a loopback receiver that fails at first:
// the delivery dies (one attempt allowed), is redelivered from the page once the receiver accepts, and arrives once,
// signed with the secret the page made and showed once. A second person (a viewer) sees none of it and gets 404 on
// its ids, and writes and reverts in their own substrate, which the owner cannot read.
// Last, the ledger is paged with Older and Newer.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { callFrom, nav, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';
import { callTool, connectMcp, resultJson, tickRulesAfter } from './e2e-helpers.ts';

const S = '/v1/me/substrate';

interface Hit {
  raw: string;
  signature: string | undefined;
  answered: number;
}

let h: ConsoleHarness;
let receiver: http.Server;
let receiverUrl: string;
const hits: Hit[] = [];
/** What the receiver answers: 500 until the test lets it accept. */
let accepting = false;

/** Ids the test made, for the second person's 404s. */
const owned: { learning?: string; entity?: string; rule?: string; delivery?: string } = {};

async function propose(page: Page, capability: string, payload: Record<string, unknown>): Promise<{ action_id: string; result: any }> {
  const res = await callFrom(page, 'POST', `${S}/actions/propose`, { capability, payload });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json;
}

/** The value `probe` finds (undefined: not yet), polled for up to 20 s. */
const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`no ${what} yet`);
      return value;
    },
    { timeout: 20_000, interval: 100 },
  );

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const answered = accepting ? 204 : 500;
      hits.push({ raw, signature: req.headers['x-svc-signature'] as string | undefined, answered });
      res.writeHead(answered).end(accepting ? undefined : 'receiver not ready');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // A loopback receiver needs private addresses allowed; one attempt makes a failed delivery dead at once (no backoff).
  h = await startConsole({ SVC_OUTBOUND_ALLOW_PRIVATE: 'true', SVC_OUTBOX_MAX_ATTEMPTS: '1' });
  const page = h.owner;
  await propose(page, 'record_decision', { title: 'Use Postgres', kind: 'strategic', rationale: 'one database' });
  owned.learning = (await propose(page, 'record_learning', { title: 'Invoices', description: 'go out on the first' })).action_id;
  await propose(page, 'record_commitment', { description: 'Call Alice about the contract', status: 'confirmed' });
  owned.entity = (await propose(page, 'upsert_entity', { type: 'person', display_name: 'Ada Lovelace', primary_email: 'ada@example.com' })).result.entity_id;
  await propose(page, 'upsert_entity', { type: 'company', display_name: 'Acme' });
  // An agent with the platform key (the owner's substrate: the account's default user, theirs).
  const agent = await connectMcp(h.server.url, h.server.platformKey);
  try {
    const json = resultJson(
      await callTool(agent.client, 'substrate_propose', { capability: 'record_learning', payload: { title: 'Agents', description: 'propose too' } }),
    );
    expect(json.verdict.result).toBe('auto_approved');
  } finally {
    await agent.close();
  }
}, 90_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail')
    await h?.owner.screenshot({ path: `/tmp/console-substrate-${t.task.name.slice(0, 24).replace(/\W+/g, '-')}.png` }).catch(() => {});
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => receiver?.close(r));
});

const ledgerRow = (page: Page, actionId: string) => page.locator(`tr[data-action="${actionId}"]`);

describe('the console substrate tabs', () => {
  it('filters the ledger and reverts an executed action through the one door', async () => {
    const page = h.owner;
    await nav(page, 'Substrate');
    await page.getByRole('heading', { name: 'Ledger', level: 2 }).waitFor();
    const table = page.getByRole('table', { name: 'Ledger' });
    await ledgerRow(page, owned.learning!).waitFor();
    expect(await table.locator('tbody tr').count()).toBe(6);

    const filters = page.getByRole('form', { name: 'Filter the ledger' });
    await filters.getByLabel('Status').selectOption('executed');
    await filters.getByLabel('Capability').fill('record_learning');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => table.locator('tbody tr td:first-child code').allTextContents()).toEqual(['record_learning', 'record_learning']);
    expect(await table.locator('tbody tr td:nth-child(3)').allTextContents()).toEqual(['agent', 'person']);
    const row = ledgerRow(page, owned.learning!);
    await row.getByText('Payload').click();
    expect(JSON.parse((await row.locator('pre.payload').textContent())!)).toEqual({ title: 'Invoices', description: 'go out on the first' });

    await row.getByRole('button', { name: `Revert ${owned.learning}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Reverted record_learning ${owned.learning}` })
      .waitFor();
    await row.getByText(/^reverted by act_/).waitFor();
    expect(await row.getByRole('button', { name: /Revert/ }).count()).toBe(0);
    const after = await callFrom(page, 'GET', `${S}/actions/${owned.learning}`);
    expect(after.json).toMatchObject({ status: 'executed', revertible: false, reverted_by: expect.stringMatching(/^act_/) });
    const revert = await callFrom(page, 'GET', `${S}/actions/${after.json.reverted_by}`);
    expect(revert.json).toMatchObject({ capability: 'revert_action', status: 'executed', proposer_kind: 'human', payload: { action_id: owned.learning } });
    expect(h.problems).toEqual([]);
  });

  it('searches memory and browses it by kind', async () => {
    const page = h.owner;
    await tab(page, 'Substrate', 'Memory');
    const form = page.getByRole('form', { name: 'Search memory' });
    await form.getByLabel(/^Words/).fill('contract');
    await form.getByRole('button', { name: 'Apply' }).click();
    const found = page.getByRole('table', { name: 'Memory matching contract' });
    await found.waitFor();
    expect(await found.locator('tbody tr td:first-child').allTextContents()).toEqual(['commitment']);
    expect(await found.locator('tbody tr td:nth-child(3)').textContent()).toBe('Call Alice about the contract');

    await form.getByLabel(/^Words/).fill('');
    for (const kind of ['commitments', 'learnings', 'source artifacts']) await form.getByLabel(kind).uncheck();
    await form.getByRole('button', { name: 'Apply' }).click();
    const browsed = page.getByRole('table', { name: 'Memory, newest first' });
    await expect.poll(() => browsed.locator('tbody tr td:first-child').allTextContents()).toEqual(['decision']);
    expect(await browsed.locator('tbody tr td:nth-child(3)').textContent()).toBe('one database');
    expect(h.problems).toEqual([]);
  });

  it("opens an entity's page and edits it through the ledger", async () => {
    const page = h.owner;
    await tab(page, 'Substrate', 'Entities');
    const form = page.getByRole('form', { name: 'Find entities' });
    await form.getByLabel('Type').selectOption('person');
    await form.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('1 entity', { exact: true }).waitFor();
    await page.getByRole('table', { name: 'Entities' }).getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { name: 'Ada Lovelace', level: 2 }).waitFor();
    expect(await page.locator('.facts div').filter({ hasText: 'Email' }).locator('dd').textContent()).toBe('ada@example.com');

    const edit = page.getByRole('form', { name: 'Edit Ada Lovelace' });
    await edit.getByLabel(/^Attributes patch/).fill('{ "role": "analyst" }');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved \(action act_/ })
      .waitFor();
    const entity = await callFrom(page, 'GET', `${S}/entities/${owned.entity}`);
    expect(entity.json).toMatchObject({ display_name: 'Ada Lovelace', primary_email: 'ada@example.com', attrs: { role: 'analyst' } });
    const patch = await callFrom(page, 'GET', `${S}/actions?capability=patch_entity`);
    expect(patch.json.actions).toEqual([
      expect.objectContaining({
        status: 'executed',
        revertible: true,
        payload: expect.objectContaining({ id: owned.entity, attrs_patch: { role: 'analyst' } }),
      }),
    ]);
    expect(h.problems).toEqual([]);
  });

  it('creates a rule after reading its preview, sees it fire and its firing', async () => {
    const page = h.owner;
    await tab(page, 'Substrate', 'Attention rules');
    await page.getByText('No rules yet.').waitFor();
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Name').fill('Follow up confirmed commitments');
    await form.getByLabel('Schedule (cron, UTC)').fill('* * * * *');
    // The defaults: confirmed commitments, each proposed as a learning.
    expect(await form.getByRole('button', { name: 'Save' }).count()).toBe(0);
    await form.getByText('Preview the rule to save it.').waitFor();
    await form.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('status').filter({ hasText: 'It would find 1 binding now' }).waitFor();
    const sample = page.getByRole('list', { name: 'Sample proposals' }).getByRole('listitem');
    expect(await sample.count()).toBe(1);
    expect(await sample.getByText('Executes at once').count()).toBe(1);
    expect(JSON.parse((await sample.locator('pre.payload').first().textContent())!)).toEqual({
      title: 'Follow up',
      description: 'Call Alice about the contract',
    });
    await form.getByRole('button', { name: 'Save' }).click();
    const listed = page.getByRole('table', { name: 'Attention rules' });
    await listed.getByRole('link', { name: 'Follow up confirmed commitments' }).waitFor();
    const rules = (await callFrom(page, 'GET', `${S}/attention-rules`)).json.rules;
    expect(rules).toEqual([
      expect.objectContaining({ name: 'Follow up confirmed commitments', trigger_cron: '* * * * *', enabled: true, action_capability: 'record_learning' }),
    ]);
    owned.rule = rules[0].rule_id as string;

    await tickRulesAfter(h.server.controlDb, rules[0].created_at as string);
    const firing = await until('the firing', async () => (await callFrom(page, 'GET', `${S}/attention-rules/${owned.rule}/firings`)).json.firings[0]);
    expect(firing).toMatchObject({
      bindings_count: 1,
      proposals: [{ action_id: expect.stringMatching(/^act_/), verdict: 'auto_approved' }],
      skip_reason: null,
    });
    const proposed = firing.proposals[0].action_id as string;

    await listed.getByRole('link', { name: 'Follow up confirmed commitments' }).click();
    await page.getByRole('heading', { name: 'Follow up confirmed commitments', level: 2 }).waitFor();
    const firings = page.getByRole('table', { name: `Firings of ${owned.rule}` });
    // The heading shows before the firings have loaded: wait for their row.
    await firings.locator('tbody tr').first().waitFor();
    expect(await firings.locator('tbody tr').count()).toBe(1);
    expect(await firings.locator('tbody tr td:nth-child(2)').textContent()).toBe('1');
    expect(await firings.locator('tbody tr td:nth-child(3)').textContent()).toBe(`${proposed} auto_approved`);
    // Its proposals in the ledger, filtered by the rule, proposed by it.
    await page.getByRole('link', { name: 'Its proposals in the ledger' }).click();
    await ledgerRow(page, proposed).waitFor();
    expect(await page.getByRole('table', { name: 'Ledger' }).locator('tbody tr').count()).toBe(1);
    expect(await ledgerRow(page, proposed).locator('td:nth-child(3)').textContent()).toBe(`rule ${owned.rule}`);

    // Disabled from the list, then deleted would drop its firings: it stays, disabled.
    await tab(page, 'Substrate', 'Attention rules');
    await page.getByRole('button', { name: 'Disable Follow up confirmed commitments' }).click();
    await page.getByRole('button', { name: 'Enable Follow up confirmed commitments' }).waitFor();
    expect((await callFrom(page, 'GET', `${S}/attention-rules/${owned.rule}`)).json).toMatchObject({ enabled: false, next_fire_at: null });
    expect(h.problems).toEqual([]);
  });

  it('sets an outbox target, lets a delivery die, and redelivers it once the receiver accepts', async () => {
    const page = h.owner;
    await tab(page, 'Substrate', 'Outbox');
    await page.getByText('No targets: executed actions go nowhere.').waitFor();
    const form = page.getByRole('form', { name: 'Set a target' });
    await form.getByLabel('Capability').fill('record_decision');
    await form.getByLabel('Webhook URL').fill(receiverUrl);
    await form.getByRole('button', { name: 'Set target' }).click();
    // No secret typed: the page made one, shown once.
    const secret = (await page.getByRole('region', { name: 'Signing secret' }).locator('output').textContent())!;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await page.getByRole('region', { name: 'Signing secret' }).getByRole('button', { name: 'Done' }).click();
    await page.getByRole('table', { name: 'Outbox targets' }).getByText(receiverUrl).waitFor();
    expect((await callFrom(page, 'GET', `${S}/outbox-targets`)).json.targets).toEqual([
      expect.objectContaining({ capability: 'record_decision', webhook_url: receiverUrl }),
    ]);

    const decision = await propose(page, 'record_decision', { title: 'Ship on Fridays', kind: 'operational', rationale: 'the receiver learns' });
    const dead = await until(
      'a dead delivery',
      async () => (await callFrom(page, 'GET', `${S}/outbox-deliveries?status=dead&action_id=${decision.action_id}`)).json.deliveries[0],
    );
    owned.delivery = dead.id as string;
    expect(dead).toMatchObject({ attempts: 1, last_status: 500, last_error: 'answered 500: receiver not ready' });

    const filters = page.getByRole('form', { name: 'Filter deliveries' });
    await filters.getByLabel('Status').selectOption('dead');
    await filters.getByRole('button', { name: 'Apply' }).click();
    const row = page.locator(`tr[data-delivery="${dead.id}"]`);
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      `${dead.id}action ${decision.action_id}`,
      'record_decision',
      'dead (gave up)',
      '1',
      'answered 500: receiver not ready',
      expect.any(String),
      '—',
      'Redeliver',
    ]);

    accepting = true;
    await row.getByRole('button', { name: `Redeliver ${dead.id}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Delivery ${dead.id} is pending again.` })
      .waitFor();
    const delivered = await until(
      'the redelivery',
      async () => (await callFrom(page, 'GET', `${S}/outbox-deliveries?status=delivered&action_id=${decision.action_id}`)).json.deliveries[0],
    );
    expect(delivered).toMatchObject({ id: dead.id, attempts: 1, last_status: 204, last_error: null });
    const mine = hits.filter((x) => x.raw.includes(decision.action_id));
    expect(mine.map((x) => x.answered)).toEqual([500, 204]);
    const good = mine.filter((x) => x.answered === 204);
    expect(good).toHaveLength(1);
    expect(good[0]!.signature).toBe(`sha256=${createHmac('sha256', secret).update(good[0]!.raw).digest('hex')}`);
    expect(JSON.parse(good[0]!.raw)).toMatchObject({
      delivery_id: dead.id,
      action_id: decision.action_id,
      capability: 'record_decision',
      proposer_kind: 'human',
    });

    await filters.getByLabel('Status').selectOption('delivered');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await row.locator('td:nth-child(3)').getByText('delivered', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: /Redeliver/ }).count()).toBe(0);
    expect(h.problems).toEqual([]);
  });

  it("shows a second person none of the owner's substrate, and 404 on its ids", async () => {
    const viewer = await h.personAs('viewer', 'vic@example.com');
    await nav(viewer, 'Substrate');
    await viewer.getByText('No actions match.').waitFor();
    await tab(viewer, 'Substrate', 'Entities');
    await viewer.getByText('No entities match.').waitFor();
    await tab(viewer, 'Substrate', 'Attention rules');
    await viewer.getByText('No rules yet.').waitFor();
    await tab(viewer, 'Substrate', 'Outbox');
    await viewer.getByText('No targets: executed actions go nowhere.').waitFor();
    await viewer.getByText('No deliveries match.').waitFor();
    await tab(viewer, 'Substrate', 'Memory');
    await viewer.getByText('Nothing found.').waitFor();
    await viewer.goto(`${h.consoleUrl}#/substrate/entities/${owned.entity}`);
    await viewer
      .getByRole('alert')
      .filter({ hasText: `Entity '${owned.entity}'` })
      .waitFor();

    for (const [method, url] of [
      ['GET', `${S}/actions/${owned.learning}`],
      ['GET', `${S}/entities/${owned.entity}`],
      ['GET', `${S}/attention-rules/${owned.rule}`],
      ['GET', `${S}/attention-rules/${owned.rule}/firings`],
      ['POST', `${S}/attention-rules/${owned.rule}/enable`],
      ['POST', `${S}/outbox-deliveries/${owned.delivery}/redeliver`],
    ] as const) {
      const res = await callFrom(viewer, method, url);
      expect(res.status, url).toBe(404);
      expect(res.json.error.code, url).toBe('RESOURCE_NOT_FOUND');
    }
    const revert = await callFrom(viewer, 'POST', `${S}/actions/propose`, { capability: 'revert_action', payload: { action_id: owned.learning } });
    expect(revert.status).toBe(404);
    expect((await callFrom(viewer, 'GET', `${S}/actions?status=all`)).json).toEqual({ actions: [], next_before: null });

    // Their own substrate is theirs whatever their role (the substrate routes need viewer): they write and revert in it,
    // and the owner gets 404 on it.
    const own = await propose(viewer, 'record_learning', { title: 'Mine', description: 'a viewer writes their own substrate' });
    await tab(viewer, 'Substrate', 'Ledger');
    await ledgerRow(viewer, own.action_id).getByRole('button', { name: `Revert ${own.action_id}` }).click();
    await viewer.getByRole('status').filter({ hasText: `Reverted record_learning ${own.action_id}` }).waitFor();
    expect((await callFrom(h.owner, 'GET', `${S}/actions/${own.action_id}`)).status).toBe(404);
    expect(h.problems).toEqual([]);
  });
  it('pages the ledger with Older and Newer', async () => {
    const page = h.owner;
    for (let i = 0; i < 25; i++) await propose(page, 'record_learning', { title: `Paging ${i}`, description: 'fills a page' });
    const all = (await callFrom(page, 'GET', `${S}/actions?status=all&limit=500`)).json.actions.map((a: { action_id: string }) => a.action_id) as string[];
    expect(all.length).toBeGreaterThan(25);
    await tab(page, 'Substrate', 'Memory');
    await tab(page, 'Substrate', 'Ledger');
    const rows = page.getByRole('table', { name: 'Ledger' }).locator('tbody tr');
    const pager = page.getByRole('navigation', { name: 'Ledger pages' });
    await pager.getByText('Page 1').waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')))).toEqual(all.slice(0, 25));
    expect(await pager.getByRole('button', { name: 'Newer' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: 'Older' }).click();
    await pager.getByText('Page 2').waitFor();
    await expect.poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')))).toEqual(all.slice(25, 50));
    await pager.getByRole('button', { name: 'Newer' }).click();
    await pager.getByText('Page 1').waitFor();
    await expect.poll(() => rows.first().getAttribute('data-action')).toBe(all[0]);
    expect(h.problems).toEqual([]);
  });
});
