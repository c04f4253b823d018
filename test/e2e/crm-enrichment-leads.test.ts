// The cloned CRM's enrichment and lead-search functions (issue 29) against the fake people vendors: the structured
// Proxycurl-style primary (person and company searches by filter, profiles, work-email lookups answered through the
// platform's callback) and the Exa-style semantic secondary (searches by name). Each answer's credits are checked
// against the platform's own usage rows; what was found lands on the rows, on the timeline and on lead lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrm, type CrmRig, type EndUser } from '../helpers/crm.ts';
import { profileUrl } from '../fakes/people-proxycurl.ts';

let rig: CrmRig;
let ann: EndUser; // owner of workspace A
let ben: EndUser; // member of A
let dan: EndUser; // owner of workspace B
let wsA: string;
let wsB: string;

const errorOf = (res: { status: number; json: any }) => [res.status, res.json?.error?.code];
/** The people usage rows written since `since` (an id), as the platform bills them. */
async function usageSince(since: number): Promise<{ actions: string[]; credits: number; last: number }> {
  const { rows } = await rig.control.query('select id::int, action, credits_consumed from people_usage_logs where app_id = $1 and id > $2 order by id', [rig.appId, since]);
  return { actions: rows.map((r) => r.action), credits: rows.reduce((n, r) => n + r.credits_consumed, 0), last: rows.at(-1)?.id ?? since };
}
const lastUsage = async () => (await usageSince(0)).last;
const contact = async (id: string) => (await rig.serviceRows('contacts', `id=eq.${id}`))[0];
const timeline = (column: string, id: string) => rig.serviceRows('activities', `${column}=eq.${id}&kind=eq.system&select=subject,body,user_id&order=created_at`);

beforeAll(async () => {
  rig = await startCrm();
  const user = (name: string) => rig.signUp(`${name}@sales.example`);
  [ann, ben, dan] = await Promise.all([user('ann'), user('ben'), user('dan')]);
  wsA = await rig.workspace(ann, 'Sales');
  wsB = await rig.workspace(dan, 'Elsewhere');
  await rig.join(wsA, ann, ben);
}, 420_000);

afterAll(async () => {
  await rig?.stop();
});

const ids: Record<string, string> = {};

describe('contact-import', () => {
  it('imports contacts with their companies, once per e-mail, and refuses bad rows before writing any', async () => {
    const call = (who: EndUser, contacts: unknown) => rig.fn('contact-import', { token: who.token, body: { workspace_id: wsA, contacts } });
    expect(errorOf(await call(ann, []))).toEqual([400, 'missing_field']);
    const bad = await call(ann, [{ full_name: 'Fine' }, { full_name: 'Bad', email: 'nope' }]);
    expect(errorOf(bad)).toEqual([400, 'invalid_field']);
    expect(bad.json.error.message).toContain('contacts[1]');
    expect(errorOf(await call(ann, [{ email: 'a@b.example' }]))).toEqual([400, 'missing_field']);
    expect(errorOf(await call(ann, Array.from({ length: 1001 }, () => ({ full_name: 'x' }))))).toEqual([400, 'invalid_field']);
    expect(errorOf(await call(dan, [{ full_name: 'Sneaky' }]))).toEqual([403, 'not_a_member']);
    expect(await rig.serviceRows('contacts', `workspace_id=eq.${wsA}`)).toEqual([]);

    const res = await call(ben, [
      { full_name: 'Person Number3', company: 'Company 3', title: 'Head of Things' },
      { full_name: 'Person Number5', email: 'P5@Old.example', linkedin_url: 'https://www.linkedin.com/in/person-5/?trk=x', company: 'Company 5', company_domain: 'https://company5.example/about' },
      { full_name: 'Same person again', email: 'p5@old.example', phone: '+1 555 0101' },
      { full_name: 'Nora Nolink', email: 'nora@client.example' },
    ]);
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ imported: 4, created: 3, merged: 1, companies_created: 2 });
    expect(res.json.contacts[2].id).toBe(res.json.contacts[1].id);
    [ids.p3, ids.p5, , ids.nora] = res.json.contacts.map((c: any) => c.id);
    const p5 = await contact(ids.p5!);
    expect(p5).toMatchObject({ source: 'import', email: 'p5@old.example', linkedin_url: profileUrl(5), phone: '+1 555 0101', user_id: ben.userId });
    const companies = await rig.serviceRows('companies', `workspace_id=eq.${wsA}&select=id,name,domain&order=name`);
    expect(companies.map((c: any) => [c.name, c.domain])).toEqual([
      ['Company 3', null],
      ['Company 5', 'company5.example'],
    ]);
    ids.company3 = companies[0].id;
    expect(p5.company_id).toBe(companies[1].id);

    // Again: the existing contact is completed (an empty title filled), never overwritten or duplicated.
    const again = await call(ann, [{ full_name: 'Nora N.', email: 'NORA@client.example', title: 'CFO' }]);
    expect(again.json).toMatchObject({ created: 0, merged: 1, contacts: [{ id: ids.nora, created: false }] });
    expect(await contact(ids.nora!)).toMatchObject({ full_name: 'Nora Nolink', title: 'CFO' });
    expect(await rig.serviceRows('contacts', `workspace_id=eq.${wsA}&select=id`)).toHaveLength(3);
  });
});

describe('enrichment', () => {
  it('contact-enrich finds a contact without a URL by name among their company\'s people, fills empty columns only, and says so on the timeline', async () => {
    const since = await lastUsage();
    const res = await rig.fn('contact-enrich', { token: ben.token, body: { contact_id: ids.p3 } });
    expect(res.status, res.text).toBe(200);
    const usage = await usageSince(since);
    expect(usage.actions).toEqual(['search_person', 'profile']);
    expect(res.json).toMatchObject({ status: 'ok', credits: usage.credits, changed: expect.arrayContaining(['linkedin_url', 'location']) });
    const search = rig.fakes.people.requests.find((r) => r.path === '/api/v2/search/person')!;
    expect(search.query).toMatchObject({ current_company_name: 'Company 3' });
    expect(rig.fakes.people.requests.filter((r) => r.path === '/api/v2/linkedin').map((r) => r.query.linkedin_profile_url)).toEqual([profileUrl(3)]);
    const row = await contact(ids.p3!);
    // The title someone typed stays; the empty columns are filled.
    expect(row).toMatchObject({ title: 'Head of Things', linkedin_url: profileUrl(3), location: 'San Francisco, United States', company_id: ids.company3 });
    expect(row.enrichment).toMatchObject({ provider: 'people', status: 'ok', credits: usage.credits, fields: { title: 'CTO', company_name: 'Company 3' }, source_url: profileUrl(3) });
    expect(Date.now() - Date.parse(row.enriched_at)).toBeLessThan(60_000);
    expect(await timeline('contact_id', ids.p3!)).toEqual([{ subject: 'Enriched from the people vendor', body: expect.stringContaining('linkedin_url'), user_id: ben.userId }]);
  });

  it('contact-enrich by URL fills the title; a profile the vendor lacks is recorded as not found; refusals', async () => {
    const res = await rig.fn('contact-enrich', { token: ann.token, body: { contact_id: ids.p5 } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.contact).toMatchObject({ title: 'CTO', location: 'San Francisco, United States', email: 'p5@old.example' });
    expect(res.json.credits).toBe(2);

    const db = rig.supabase(ann.token);
    const ghost = await db.from('contacts').insert({ workspace_id: wsA, full_name: 'Ghost', linkedin_url: 'https://www.linkedin.com/in/nobody-here' }).select().single();
    expect(ghost.error).toBeNull();
    const missing = await rig.fn('contact-enrich', { token: ann.token, body: { contact_id: ghost.data.id } });
    expect([missing.status, missing.json.status]).toEqual([200, 'not_found']);
    expect((await contact(ghost.data.id)).enrichment).toMatchObject({ status: 'not_found', fields: null });
    expect((await timeline('contact_id', ghost.data.id))[0].subject).toBe('Enrichment found nothing');

    expect(errorOf(await rig.fn('contact-enrich', { token: ann.token, body: { contact_id: ids.nora } }))).toEqual([409, 'nothing_to_search']);
    expect(errorOf(await rig.fn('contact-enrich', { token: dan.token, body: { contact_id: ids.p5 } }))).toEqual([404, 'not_found']);
    expect(errorOf(await rig.fn('contact-enrich', { token: ann.token, body: { contact_id: 'p5' } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('contact-enrich', { body: { contact_id: ids.p5 } }))).toEqual([401, 'sign_in_required']);
  });

  it('company-enrich finds the company by name through the semantic search and records what it found', async () => {
    const since = await lastUsage();
    const res = await rig.fn('company-enrich', { token: ann.token, body: { company_id: ids.company3 } });
    expect(res.status, res.text).toBe(200);
    const usage = await usageSince(since);
    expect(usage.actions).toEqual(['search_company']);
    expect(res.json).toMatchObject({ status: 'ok', credits: usage.credits, company: { linkedin_url: 'https://www.linkedin.com/company/company-3' } });
    expect(rig.fakes.exa.requests.at(-1)!.body).toMatchObject({ query: 'Company 3', category: 'company' });
    const [row] = await rig.serviceRows('companies', `id=eq.${ids.company3}`);
    expect(row.enrichment).toMatchObject({ status: 'ok', query: 'Company 3' });
    expect((await timeline('company_id', ids.company3!))[0]).toMatchObject({ subject: 'Enriched from the people vendor', user_id: ann.userId });

    const other = await rig.supabase(ann.token).from('companies').insert({ workspace_id: wsA, name: 'Zeta Nobody' }).select().single();
    const none = await rig.fn('company-enrich', { token: ann.token, body: { company_id: other.data.id } });
    expect([none.status, none.json.status]).toEqual([200, 'not_found']);
    expect(errorOf(await rig.fn('company-enrich', { token: dan.token, body: { company_id: ids.company3 } }))).toEqual([404, 'not_found']);
  });

  it('email-find queues the work-email lookup once; email-lookups collects it into the contact when the vendor answers', async () => {
    const res = await rig.fn('email-find', { token: ann.token, body: { contact_id: ids.p5 } });
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ email_status: 'pending', queued: true, credits: 3, lookup_id: expect.any(String) });
    expect(rig.fakes.people.lookups.map((l) => l.profileUrl)).toEqual([profileUrl(5)]);
    expect(await contact(ids.p5!)).toMatchObject({ email_status: 'pending', email_lookup_id: res.json.lookup_id });
    // Asking again while it is pending pays nothing and asks the vendor nothing.
    const twice = await rig.fn('email-find', { token: ben.token, body: { contact_id: ids.p5 } });
    expect(twice.json).toMatchObject({ queued: false, credits: 0, lookup_id: res.json.lookup_id });
    expect(rig.fakes.people.lookups).toHaveLength(1);
    expect(errorOf(await rig.fn('email-find', { token: ann.token, body: { contact_id: ids.nora } }))).toEqual([409, 'no_profile']);
    expect(errorOf(await rig.fn('email-find', { token: dan.token, body: { contact_id: ids.p5 } }))).toEqual([404, 'not_found']);

    const early = await rig.cron('email-lookups');
    expect(early).toMatchObject({ status: 200, body: { checked: 1, found: 0, not_found: 0, pending: 1 } });
    expect(await rig.fakes.people.deliverEmail(0, { origin: rig.url })).toMatchObject({ status: 200 });
    const done = await rig.cron('email-lookups');
    expect(done).toMatchObject({ status: 200, body: { checked: 1, found: 1, not_found: 0, pending: 0 } });
    const row = await contact(ids.p5!);
    // The e-mail someone typed stays the contact's; the work e-mail found is kept beside it.
    expect(row).toMatchObject({ email: 'p5@old.example', email_status: 'found' });
    expect(row.enrichment.work_email).toMatchObject({ email: 'person-5@example.com', status: 'resolved' });
    expect((await timeline('contact_id', ids.p5!)).at(-1)).toMatchObject({ subject: 'Work e-mail found', body: expect.stringContaining('person-5@example.com') });
  });

  it('enrich-stale refreshes records enriched more than STALE_DAYS ago from the vendor, not the cache', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const service = rig.supabase();
    expect((await service.from('contacts').update({ enriched_at: old }).eq('id', ids.p3!).select()).error).toBeNull();
    expect((await service.from('companies').update({ enriched_at: old }).eq('id', ids.company3!).select()).error).toBeNull();
    const profiles = rig.fakes.people.requests.filter((r) => r.path === '/api/v2/linkedin').length;
    const since = await lastUsage();
    // A cron function spends credits: it has no public route to be triggered from.
    expect((await rig.fn('enrich-stale', { token: ann.token, body: {} })).status).toBe(404);
    const res = await rig.cron('enrich-stale');
    expect(res.status, JSON.stringify(res)).toBe(200);
    const usage = await usageSince(since);
    expect(usage.actions).toEqual(['profile', 'search_company']);
    expect(res.body).toMatchObject({ contacts: { stale: 1, refreshed: 1, failed: 0, credits: 2 }, companies: { stale: 1, refreshed: 1, failed: 0 } });
    expect(res.body.contacts.credits + res.body.companies.credits).toBe(usage.credits);
    expect(rig.fakes.people.requests.filter((r) => r.path === '/api/v2/linkedin')).toHaveLength(profiles + 1);
    const row = await contact(ids.p3!);
    expect(Date.now() - Date.parse(row.enriched_at)).toBeLessThan(60_000);
    expect(row.title).toBe('Head of Things');
    expect((await timeline('contact_id', ids.p3!)).at(-1)).toMatchObject({ subject: 'Enriched from the people vendor', user_id: null });
  });
});

describe('lead search', () => {
  let results: any[];
  let listId: string;

  it('lead-search-people answers results, the credits they cost and which are already contacts', async () => {
    const call = (who: EndUser, body: Record<string, unknown>) => rig.fn('lead-search-people', { token: who.token, body: { workspace_id: wsA, ...body } });
    expect(errorOf(await call(ann, {}))).toEqual([400, 'missing_field']);
    expect(errorOf(await call(ann, { filters: { shoeSize: '42' } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await call(ann, { filters: { country: 'US' }, page_size: 0 }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await call(dan, { filters: { country: 'US' } }))).toEqual([403, 'not_a_member']);

    const since = await lastUsage();
    const res = await call(ben, { filters: { currentRoleTitle: 'CTO', country: 'US' }, page_size: 3 });
    expect(res.status, res.text).toBe(200);
    const usage = await usageSince(since);
    expect(res.json).toMatchObject({ credits: usage.credits, total: 8, next_token: '3' });
    expect(res.json.credits).toBeGreaterThan(0);
    results = res.json.results;
    expect(results.map((r) => [r.linkedin_url, r.full_name, r.title, r.company, r.contact_id])).toEqual([
      [profileUrl(1), 'Person Number1', 'CTO', 'Company 1', null],
      [profileUrl(3), 'Person Number3', 'CTO', 'Company 3', ids.p3],
      [profileUrl(5), 'Person Number5', 'CTO', 'Company 5', ids.p5],
    ]);
    const next = await call(ben, { filters: { currentRoleTitle: 'CTO', country: 'US' }, page_size: 3, next_token: res.json.next_token });
    expect(next.json.results.map((r: any) => r.linkedin_url)).toEqual([7, 9, 11].map(profileUrl));
    // A natural-language query goes to the semantic provider.
    const natural = await call(ben, { query: 'CTOs of software companies in San Francisco', page_size: 3 });
    expect(natural.status, natural.text).toBe(200);
    expect(rig.fakes.exa.requests.at(-1)!.body).toMatchObject({ query: 'CTOs of software companies in San Francisco', numResults: 3 });
    expect(natural.json.results.map((r: any) => [r.full_name, r.contact_id])).toEqual([
      ['Person Number1', null],
      ['Person Number2', null],
      ['Person Number3', ids.p3],
    ]);
  });

  it('lead-search-companies answers companies with their firmographics and credits', async () => {
    const since = await lastUsage();
    const res = await rig.fn('lead-search-companies', { token: ann.token, body: { workspace_id: wsA, filters: { industry: 'Software', country: 'US' }, page_size: 2 } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.credits).toBe((await usageSince(since)).credits);
    expect(res.json.results).toEqual([
      { name: 'Company 1', industry: 'Software', location: 'US', size: '1-10', linkedin_url: 'https://www.linkedin.com/company/company-1', employee_count: 10, company_id: null },
      { name: 'Company 3', industry: 'Software', location: 'US', size: '11-50', linkedin_url: 'https://www.linkedin.com/company/company-3', employee_count: 30, company_id: ids.company3 },
    ]);
    expect(errorOf(await rig.fn('lead-search-companies', { token: ann.token, body: { workspace_id: wsA, filters: { employeeCountMax: 'ten' } } }))).toEqual([400, 'invalid_field']);
  });

  it('lead-save makes contacts (source lead_search) once each, their companies, and a lead list', async () => {
    const save = (body: Record<string, unknown>, who = ann) => rig.fn('lead-save', { token: who.token, body: { workspace_id: wsA, ...body } });
    expect(errorOf(await save({ people: [] }))).toEqual([400, 'missing_field']);
    expect(errorOf(await save({ people: [{ linkedin_url: profileUrl(1) }] }))).toEqual([400, 'missing_field']);
    expect(errorOf(await save({ people: [{ full_name: 'No way to reach' }] }))).toEqual([400, 'missing_field']);
    expect(errorOf(await save({ people: results, list_name: 'x', lead_list_id: ids.p3 }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await save({ people: results, list_name: 'x' }, dan))).toEqual([403, 'not_a_member']);

    const res = await save({ people: results, list_name: 'US CTOs', query: { currentRoleTitle: 'CTO', country: 'US' } });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ created: 1, existing: 2, companies_created: 1, added_to_list: 3, lead_list: { name: 'US CTOs', query: { country: 'US' } } });
    listId = res.json.lead_list.id;
    const p1 = res.json.contacts[0].id;
    ids.p1 = p1;
    expect(await contact(p1)).toMatchObject({ source: 'lead_search', full_name: 'Person Number1', title: 'CTO', linkedin_url: profileUrl(1), email: null, user_id: ann.userId });
    expect(res.json.contacts.slice(1).map((c: any) => c.id)).toEqual([ids.p3, ids.p5]);
    expect(await rig.serviceRows('lead_list_entries', `lead_list_id=eq.${listId}&select=contact_id&order=added_at`)).toHaveLength(3);
    expect((await rig.serviceRows('companies', `workspace_id=eq.${wsA}&name=eq.Company 1`)).length).toBe(1);

    // The same person by another spelling of the URL is the same contact; a quoted name and a formula are kept as typed.
    const more = await save({ lead_list_id: listId, people: [{ full_name: 'P. One', linkedin_url: 'HTTPS://www.LinkedIn.com/in/person-1/' }, { full_name: 'Smith, "Jo"', email: 'jo@quote.example', title: '=HYPERLINK("x")' }] });
    expect(more.json).toMatchObject({ created: 1, existing: 1, added_to_list: 1, contacts: [{ id: p1, created: false }, { created: true }] });
    ids.jo = more.json.contacts[1].id;
    expect(errorOf(await save({ lead_list_id: listId, people: results }, dan))).toEqual([403, 'not_a_member']);
    const foreign = await rig.fn('lead-save', { token: dan.token, body: { workspace_id: wsB, lead_list_id: listId, people: results } });
    expect(errorOf(foreign)).toEqual([404, 'not_found']);
    // A search for a list adds what it cost to the list.
    const charged = await rig.fn('lead-search-people', { token: ann.token, body: { workspace_id: wsA, filters: { country: 'GB' }, page_size: 1, lead_list_id: listId } });
    expect(Number((await rig.serviceRows('lead_lists', `id=eq.${listId}`))[0].credits_spent)).toBe(charged.json.credits);
  });

  it('lead-list-enrich queues lookups for the list\'s contacts without e-mail; email-lookups fills what is found', async () => {
    const lookups = rig.fakes.people.lookups.length;
    const before = Number((await rig.serviceRows('lead_lists', `id=eq.${listId}`))[0].credits_spent);
    const res = await rig.fn('lead-list-enrich', { token: ben.token, body: { lead_list_id: listId } });
    expect(res.status, res.text).toBe(202);
    // Person 1 and Person 3 have a URL and no e-mail; Person 5 and Jo have e-mails.
    expect(res.json).toMatchObject({ contacts: 4, queued: 2, skipped: { has_email: 2, no_profile: 0, pending: 0, over_limit: 0 }, credits: 6 });
    expect(rig.fakes.people.lookups.slice(lookups).map((l) => l.profileUrl)).toEqual([profileUrl(1), profileUrl(3)]);
    expect(Number((await rig.serviceRows('lead_lists', `id=eq.${listId}`))[0].credits_spent)).toBe(before + 6);
    expect(errorOf(await rig.fn('lead-list-enrich', { token: dan.token, body: { lead_list_id: listId } }))).toEqual([404, 'not_found']);

    await rig.fakes.people.deliverEmail(lookups, { origin: rig.url });
    await rig.fakes.people.deliverEmail(lookups + 1, { origin: rig.url, email: null });
    const collected = await rig.cron('email-lookups');
    expect(collected.body).toMatchObject({ checked: 2, found: 1, not_found: 1, pending: 0 });
    expect(await contact(ids.p1!)).toMatchObject({ email: 'person-1@example.com', email_status: 'found' });
    expect(await contact(ids.p3!)).toMatchObject({ email: null, email_status: 'not_found' });
    expect((await timeline('contact_id', ids.p3!)).at(-1)!.subject).toBe('No work e-mail found');
  });

  it('lead-list-export answers the list as CSV, quoted where needed and safe from spreadsheet formulas', async () => {
    const res = await rig.fn('lead-list-export', { token: ben.token, query: { lead_list_id: listId } });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="US-CTOs.csv"');
    expect(res.text.split('\r\n')).toEqual([
      'full_name,email,email_status,title,company,company_domain,phone,location,linkedin_url',
      `Person Number1,person-1@example.com,found,CTO,Company 1,,,"San Francisco, United States",${profileUrl(1)}`,
      `Person Number3,,not_found,Head of Things,Company 3,,,"San Francisco, United States",${profileUrl(3)}`,
      `Person Number5,p5@old.example,found,CTO,Company 5,company5.example,+1 555 0101,"San Francisco, United States",${profileUrl(5)}`,
      `"Smith, ""Jo""",jo@quote.example,unknown,"'=HYPERLINK(""x"")",,,,,`,
      '',
    ]);
    expect(errorOf(await rig.fn('lead-list-export', { token: dan.token, query: { lead_list_id: listId } }))).toEqual([404, 'not_found']);
    expect(errorOf(await rig.fn('lead-list-export', { token: ann.token }))).toEqual([400, 'missing_field']);
  });
});
