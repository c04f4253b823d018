// POST {workspace_id, people: [{ full_name, linkedin_url?, email?, title?, company?, location? }], lead_list_id? |
// list_name?, save_companies?, query?}: saves search results (as lead-search-people returns them) as contacts of
// source 'lead_search', once each (matched by e-mail or LinkedIn URL), their employers as companies unless
// save_companies is false, and puts them on a lead list: an existing one, or a new one named list_name.
import { handler, json, body, uuid, text, rows, eq, HttpError } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';
import { saveContacts, type ContactInput } from '../lib/contacts.ts';
import { emailAddress } from '../lib/invites.ts';
import { normalizeUrl } from '../lib/people.ts';
import type { Ctx } from '../lib/ctx.ts';

const MAX = 100;

function personOf(value: unknown, i: number): ContactInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'invalid_field', `people[${i}] must be an object.`);
  const p = value as Record<string, unknown>;
  const field = (key: string, max: number) => text(p, key, { optional: true, max }) ?? null;
  const url = field('linkedin_url', 500);
  const emailText = field('email', 254);
  const email = emailText ? emailAddress(emailText) : null;
  if (emailText && !email) throw new HttpError(400, 'invalid_field', `people[${i}].email must be an e-mail address.`);
  const fullName = field('full_name', 200);
  if (!fullName) throw new HttpError(400, 'missing_field', `people[${i}].full_name is required.`);
  if (!url && !email) throw new HttpError(400, 'missing_field', `people[${i}] needs a linkedin_url or an email.`);
  const company = field('company', 200);
  return { full_name: fullName, email, linkedin_url: url ? normalizeUrl(url) : null, title: field('title', 200), location: field('location', 200), company: company ? { name: company } : null };
}

/** The list the people go on: the given one (checked to be the workspace's), a new one, or none. */
async function leadList(ctx: Ctx, input: Record<string, unknown>, workspaceId: string, userId: string): Promise<Record<string, unknown> | null> {
  const id = uuid(input, 'lead_list_id', { optional: true });
  const name = text(input, 'list_name', { optional: true, max: 200 });
  if (id && name) throw new HttpError(400, 'invalid_field', 'Give lead_list_id or list_name, not both.');
  if (id) {
    const [list] = rows(await ctx.data.from('lead_lists').select('*', { query: `id=${eq(id)}&workspace_id=${eq(workspaceId)}` }), 'lead list');
    if (!list) throw new HttpError(404, 'not_found', `lead list ${id} not found.`);
    return list;
  }
  if (!name) return null;
  const query = typeof input.query === 'object' && input.query !== null ? input.query : null;
  const [list] = rows(await ctx.data.from('lead_lists').insert({ workspace_id: workspaceId, user_id: userId, name, query }), 'lead list');
  return list ?? null;
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  if (!Array.isArray(input.people) || !input.people.length) throw new HttpError(400, 'missing_field', 'people must be a non-empty array.');
  if (input.people.length > MAX) throw new HttpError(400, 'invalid_field', `At most ${MAX} people per call.`);
  if (input.save_companies !== undefined && typeof input.save_companies !== 'boolean') throw new HttpError(400, 'invalid_field', 'save_companies must be a boolean.');
  const people = input.people.map(personOf);
  const member = await requireMember(ctx, workspaceId);
  const list = await leadList(ctx, input, workspaceId, member.user_id);

  const { saved, companiesCreated } = await saveContacts(ctx.data, workspaceId, member.user_id, people, { source: 'lead_search', companies: input.save_companies !== false });
  let added = 0;
  if (list) {
    const entries = [...new Set(saved.map((s) => s.id))].map((contact_id) => ({ lead_list_id: list.id, contact_id, workspace_id: workspaceId }));
    added = rows(
      await ctx.data.from('lead_list_entries').insert(entries, { query: 'on_conflict=lead_list_id,contact_id', prefer: 'resolution=ignore-duplicates,return=representation' }),
      'lead list entries',
    ).length;
  }
  const created = saved.filter((s) => s.created).length;
  return json({ lead_list: list, contacts: saved, created, existing: saved.length - created, companies_created: companiesCreated, added_to_list: added }, 201);
});
