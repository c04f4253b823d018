// The console's Schema, Table editor and Users tabs (issue 30) in Debian's Chromium against the platform started as
// `npm start` starts it. The owner creates an app, writes a schema, reads its dry run (the very statements the API's
// dry run gives) and applies it; sees the tables drawn with their relationship and each table's policies; inserts,
// edits and deletes rows in the table editor (checked through the data API); pages a table of 10,000 rows 50 at a time
// (never more, the last page reachable), sorts and filters it in the data API's dialect; switches Live on for a table
// that streams and sees its changes arrive; lists and searches the app's end users. A viewer sees none of the write
// buttons (nor Live), and the API refuses the writes anyway.
import type { Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, heading, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';

const PAGE = 50;
const BIG_ROWS = 10_000;
/** `n` of the big table: id modulo a prime, so sorting by it interleaves the ids. */
const MOD = 97;
const SCHEMA = {
  tables: {
    authors: {
      columns: { id: { type: 'integer', primary: true, identity: true }, name: { type: 'text', nullable: false }, meta: { type: 'jsonb' } },
      access: 'public',
    },
    books: {
      columns: {
        id: { type: 'integer', primary: true, identity: true },
        title: { type: 'text', nullable: false },
        author_id: { type: 'integer', references: { table: 'authors', column: 'id' } },
      },
    },
    big: { columns: { id: { type: 'integer', primary: true }, n: { type: 'integer', nullable: false }, label: { type: 'text' } } },
  },
};

let h: ConsoleHarness;
let owner: Page;
let appId: string;
let serviceKey: string;

beforeAll(async () => {
  h = await startConsole();
  owner = h.owner;
  ({ appId, serviceKey } = await h.createApp('Library'));
}, 90_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail') await owner?.screenshot({ path: `/tmp/console-data-${t.task.name.slice(0, 24).replace(/\W+/g, '-')}.png` }).catch(() => {});
  expect(h.problems).toEqual([]);
});
afterAll(async () => {
  await h?.close();
});

const appPage = async (page: Page, tabPath: string) => {
  await page.goto(`${h.consoleUrl}#/apps/${appId}/${tabPath}`);
  await heading(page, 'Library');
};
const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const dryRunShown = (page: Page) => page.getByRole('list', { name: 'Dry-run statements' }).getByRole('listitem').allTextContents();
/** A table's rows as the data API gives them to the service key (the check beside what the page shows). */
const rowsOf = async (table: string, query = 'order=id') => {
  const res = await fetch(`${h.server.url}/v1/${appId}/${table}?${query}`, { headers: { authorization: `Bearer ${serviceKey}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Array<Record<string, unknown>>;
};
/** The grid's first column (the id) of every row shown. */
const shownIds = async (page: Page) => (await page.locator('.grid tbody tr td:first-child').allTextContents()).map(Number);
const pagerText = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('status').textContent();

describe('the console schema, table editor and users tabs', () => {
  it('applies a schema after its dry run: the statements shown are the API dry run, Apply only for the text dry-run', async () => {
    await appPage(owner, 'schema');
    await owner.getByRole('heading', { name: 'Schema', level: 2 }).waitFor();
    const editor = owner.getByLabel('Schema JSON');
    expect(JSON.parse(await editor.inputValue())).toEqual({ tables: {} });
    expect(await button(owner, 'Apply').isDisabled()).toBe(true);

    // An error of the API is shown with its message.
    const bad = { tables: { broken: { columns: { id: { type: 'nonsense' } } } } };
    const refused = await callFrom(owner, 'POST', `/v1/${appId}/schema/apply`, { schema: bad, dry_run: true });
    expect(refused.status).toBe(400);
    await editor.fill(JSON.stringify(bad));
    await button(owner, 'Dry run').click();
    await owner.getByRole('alert').filter({ hasText: refused.json.error.message }).waitFor();
    await editor.fill('{ "tables": ');
    await button(owner, 'Dry run').click();
    await owner.getByRole('alert').filter({ hasText: 'The schema is not valid JSON' }).waitFor();

    const text = JSON.stringify(SCHEMA, null, 2);
    await editor.fill(text);
    await button(owner, 'Dry run').click();
    await owner.getByRole('list', { name: 'Dry-run statements' }).waitFor();
    const api = await callFrom(owner, 'POST', `/v1/${appId}/schema/apply`, { schema: SCHEMA, dry_run: true });
    expect(api.status).toBe(200);
    expect(api.json.statements.length).toBeGreaterThan(5);
    expect(await dryRunShown(owner)).toEqual(api.json.statements);
    expect(await button(owner, 'Apply').isEnabled()).toBe(true);
    // Any edit disables Apply until the edited text is dry-run.
    await editor.fill(text.replace('"label"', '"caption"'));
    expect(await button(owner, 'Apply').isDisabled()).toBe(true);
    await editor.fill(text);
    await button(owner, 'Dry run').click();
    await owner.getByLabel('Migration name').fill('library');
    await button(owner, 'Apply').click();
    await owner.getByRole('status').filter({ hasText: `Applied migration 1 (library): ${api.json.statements.length} statements.` }).waitFor();

    const migrations = await callFrom(owner, 'GET', `/v1/${appId}/migrations`);
    expect(migrations.json.migrations.map((m: any) => [m.id, m.name, m.statements])).toEqual([[1, 'library', api.json.statements]]);
    await owner.getByRole('table', { name: 'Migrations' }).getByRole('cell', { name: 'library', exact: true }).waitFor();
    // The editor starts again from the live schema, policies left out (they follow from access); it plans nothing.
    // The schema reloads beside the migrations: the editor is replaced when it arrives, maybe after the table.
    await expect.poll(async () => Object.keys(JSON.parse(await editor.inputValue()).tables)).toEqual(['authors', 'big', 'books']);
    const live = JSON.parse(await editor.inputValue());
    expect(live.tables.authors).not.toHaveProperty('policies');
    await button(owner, 'Dry run').click();
    await owner.getByText('Nothing to change: the database already has this schema.').waitFor();
    expect(await button(owner, 'Apply').isDisabled()).toBe(true);
  });

  it('draws the tables and the foreign key, lists the relationship as text, and shows each table\'s policies', async () => {
    const diagram = owner.getByRole('img', { name: 'Diagram of 3 tables and 1 relationships, listed below' });
    await diagram.waitFor();
    expect(await diagram.locator('g.table').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-table')))).toEqual(['authors', 'big', 'books']);
    expect(await diagram.locator('g.table[data-table="books"] text').allTextContents()).toEqual(['books', 'id', 'integer', 'title', 'text', 'author_id', 'integer']);
    const lines = diagram.locator('path.relation');
    expect(await lines.count()).toBe(1);
    expect(await lines.locator('title').textContent()).toBe('books.author_id → authors.id');
    expect(await lines.getAttribute('d')).toMatch(/^M[\d.]+ [\d.]+ C/);
    expect(await owner.getByRole('list', { name: 'Relationships' }).getByRole('listitem').allTextContents()).toEqual(['books.author_id → authors.id']);

    const schema = (await callFrom(owner, 'GET', `/v1/${appId}/schema`)).json;
    const policies = owner.getByRole('table', { name: 'Policies of authors' });
    expect(await policies.locator('tbody tr td:first-child').allTextContents()).toEqual(schema.tables.authors.policies.map((p: any) => p.name));
    expect(schema.tables.authors.policies.map((p: any) => p.name)).toEqual(['svc_public_read', 'svc_service_all']);
    expect(await policies.locator('tbody tr').first().locator('td').allTextContents()).toEqual(['svc_public_read', 'SELECT', 'svc_anon, svc_user', 'true', '']);
    const columns = owner.getByRole('table', { name: 'Columns of books' });
    expect(await columns.locator('tbody tr').nth(2).locator('td').allTextContents()).toEqual(['author_id', 'integer', 'yes', '', 'no', 'authors.id']);
  });

  it('inserts, edits and deletes rows in the table editor, as the data API then shows', async () => {
    const writes: Request[] = [];
    owner.on('request', (r) => r.method() !== 'GET' && r.url().includes(`/v1/${appId}/`) && writes.push(r));
    await tab(owner, 'App', 'Table editor');
    await owner.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'authors' }).click();
    await owner.getByRole('heading', { name: 'authors', level: 3 }).waitFor();
    await owner.getByText('No rows match.').waitFor();

    await button(owner, 'Insert row').click();
    const insert = owner.getByRole('form', { name: 'Insert a row into authors' });
    await insert.getByLabel('name').fill('Ursula');
    await insert.getByLabel('meta').fill('{"born": 1929}');
    await insert.getByRole('button', { name: 'Insert row' }).click();
    await owner.locator('.grid tbody tr').first().waitFor();
    expect(await rowsOf('authors')).toEqual([{ id: 1, name: 'Ursula', meta: { born: 1929 } }]);
    expect(await owner.locator('.grid tbody tr').first().locator('td').allTextContents()).toEqual(['1', 'Ursula', '{"born":1929}', 'Edit Delete']);

    await button(owner, 'Edit row id 1').click();
    const edit = owner.getByRole('form', { name: 'Edit a row of authors' });
    expect(await edit.getByLabel('name').inputValue()).toBe('Ursula');
    await edit.getByLabel('name').fill('Ursula K. Le Guin');
    await edit.getByRole('button', { name: 'Save row' }).click();
    await owner.locator('.grid').getByText('Ursula K. Le Guin').waitFor();
    expect(await rowsOf('authors')).toEqual([{ id: 1, name: 'Ursula K. Le Guin', meta: { born: 1929 } }]);
    // Only the changed field went, by the primary key, one row at most.
    const patch = writes.find((r) => r.method() === 'PATCH')!;
    expect(new URL(patch.url()).search).toBe('?id=eq.1');
    expect(patch.postDataJSON()).toEqual({ name: 'Ursula K. Le Guin' });
    expect(patch.headers().prefer).toBe('return=representation, handling=strict, max-affected=1');

    await owner.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'books' }).click();
    await owner.getByRole('heading', { name: 'books', level: 3 }).waitFor();
    for (const title of ['A Wizard of Earthsea', 'The Dispossessed']) {
      await button(owner, 'Insert row').click();
      const form = owner.getByRole('form', { name: 'Insert a row into books' });
      await form.getByLabel('title').fill(title);
      await form.getByLabel('author_id').fill('1');
      await form.getByRole('button', { name: 'Insert row' }).click();
      await owner.locator('.grid').getByText(title).waitFor();
    }
    await button(owner, 'Delete row id 1').click();
    await owner.locator('.grid').getByText('A Wizard of Earthsea').waitFor({ state: 'detached' });
    expect(await rowsOf('books')).toEqual([{ id: 2, title: 'The Dispossessed', author_id: 1 }]);
    expect(writes.map((r) => `${r.method()} ${new URL(r.url()).pathname.split('/').pop()}${new URL(r.url()).search}`)).toEqual([
      'POST authors',
      'PATCH authors?id=eq.1',
      'POST books',
      'POST books',
      'DELETE books?id=eq.1',
    ]);
  });

  it('pages a table of 10,000 rows 50 at a time, reaches the last page, sorts and filters it in the data API dialect', async () => {
    const rows = Array.from({ length: BIG_ROWS }, (_, i) => ({ id: i + 1, n: (i + 1) % MOD, label: `row ${i + 1}` }));
    for (let i = 0; i < rows.length; i += 2500) {
      const res = await fetch(`${h.server.url}/v1/${appId}/big`, {
        method: 'POST',
        headers: { authorization: `Bearer ${serviceKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(rows.slice(i, i + 2500)),
      });
      expect(res.status).toBe(201);
    }
    const reads: URL[] = [];
    owner.on('request', (r) => r.method() === 'GET' && r.url().includes(`/v1/${appId}/big`) && reads.push(new URL(r.url())));

    const started = Date.now();
    await owner.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'big' }).click();
    await owner.locator('.grid tbody tr').nth(PAGE - 1).waitFor();
    console.log(`console: the first page of a ${BIG_ROWS.toLocaleString('en')}-row table shown in ${Date.now() - started} ms`);
    expect(await shownIds(owner)).toEqual(rows.slice(0, PAGE).map((r) => r.id));
    expect(await pagerText(owner)).toMatch(/^Rows 1–50 of (about )?[\d,]+, page 1 of (about )?[\d,]+$/);

    await button(owner, 'Next').click();
    await owner.locator('.grid tbody td').getByText('row 51', { exact: true }).waitFor();
    expect(await shownIds(owner)).toEqual(rows.slice(PAGE, 2 * PAGE).map((r) => r.id));

    await button(owner, 'Last').click();
    await owner.locator('.grid tbody td').getByText('row 10000', { exact: true }).waitFor();
    expect(await shownIds(owner)).toEqual(rows.slice(-PAGE).map((r) => r.id));
    expect(await pagerText(owner)).toBe('Rows 9,951–10,000 of 10,000, page 200 of 200');
    expect(await button(owner, 'Next').isDisabled()).toBe(true);
    await button(owner, 'First').click();
    await owner.locator('.grid tbody td').getByText('row 1', { exact: true }).waitFor();

    // Sorting by n (the key breaks ties): ascending, then descending; the rows are the data API's for that order.
    const sortBy = async (dir: string) => {
      await owner.locator('.grid thead').getByRole('button', { name: /^n( [▲▼])?$/ }).click();
      await owner.locator(`.grid th[aria-sort="${dir}ending"]`).waitFor();
      const expected = (await rowsOf('big', `order=n.${dir},id.asc&limit=${PAGE}`)).map((r) => r.id);
      await expect.poll(() => shownIds(owner)).toEqual(expected);
      return expected;
    };
    expect((await sortBy('asc')).slice(0, 3)).toEqual([97, 194, 291]);
    expect((await sortBy('desc')).slice(0, 3)).toEqual([96, 193, 290]);

    // A filter n=eq.5: the 104 matching rows, counted exactly, the first 50 of them by n desc (ties by id).
    await owner.getByRole('combobox', { name: 'Column' }).selectOption('n');
    await owner.getByRole('combobox', { name: 'Operator' }).selectOption('eq');
    await owner.getByLabel('Value').fill('5');
    await button(owner, 'Add filter').click();
    await owner.getByRole('list', { name: 'Filters' }).getByText('n=eq.5').waitFor();
    const matching = rows.filter((r) => r.n === 5).map((r) => r.id);
    expect(matching).toHaveLength(104);
    await expect.poll(() => pagerText(owner)).toBe('Rows 1–50 of 104, page 1 of 3');
    expect(await shownIds(owner)).toEqual(matching.slice(0, PAGE));
    await button(owner, 'Last').click();
    await expect.poll(() => pagerText(owner)).toBe('Rows 101–104 of 104, page 3 of 3');
    expect(await shownIds(owner)).toEqual(matching.slice(100));
    expect((await rowsOf('big', 'n=eq.5&order=id&offset=100')).map((r) => r.id)).toEqual(matching.slice(100));
    await owner.getByRole('button', { name: 'Remove filter n=eq.5' }).click();
    await expect.poll(() => shownIds(owner)).toEqual((await rowsOf('big', `order=n.desc,id.asc&limit=${PAGE}`)).map((r) => r.id));

    // Every read of the big table asked for at most 50 rows.
    expect(reads.length).toBeGreaterThanOrEqual(10);
    for (const url of reads) expect(Number(url.searchParams.get('limit')), url.search).toBeGreaterThan(0);
    for (const url of reads) expect(Number(url.searchParams.get('limit')), url.search).toBeLessThanOrEqual(PAGE);
    expect(reads.map((u) => u.searchParams.get('offset'))).toContain('9950');
    expect(reads.some((u) => u.searchParams.get('n') === 'eq.5' && u.searchParams.get('order') === 'n.desc,id.asc')).toBe(true);
  });

  it('lists the end users newest first and searches them by e-mail', async () => {
    const emails = ['ann@readers.example', 'bob@readers.example', 'cy@writers.example'];
    for (const email of emails) {
      const res = await fetch(`${h.server.url}/v1/${appId}/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'end user password' }) });
      expect(res.status).toBe(201);
    }
    await tab(owner, 'App', 'Users');
    const table = owner.getByRole('table', { name: 'End users' });
    await table.waitFor();
    const shownEmails = () => table.locator('tbody tr td:first-child').allTextContents();
    const api = await callFrom(owner, 'GET', `/v1/${appId}/auth/users?limit=50`);
    expect(api.json.users.map((u: any) => u.email)).toEqual([...emails].reverse());
    expect(await shownEmails()).toEqual(api.json.users.map((u: any) => u.email));
    expect(await table.locator('tbody tr').first().locator('td').nth(1).textContent()).toBe(api.json.users[0].id);

    await owner.getByLabel('E-mail contains').fill('readers');
    await button(owner, 'Search').click();
    await owner.getByText('Users whose e-mail contains “readers”.').waitFor();
    await expect.poll(shownEmails).toEqual(['bob@readers.example', 'ann@readers.example']);
    expect((await callFrom(owner, 'GET', `/v1/${appId}/auth/users?q=readers`)).json.users.map((u: any) => u.email)).toEqual(await shownEmails());
    expect(await button(owner, 'Next').isDisabled()).toBe(true);
    await button(owner, 'Show all').click();
    await expect.poll(shownEmails).toEqual([...emails].reverse());
  });

  it("switches Live on for a table that streams and shows its changes as they commit, over supabase-js with the session's realtime token", async () => {
    /** A write of the data API with the service key, as another client of the app makes it. */
    const write = (method: string, path: string, body?: unknown) =>
      fetch(`${h.server.url}/v1/${appId}/${path}`, {
        method,
        headers: { authorization: `Bearer ${serviceKey}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const applied = await write('POST', 'schema/apply', { schema: { tables: { books: { ...SCHEMA.tables.books, realtime: true } } } });
    expect(applied.status).toBe(200);
    const tokens: Request[] = [];
    const sockets: string[] = [];
    owner.on('request', (r) => r.url().endsWith(`/v1/${appId}/realtime/token`) && tokens.push(r));
    owner.on('websocket', (ws) => sockets.push(ws.url()));

    await appPage(owner, 'data/authors');
    await owner.getByRole('heading', { name: 'authors', level: 3 }).waitFor();
    await owner.getByText('Live: this table does not stream. Apply its definition with "realtime": true (Schema tab) to see its changes here.').waitFor();
    await owner.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'books' }).click();
    await owner.getByRole('heading', { name: 'books', level: 3 }).waitFor();
    const live = owner.getByRole('region', { name: 'Live changes' });
    await live.getByRole('button', { name: 'Live' }).click();
    await live.getByRole('status').filter({ hasText: 'Live: changes appear here as they commit.' }).waitFor();
    expect(await live.getByRole('button', { name: 'Live' }).getAttribute('aria-pressed')).toBe('true');

    expect((await write('POST', 'books', { title: 'The Lathe of Heaven', author_id: 1 })).status).toBe(201);
    const id = (await rowsOf('books', 'title=eq.The Lathe of Heaven'))[0]!.id;
    expect((await write('PATCH', `books?id=eq.${id}`, { title: 'The Lathe of Heaven (1971)' })).status).toBe(204);
    expect((await write('DELETE', `books?id=eq.${id}`)).status).toBe(204);
    const shown = live.getByRole('table', { name: 'Changes of books, newest first' }).locator('tbody tr');
    await shown.nth(2).waitFor();
    const cells = await Promise.all((await shown.all()).map(async (tr) => (await tr.locator('td').allTextContents()).slice(1)));
    expect(cells).toEqual([
      ['DELETE', JSON.stringify({ id, title: 'The Lathe of Heaven (1971)', author_id: 1 })],
      ['UPDATE', JSON.stringify({ id, title: 'The Lathe of Heaven (1971)', author_id: 1 })],
      ['INSERT', JSON.stringify({ id, title: 'The Lathe of Heaven', author_id: 1 })],
    ]);
    // The page took the routes any client takes: a realtime token minted with its session, the app's socket with its
    // publishable key.
    expect(tokens.map((r) => r.method())).toEqual(['POST']);
    expect(sockets.map((u) => new URL(u).pathname)).toEqual([`/v1/${appId}/realtime/v1/websocket`]);
    expect(new URL(sockets[0]!).searchParams.get('apikey')).toMatch(/^svc_pub_/);

    await live.getByRole('button', { name: 'Live' }).click();
    expect(await live.getByRole('button', { name: 'Live' }).getAttribute('aria-pressed')).toBe('false');
    expect(await live.getByRole('status').count()).toBe(0);
  });

  it('a viewer reads every tab with no write button, and the API refuses the writes', async () => {
    const viewer = await h.personAs('viewer', 'val@example.com');
    await appPage(viewer, 'schema');
    await viewer.getByRole('img', { name: 'Diagram of 3 tables and 1 relationships, listed below' }).waitFor();
    await viewer.getByRole('table', { name: 'Policies of books' }).waitFor();
    expect(await viewer.getByLabel('Schema JSON').count()).toBe(0);
    expect(await button(viewer, 'Dry run').count()).toBe(0);
    expect(await button(viewer, 'Apply').count()).toBe(0);
    const apply = await callFrom(viewer, 'POST', `/v1/${appId}/schema/apply`, { schema: SCHEMA, dry_run: true });
    expect(apply.status).toBe(403);
    expect(apply.json.error.code).toBe('FORBIDDEN_ROLE');

    await tab(viewer, 'App', 'Table editor');
    await viewer.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'authors' }).click();
    await viewer.locator('.grid').getByText('Ursula K. Le Guin').waitFor();
    expect(await button(viewer, 'Insert row').count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /^(Edit|Delete) row/ }).count()).toBe(0);
    expect(await viewer.locator('.grid thead th').allTextContents()).toEqual(['id ▲', 'name', 'meta']);
    await viewer.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'books' }).click();
    await viewer.getByText('Live needs the developer role: its channel acts as the app.').waitFor();
    await viewer.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'authors' }).click();

    // The data API answers a viewer's session write in its PostgREST shape, the platform's envelope under `error`.
    const message = 'This call needs the role developer or higher in the account; the credential has viewer.';
    const remediation = 'Ask an owner or admin of the account for a higher role, or use a credential of a member who has it.';
    const refusal = {
      code: 'FORBIDDEN_ROLE',
      message,
      details: null,
      hint: remediation,
      error: { code: 'FORBIDDEN_ROLE', message, remediation, details: { required_role: 'developer', role: 'viewer' }, documentation_url: h.server.docsUrl('data') },
    };
    const writes = [
      await callFrom(viewer, 'POST', `/v1/${appId}/authors`, { name: 'Nobody' }),
      await callFrom(viewer, 'PATCH', `/v1/${appId}/authors?id=eq.1`, { name: 'Nobody' }),
      await callFrom(viewer, 'DELETE', `/v1/${appId}/authors?id=eq.1`),
    ];
    for (const w of writes) {
      expect(w.status).toBe(403);
      expect(w.json).toEqual(refusal);
    }
    expect(await rowsOf('authors')).toEqual([{ id: 1, name: 'Ursula K. Le Guin', meta: { born: 1929 } }]);

    await tab(viewer, 'App', 'Users');
    await viewer.getByRole('table', { name: 'End users' }).waitFor();
  });
});
