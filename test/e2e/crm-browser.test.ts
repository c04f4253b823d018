// The CRM end to end in Chromium (issue 29's browser test): the owner's MCP client clones the shipped template and it is
// ready in under a minute; two people sign up on the clone's site, the first makes a workspace and invites the second,
// who joins through the invitation link; the member adds a contact and enriches it (the people vendor's fake is asked),
// drags a deal to another stage (a proposal that reaches the owner's open approvals inbox by the change stream alone),
// the owner approves it and the deal shows in its new stage; a note is added and the agent's answer streams in word by
// word, citing it; and someone of another workspace, in a third browser, sees none of it, in pages, search or chat.
//
// CRM_SCREENSHOTS=1 also saves the main pages at 1280x800 to docs/screenshots/crm-<page>.png (docs/crm.md shows them).
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startCrm, type CrmRig } from '../helpers/crm.ts';
import { profileUrl } from '../fakes/people-proxycurl.ts';
import { request } from './e2e-helpers.ts';

const SCREENSHOTS = process.env.CRM_SCREENSHOTS === '1';
const SHOTS_DIR = path.resolve(import.meta.dirname, '../../docs/screenshots');
const VIEWPORT = { width: 1280, height: 800 };
const NOTE = 'Grace said the pilot budget is 40k and legal review starts Monday.';

let rig: CrmRig;
let browser: Browser;
/** The site as the platform serves it, on base_url's origin (the page and the API are one origin). */
let site: string;
const contexts: BrowserContext[] = [];
const problems: string[] = [];
/** Ada makes the workspace (its owner); Ben joins it by invitation; Cleo has a workspace of her own. */
let ada: Page;
let ben: Page;
let cleo: Page;

async function newPage(who: string): Promise<Page> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => problems.push(`${who}: pageerror: ${e.message}`));
  return page;
}

beforeAll(async () => {
  rig = await startCrm({ cloneVia: 'mcp' });
  console.log(`CRM clone over MCP (templates_clone to ready): ${(rig.cloneMs / 1000).toFixed(1)} s`);
  browser = await launchChromium();
  [ada, ben, cleo] = await Promise.all([newPage('ada'), newPage('ben'), newPage('cleo')]);
  // The clone's site on its own host ({subdomain}.localhost:<port>), as the app's url says.
  const app = (await rig.platform('GET', '/apps')).json.apps.find((a: { app_id: string }) => a.app_id === rig.appId);
  site = `${app.url}/`;
}, 300_000);
afterEach(async (t) => {
  if (t.task.result?.state !== 'fail') return;
  const name = t.task.name.slice(0, 20).replace(/\W+/g, '-');
  for (const [who, page] of [['ada', ada], ['ben', ben], ['cleo', cleo]] as const) await page?.screenshot({ path: `/tmp/crm-browser-${name}-${who}.png` }).catch(() => {});
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await rig?.stop();
});

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
const column = (page: Page, stage: string) => page.locator(`section.column[data-stage="${stage}"]`);
const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1, exact: true }).waitFor();
const sessionOf = (page: Page) => page.evaluate(() => JSON.parse(localStorage.getItem('crm.session')!) as { access_token: string; user: { id: string } });

/** Saves the page as docs/screenshots/crm-<name>.png when CRM_SCREENSHOTS=1 (kept small: docs/crm.md shows them). */
async function shot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  // Without the transient "done" notices, which would cover the page, nor a focus ring.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const file = path.join(SHOTS_DIR, `crm-${name}.png`);
  await page.screenshot({ path: file, style: '.notices { display: none !important; }' });
  expect(statSync(file).size).toBeLessThan(150_000);
}

async function signUp(page: Page, email: string): Promise<void> {
  await page.goto(site);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('a long password');
  await page.getByRole('button', { name: 'Sign up' }).click();
  await heading(page, 'Create your first workspace');
}

async function createWorkspace(page: Page, name: string): Promise<void> {
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await heading(page, name);
}

/** The answer streaming in the chat, sampled until it is kept: each distinct text with when it was seen. */
async function streamedAnswer(page: Page): Promise<Array<{ at: number; text: string }>> {
  const streaming = page.getByTestId('streaming-answer').locator('p').first();
  await streaming.waitFor();
  const seen: Array<{ at: number; text: string }> = [];
  for (;;) {
    const text = await streaming.textContent({ timeout: 1000 }).catch(() => null);
    if (text === null) break;
    if (text !== seen.at(-1)?.text) seen.push({ at: Date.now(), text });
    await new Promise((r) => setTimeout(r, 50));
  }
  return seen;
}

describe('the CRM in Chromium, cloned over MCP', { timeout: 90_000 }, () => {
  let workspaceId: string;
  let adaId: string;
  let benId: string;
  let contactId: string;

  it("the owner's MCP client clones the template: templates_list, templates_clone, templates_clone_get, ready in under a minute", async () => {
    expect(rig.cloneVia).toBe('mcp');
    expect(rig.cloneCalls).toEqual(['templates_list', 'templates_clone', 'templates_clone_get']);
    expect(rig.cloneMs).toBeLessThan(60_000);
    const apps = await rig.platform('GET', '/apps');
    expect(apps.status, apps.text).toBe(200);
    expect(apps.json.apps.filter((a: { app_id: string }) => a.app_id === rig.appId)).toEqual([expect.objectContaining({ name: 'Sales CRM' })]);
    // The site, built at install from its TypeScript: one minified module beside the static files, nothing from a CDN.
    const { text: html } = await request(site, '');
    expect(html).toContain('<script type="module" src="assets/main.js"></script>');
    const { text: js } = await request(site, 'assets/main.js');
    expect(js).not.toMatch(/(^|[;}])\s*import\s*[{*"']|\bfrom\s*["'](\.\.?\/|preact|@supabase)/m);
    expect(js).toContain('Awaiting approval');
    expect(js).not.toMatch(/unpkg|jsdelivr|esm\.sh|cdnjs/);
    expect((await request(site, 'src/main.tsx')).status).toBe(404);
  });

  it('two people sign up; the first makes a workspace and invites the second, who joins by the link; both see it', async () => {
    await signUp(ada, 'ada@acme.example');
    await createWorkspace(ada, 'Acme sales');
    const [ws] = await rig.serviceRows('workspaces', 'name=eq.Acme sales');
    workspaceId = ws.id;
    adaId = (await sessionOf(ada)).user.id;

    await nav(ada, 'Workspace');
    await heading(ada, 'Acme sales: members and accounts');
    await ada.getByRole('form', { name: 'Invite a member' }).getByLabel('E-mail').fill('ben@acme.example');
    await ada.getByRole('button', { name: 'Invite', exact: true }).click();
    const link = await ada.getByRole('textbox', { name: 'Invitation link' }).inputValue();
    // The site's own address (the folder it is served from kept) with the invitation's route.
    expect(link).toMatch(new RegExp(`^${site.replace(/[.?]/g, '\\$&')}#/invite/[A-Za-z0-9_-]{20,}$`));
    expect(await rig.serviceRows('invitations', `workspace_id=eq.${workspaceId}&select=email,role,invited_by,accepted_at`)).toEqual([
      { email: 'ben@acme.example', role: 'member', invited_by: adaId, accepted_at: null },
    ]);

    await signUp(ben, 'ben@acme.example');
    await ben.goto(link);
    await heading(ben, 'Join a workspace');
    await ben.getByRole('button', { name: 'Accept the invitation' }).click();
    await heading(ben, 'Acme sales');
    benId = (await sessionOf(ben)).user.id;
    expect(await ben.getByRole('combobox', { name: 'Workspace' }).locator('option').allTextContents()).toEqual(['Acme sales (member)']);
    expect(await rig.serviceRows('workspace_members', `workspace_id=eq.${workspaceId}&select=user_id,email,role&order=email`)).toEqual([
      { user_id: adaId, email: 'ada@acme.example', role: 'owner' },
      { user_id: benId, email: 'ben@acme.example', role: 'member' },
    ]);
    const [invitation] = await rig.serviceRows('invitations', `workspace_id=eq.${workspaceId}`);
    expect(invitation.accepted_at).toEqual(expect.any(String));

    // Both see the same workspace and its two members.
    await nav(ben, 'Workspace');
    await heading(ben, 'Acme sales: members and accounts');
    await ada.reload();
    await heading(ada, 'Acme sales: members and accounts');
    for (const page of [ada, ben]) {
      const members = page.getByRole('table').first().getByRole('rowheader');
      await expect.poll(() => members.allTextContents()).toHaveLength(2);
      // Shown by their display names (the e-mail's local part at sign-up), the viewer marked.
      expect((await members.allTextContents()).map((t) => t.trim())).toEqual(page === ada ? ['ada (you)', 'ben'] : ['ada', 'ben (you)']);
    }
    expect(await ada.getByRole('combobox', { name: 'Role of ben' }).inputValue()).toBe('member');
    // A member manages nothing: no invitation form on their page.
    expect(await ben.getByRole('form', { name: 'Invite a member' }).count()).toBe(0);
    await shot(ada, 'workspace');
  });

  it('the member adds a contact and enriches it: the vendor is asked and the enriched fields show, to both', async () => {
    await nav(ben, 'Contacts');
    await ben.getByText('Add a contact').click();
    await ben.getByLabel('Name').fill('Grace Hopper');
    await ben.getByLabel('E-mail', { exact: true }).fill('grace@navy.example');
    await ben.getByLabel('LinkedIn URL').fill(profileUrl(5));
    await ben.getByRole('button', { name: 'Add', exact: true }).click();
    const row = ben.getByRole('row', { name: /Grace Hopper/ });
    await row.getByRole('cell', { name: 'never' }).waitFor();
    const [added] = await rig.serviceRows('contacts', `workspace_id=eq.${workspaceId}`);
    expect(added).toMatchObject({ full_name: 'Grace Hopper', email: 'grace@navy.example', linkedin_url: profileUrl(5), title: null, company_id: null, enriched_at: null, source: 'manual' });
    contactId = added.id;

    const asked = rig.fakes.people.requests.length;
    await row.getByRole('button', { name: 'Enrich Grace Hopper' }).click();
    await ben.getByText('Grace Hopper enriched.').waitFor();
    // The row now shows what the vendor had: the title and the employer (a company made in the workspace).
    await row.getByRole('cell', { name: 'CTO', exact: true }).waitFor();
    await row.getByRole('cell', { name: 'Company 5', exact: true }).waitFor();
    expect(await row.getByRole('cell', { name: 'never' }).count()).toBe(0);
    const sent = rig.fakes.people.requests.slice(asked);
    expect(sent.map((r) => [r.method, r.path, r.query.linkedin_profile_url])).toEqual([['GET', '/api/v2/linkedin', profileUrl(5)]]);
    expect(sent[0]!.authorization).toBe('Bearer pc-test-key');
    const [enriched] = await rig.serviceRows('contacts', `id=eq.${contactId}`);
    const [company] = await rig.serviceRows('companies', `workspace_id=eq.${workspaceId}`);
    expect(company).toMatchObject({ name: 'Company 5' });
    expect(enriched).toMatchObject({
      email: 'grace@navy.example',
      title: 'CTO',
      location: 'San Francisco, United States',
      company_id: company.id,
      enrichment: { provider: 'people', status: 'ok', source_url: profileUrl(5), fields: { title: 'CTO', company_name: 'Company 5' } },
    });
    expect(Date.now() - Date.parse(enriched.enriched_at)).toBeLessThan(60_000);
    expect(await rig.serviceRows('activities', `contact_id=eq.${contactId}&select=kind,subject,user_id`)).toEqual([
      { kind: 'system', subject: 'Enriched from the people vendor', user_id: benId },
    ]);

    // The owner sees the same contact, enriched.
    await nav(ada, 'Contacts');
    const adas = ada.getByRole('row', { name: /Grace Hopper/ });
    await adas.getByRole('cell', { name: 'CTO', exact: true }).waitFor();
    await adas.getByRole('cell', { name: 'Company 5', exact: true }).waitFor();
    await shot(ada, 'contacts');
  });

  it("the member drags a deal to another stage: the proposal reaches the owner's live inbox; approved, the deal moves", async () => {
    // The owner's inbox is open and live before the move is made.
    await nav(ada, 'Approvals');
    await ada.getByText('Live', { exact: true }).waitFor();
    await ada.getByText('Nothing pending.').waitFor();

    await nav(ben, 'Deals');
    await ben.getByText('New deal').click();
    await ben.getByLabel('Title').fill('Navy pilot');
    await ben.getByLabel('Amount').fill('40000');
    await ben.getByRole('button', { name: 'Create', exact: true }).click();
    const card = column(ben, 'Lead').locator('li.card', { hasText: 'Navy pilot' });
    await card.waitFor();
    const [deal] = await rig.serviceRows('deals', `workspace_id=eq.${workspaceId}`);
    const stages = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${workspaceId}&order=position`);
    expect(stages.slice(0, 2).map((s) => s.name)).toEqual(['Lead', 'Qualified']);
    expect(deal).toMatchObject({ title: 'Navy pilot', stage_id: stages[0].id });
    expect(Number(deal.amount)).toBe(40000);

    // Dragged by its amount (the middle of the card is its keyboard menu of stages).
    await card.getByText('$40,000').dragTo(column(ben, 'Qualified'));
    await column(ben, 'Lead').getByText('Awaiting approval → Qualified').waitFor();
    await ben.getByText('Moving “Navy pilot” to Qualified waits for approval.').waitFor();
    const proposals = () => rig.serviceRows('proposals', `workspace_id=eq.${workspaceId}&select=kind,status,summary,deal_id`);
    expect(await proposals()).toEqual([{ kind: 'stage_change', status: 'pending', summary: 'Move Navy pilot from Lead to Qualified', deal_id: deal.id }]);
    expect((await rig.serviceRows('deals', `id=eq.${deal.id}`))[0].stage_id).toBe(stages[0].id);

    // The change stream brings it to the owner's open inbox, without a reload.
    await ada.getByText('Move Navy pilot from Lead to Qualified').waitFor();
    expect(await ada.locator('.approvals > li').count()).toBe(1);
    // The member sees what waits, but only owners and admins decide.
    await nav(ben, 'Approvals');
    await ben.getByText('Move Navy pilot from Lead to Qualified').waitFor();
    await ben.getByText('Owners and admins decide; you see what waits.').waitFor();
    expect(await ben.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    await shot(ada, 'approvals');

    await ada.getByRole('button', { name: 'Approve: Move Navy pilot from Lead to Qualified' }).click();
    await ada.getByText('Move Navy pilot from Lead to Qualified').waitFor({ state: 'detached' });
    await ada.getByText('Nothing pending.').waitFor();
    await expect.poll(async () => (await rig.serviceRows('deals', `id=eq.${deal.id}`))[0].stage_id, { timeout: 20_000 }).toBe(stages[1].id);
    expect(await proposals()).toEqual([{ kind: 'stage_change', status: 'applied', summary: 'Move Navy pilot from Lead to Qualified', deal_id: deal.id }]);
    const [decided] = await rig.serviceRows('proposals', `workspace_id=eq.${workspaceId}`);
    expect(decided.decided_by).toBe(adaId);

    // The member's board shows it in its new stage, no longer pending.
    await nav(ben, 'Deals');
    await column(ben, 'Qualified').locator('li.card', { hasText: 'Navy pilot' }).waitFor();
    expect(await column(ben, 'Lead').locator('li.card').count()).toBe(0);
    expect(await ben.getByText('Awaiting approval').count()).toBe(0);
    await shot(ben, 'deals');
  });

  it('a note is added; the agent answers the owner in a stream that grows word by word and cites the note', async () => {
    await nav(ben, 'Timeline');
    await ben.getByRole('textbox', { name: 'Note' }).fill(NOTE);
    await ben.getByRole('button', { name: 'Add note' }).click();
    await ben.locator('.entry.note', { hasText: NOTE }).waitFor();
    // The workspace's timeline so far: the enrichment, the approved move, the note, newest first.
    expect(await ben.locator('ol.timeline > li .badge').allTextContents()).toEqual(['Note', 'Stage', 'CRM']);
    await ben.locator('.entry.stage_change', { hasText: 'Stage: Lead → Qualified' }).waitFor();
    await ben.locator('.entry.system', { hasText: 'Enriched from the people vendor' }).waitFor();
    const [note] = await rig.serviceRows('activities', `workspace_id=eq.${workspaceId}&kind=eq.note`);
    expect(note).toMatchObject({ body: NOTE, user_id: benId });
    const indexed = () => rig.serviceRows('search_documents', `activity_id=eq.${note.id}`);
    await expect.poll(async () => (await indexed()).length, { timeout: 20_000 }).toBe(1);
    const [doc] = await indexed();
    const documentStatus = async () => (await rig.platform('GET', `/v1/${rig.appId}/rag/collections/crm/documents/${doc.document_id}`)).json?.status;
    await expect.poll(documentStatus, { timeout: 20_000 }).toBe('ready');
    await shot(ben, 'timeline');
    // Search over the timeline finds the note.
    await ben.getByLabel('Search notes, e-mails and transcripts').fill('pilot budget');
    await ben.getByRole('button', { name: 'Search', exact: true }).click();
    await ben.getByRole('region', { name: 'Search results' }).getByText('pilot budget is 40k').waitFor();

    // The fake upstream's slow model: 200 ms between streamed words, so the page can be seen filling in.
    const slow = await rig.platform('PATCH', `/v1/${rig.appId}/functions/agent-chat/env`, { AI_MODEL: 'fake/slow' });
    expect(slow.status, slow.text).toBe(200);
    await nav(ada, 'Agent');
    await ada.getByLabel('Message').fill('What is the pilot budget?');
    await ada.getByRole('button', { name: 'Send' }).click();
    const streaming = ada.getByTestId('streaming-answer');
    // Citations come first, then the answer grows word by word while it streams.
    await streaming.locator('.citations li', { hasText: 'pilot budget is 40k' }).waitFor();
    const seen = (await streamedAnswer(ada)).filter((s) => s.text.startsWith('echo:'));
    const turns = await rig.serviceRows('chat_messages', `workspace_id=eq.${workspaceId}&order=created_at&select=role,content,user_id,citations`);
    expect(turns.map((t) => [t.role, t.user_id])).toEqual([
      ['user', adaId],
      ['assistant', adaId],
    ]);
    const answer = turns[1].content as string;
    // Seen growing: many distinct prefixes of the kept answer, each longer than the last, over more than a second.
    expect(seen.length).toBeGreaterThanOrEqual(5);
    for (const [i, s] of seen.entries()) {
      expect(answer.startsWith(s.text)).toBe(true);
      if (i > 0) expect(s.text.length).toBeGreaterThan(seen[i - 1]!.text.length);
    }
    expect(seen[0]!.text.length).toBeLessThan(answer.length / 2);
    expect(seen.at(-1)!.at - seen[0]!.at).toBeGreaterThan(1000);
    // Kept, the answer shows with the passage it cited: the note.
    expect(answer).toContain('pilot budget is 40k');
    expect(turns[1].citations).toEqual([expect.objectContaining({ kind: 'note', activity_id: note.id, snippet: expect.stringContaining('pilot budget is 40k') })]);
    const kept = ada.locator('.bubble.assistant').last();
    expect(await kept.locator('p.prewrap').textContent()).toBe(answer);
    expect(await kept.locator('.citations').textContent()).toContain('pilot budget is 40k');
    await shot(ada, 'chat');
  });

  it('someone of another workspace, in a third browser, sees none of it: pages, search, chat, the data API, the functions', async () => {
    await signUp(cleo, 'cleo@other.example');
    await createWorkspace(cleo, 'Other team');
    const cleoSession = await sessionOf(cleo);
    const [other] = await rig.serviceRows('workspaces', 'name=eq.Other team');
    expect(await cleo.getByRole('combobox', { name: 'Workspace' }).locator('option').allTextContents()).toEqual(['Other team (owner)']);

    await nav(cleo, 'Contacts');
    await cleo.getByText('No contacts yet').waitFor();
    await nav(cleo, 'Companies');
    await heading(cleo, 'Companies');
    await nav(cleo, 'Deals');
    await column(cleo, 'Qualified').waitFor();
    expect(await cleo.locator('li.card').count()).toBe(0);
    await nav(cleo, 'Approvals');
    await cleo.getByText('Nothing pending.').waitFor();
    await cleo.getByLabel('Show').selectOption('applied');
    await cleo.getByText('Nothing applied.').waitFor();
    await nav(cleo, 'Timeline');
    await cleo.getByText('Nothing on the timeline yet.').waitFor();
    await cleo.getByLabel('Search notes, e-mails and transcripts').fill('pilot budget');
    await cleo.getByRole('button', { name: 'Search', exact: true }).click();
    await cleo.getByRole('region', { name: 'Search results' }).getByText('Nothing found.').waitFor();

    await nav(cleo, 'Agent');
    await cleo.getByLabel('Message').fill('What is the pilot budget?');
    await cleo.getByRole('button', { name: 'Send' }).click();
    await streamedAnswer(cleo);
    const [question, reply] = await rig.serviceRows('chat_messages', `workspace_id=eq.${other.id}&order=created_at&select=role,content,citations`);
    expect([question.role, reply.role]).toEqual(['user', 'assistant']);
    expect(reply.citations).toEqual([]);
    const kept = cleo.locator('.bubble.assistant').last();
    expect(await kept.locator('p.prewrap').textContent()).toBe(reply.content);
    expect(await kept.locator('.citations').count()).toBe(0);
    const everything = (await cleo.locator('body').textContent())!;
    for (const secret of ['Grace', 'Navy', '40k', 'Company 5', 'Acme', 'ada@', 'ben@']) expect(everything).not.toContain(secret);

    // Underneath: row-level security answers nothing of Acme's, and its functions refuse a non-member.
    const db = rig.supabase(cleoSession.access_token);
    for (const table of ['workspaces', 'workspace_members', 'contacts', 'companies', 'deals', 'activities', 'proposals', 'chat_messages', 'search_documents']) {
      const read = await db.from(table).select('*').eq(table === 'workspaces' ? 'id' : 'workspace_id', workspaceId);
      expect([table, read.error, read.data]).toEqual([table, null, []]);
    }
    const refused = async (name: string, call: Parameters<CrmRig['fn']>[1]) => {
      const res = await rig.fn(name, { token: cleoSession.access_token, ...call });
      return [res.status, res.json?.error?.code];
    };
    expect(await refused('search', { method: 'GET', query: { workspace_id: workspaceId, q: 'pilot budget' } })).toEqual([403, 'not_a_member']);
    expect(await refused('agent-chat', { body: { workspace_id: workspaceId, message: 'What is the pilot budget?' } })).toEqual([403, 'not_a_member']);
    expect(await refused('contact-enrich', { body: { contact_id: contactId } })).toEqual([404, 'not_found']);
    expect(problems).toEqual([]);
  });
});
