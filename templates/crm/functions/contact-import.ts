// POST {workspace_id, contacts: [{ full_name, email?, phone?, title?, linkedin_url?, location?, company?, company_domain? }]}:
// imports up to MAX contacts (a CSV the site parsed, another CRM's export), with their companies found or made by
// domain or name. Each person lands once: a contact of the same e-mail or LinkedIn URL, already in the workspace or
// earlier in the list, is completed rather than duplicated. Every row is checked before anything is written.
import { handler, json, body, uuid, text, HttpError } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';
import { saveContacts, type ContactInput } from '../lib/contacts.ts';
import { emailAddress } from '../lib/invites.ts';
import { normalizeUrl } from '../lib/people.ts';

const MAX = 1000;

/** One row of the import, or a 400 naming the row and the field. */
function contactOf(value: unknown, i: number): ContactInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'invalid_field', `contacts[${i}] must be an object.`);
  const row = value as Record<string, unknown>;
  try {
    const emailText = text(row, 'email', { optional: true, max: 254 });
    const email = emailText === undefined ? null : emailAddress(emailText);
    if (emailText !== undefined && !email) throw new HttpError(400, 'invalid_field', 'email must be an e-mail address.');
    const url = text(row, 'linkedin_url', { optional: true, max: 500 });
    const company = text(row, 'company', { optional: true, max: 200 });
    const domain = text(row, 'company_domain', { optional: true, max: 253 })?.toLowerCase().replace(/^https?:\/\//, '').replace(/\/.*$/, '');
    return {
      full_name: text(row, 'full_name', { max: 200 }),
      email,
      phone: text(row, 'phone', { optional: true, max: 50 }) ?? null,
      title: text(row, 'title', { optional: true, max: 200 }) ?? null,
      linkedin_url: url ? normalizeUrl(url) : null,
      location: text(row, 'location', { optional: true, max: 200 }) ?? null,
      company: company || domain ? { name: company ?? domain!, domain: domain ?? null } : null,
    };
  } catch (err) {
    if (err instanceof HttpError) throw new HttpError(400, err.code, `contacts[${i}]: ${err.message}`);
    throw err;
  }
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const list = input.contacts;
  if (!Array.isArray(list) || !list.length) throw new HttpError(400, 'missing_field', 'contacts must be a non-empty array.');
  if (list.length > MAX) throw new HttpError(400, 'invalid_field', `At most ${MAX} contacts per import: split the file.`);
  const member = await requireMember(ctx, workspaceId);
  const contacts = list.map(contactOf);
  const { saved, companiesCreated } = await saveContacts(ctx.data, workspaceId, member.user_id, contacts, { source: 'import', companies: true });
  const created = saved.filter((s) => s.created).length;
  return json({ imported: contacts.length, created, merged: contacts.length - created, companies_created: companiesCreated, contacts: saved }, 201);
});
