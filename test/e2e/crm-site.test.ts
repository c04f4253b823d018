// The CRM's site in Chromium against a clone of the shipped template (the fakes of test/helpers/crm.ts): built at
// install from its TypeScript, it signs a user up and makes their workspace, adds a contact, creates a deal and drags
// it to another stage (a proposal, shown pending), sees a proposal made elsewhere arrive in the approvals inbox through
// the change stream and approves it (the deal moves), adds a note and gets the agent's streamed answer citing it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startCrm, type CrmRig } from '../helpers/crm.ts';

let rig: CrmRig;
let browser: Browser;
let page: Page;
/** The site as the platform serves it, on base_url's origin (the page and the API are one origin). */
let site: string;
const problems: string[] = [];

beforeAll(async () => {
  rig = await startCrm();
  browser = await launchChromium();
  page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  site = `http://localhost:${rig.server.port}/sites/${rig.appId}/`;
}, 300_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail') await page.screenshot({ path: `/tmp/crm-site-${t.task.name.slice(0, 20).replace(/\W+/g, '-')}.png` }).catch(() => {});
});
afterAll(async () => {
  await browser?.close();
  await rig?.stop();
});

const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
const column = (stage: string) => page.locator(`section.column[data-stage="${stage}"]`);

describe('the CRM site', { timeout: 60_000 }, () => {
  let workspaceId: string;

  it('is one minified module beside the static files, nothing from a CDN', async () => {
    const html = await (await fetch(site)).text();
    expect(html).toContain('<script type="module" src="assets/main.js"></script>');
    const js = await (await fetch(`${site}assets/main.js`)).text();
    // Bundled: no import of the site's modules or its npm packages is left for the browser to resolve.
    expect(js).not.toMatch(/(^|[;}])\s*import\s*[{*"']|\bfrom\s*["'](\.\.?\/|preact|@supabase)/m);
    expect(js).toContain('Awaiting approval');
    expect(js).not.toMatch(/unpkg|jsdelivr|esm\.sh|cdnjs/);
    expect((await fetch(`${site}src/main.tsx`)).status).toBe(404);
  });

  it('signs up and makes the first workspace', async () => {
    await page.goto(site);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('E-mail').fill('ada@crm.example');
    await page.getByLabel('Password').fill('a long password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByLabel('Name').fill('Acme sales');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { name: 'Acme sales', level: 1 }).waitFor();
    const [ws] = await rig.serviceRows('workspaces', 'name=eq.Acme sales');
    workspaceId = ws.id;
    const members = await rig.serviceRows('workspace_members', `workspace_id=eq.${workspaceId}`);
    expect(members).toEqual([expect.objectContaining({ email: 'ada@crm.example', role: 'owner' })]);
  });

  it('adds a contact through the data API', async () => {
    await nav('Contacts');
    await page.getByText('Add a contact').click();
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('E-mail', { exact: true }).fill('grace@navy.example');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('rowheader', { name: 'Grace Hopper' }).waitFor();
    expect(await rig.serviceRows('contacts', `workspace_id=eq.${workspaceId}&select=full_name,email,source`)).toEqual([
      { full_name: 'Grace Hopper', email: 'grace@navy.example', source: 'manual' },
    ]);
  });

  it('drags a deal to another stage: a proposal, shown pending until approved', async () => {
    await nav('Deals');
    await page.getByText('New deal').click();
    await page.getByLabel('Title').fill('Navy pilot');
    await page.getByLabel('Amount').fill('40000');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const card = column('Lead').locator('li.card', { hasText: 'Navy pilot' });
    await card.waitFor();
    // Dragged by its amount (the middle of the card is its keyboard menu of stages).
    await card.getByText('$40,000').dragTo(column('Qualified'));
    await column('Lead').getByText('Awaiting approval → Qualified').waitFor();
    const [proposal] = await rig.serviceRows('proposals', `workspace_id=eq.${workspaceId}&kind=eq.stage_change`);
    expect(proposal).toMatchObject({ status: 'pending', summary: 'Move Navy pilot from Lead to Qualified' });
  });

  it('the approvals inbox is live: a proposal made elsewhere appears; approving it moves the deal', async () => {
    await nav('Approvals');
    await page.getByText('Live', { exact: true }).waitFor();
    await page.getByText('Move Navy pilot from Lead to Qualified').waitFor();
    // Another member's move, made without this page: the change stream brings it.
    const token = await page.evaluate(() => JSON.parse(localStorage.getItem('crm.session')!).access_token as string);
    const [deal] = await rig.serviceRows('deals', `workspace_id=eq.${workspaceId}&title=eq.Navy pilot`);
    const stages = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${workspaceId}&order=position`);
    const proposal = await rig.fn('deal-next-step', { token, body: { deal_id: deal.id } });
    expect(proposal.status, proposal.text).toBeLessThan(300);
    await expect.poll(() => page.locator('.approvals > li').count(), { timeout: 15_000 }).toBe(2);

    await page.getByRole('button', { name: 'Approve: Move Navy pilot from Lead to Qualified' }).click();
    await page.getByText('Move Navy pilot from Lead to Qualified').waitFor({ state: 'detached' });
    await expect.poll(async () => (await rig.serviceRows('deals', `id=eq.${deal.id}`))[0].stage_id, { timeout: 20_000 }).toBe(stages[1].id);
    await nav('Deals');
    await column('Qualified').locator('li.card', { hasText: 'Navy pilot' }).waitFor();
    expect(await column('Qualified').getByText('Awaiting approval').count()).toBe(0);
  });

  it('adds a note and the agent streams an answer citing it', async () => {
    await nav('Timeline');
    await page.getByRole('textbox', { name: 'Note' }).fill('Grace said the pilot budget is 40k and legal review starts Monday.');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.getByText('Grace said the pilot budget is 40k').first().waitFor();
    const [note] = await rig.serviceRows('activities', `workspace_id=eq.${workspaceId}&kind=eq.note`);
    const indexed = () => rig.serviceRows('search_documents', `activity_id=eq.${note.id}`);
    await expect.poll(async () => (await indexed()).length, { timeout: 20_000 }).toBe(1);
    const [doc] = await indexed();
    const documentStatus = async () => (await rig.platform('GET', `/v1/${rig.appId}/rag/collections/crm/documents/${doc.document_id}`)).json?.status;
    await expect.poll(documentStatus, { timeout: 20_000 }).toBe('ready');

    // The fake upstream's slow model: 200 ms between streamed words, so the page can be seen filling in.
    const slow = await rig.platform('PATCH', `/v1/${rig.appId}/functions/agent-chat/env`, { AI_MODEL: 'fake/slow' });
    expect(slow.status, slow.text).toBe(200);
    await nav('Agent');
    await page.getByLabel('Message').fill('What is the pilot budget?');
    await page.getByRole('button', { name: 'Send' }).click();
    const streaming = page.getByTestId('streaming-answer');
    // Citations come first, then the answer grows word by word while it streams.
    await streaming.locator('.citations li', { hasText: 'pilot budget is 40k' }).waitFor();
    await streaming.locator('p', { hasText: /^echo: \S+/ }).waitFor();
    const early = (await streaming.locator('p').first().textContent())!;
    await streaming.waitFor({ state: 'detached', timeout: 30_000 });
    const turns = await rig.serviceRows('chat_messages', `workspace_id=eq.${workspaceId}&order=created_at&select=role,content`);
    expect(turns.map((t) => t.role)).toEqual(['user', 'assistant']);
    expect(turns[1].content.startsWith(early)).toBe(true);
    expect(turns[1].content.length).toBeGreaterThan(early.length);
    // Once stored, the answer shows as kept, with the passages it cited.
    const answer = page.locator('.bubble.assistant').last();
    expect(await answer.locator('p').first().textContent()).toBe(turns[1].content);
    expect(await answer.locator('.citations').textContent()).toContain('pilot budget is 40k');
    expect(problems).toEqual([]);
  });
});
