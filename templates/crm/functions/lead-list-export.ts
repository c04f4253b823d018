// GET ?lead_list_id: the lead list as a CSV file (text/csv, an attachment named after the list) for a spreadsheet or
// another tool: one line per contact, in the order they were added.
import { handler, params, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';
import { listContacts } from '../lib/leads.ts';
import { toCsv } from '../lib/csv.ts';

const HEADER = ['full_name', 'email', 'email_status', 'title', 'company', 'company_domain', 'phone', 'location', 'linkedin_url'] as const;

export default handler(async (request, ctx) => {
  const leadListId = uuid(params(request), 'lead_list_id');
  const { row: list } = await rowOf<{ workspace_id: string; name: string }>(ctx, 'lead_lists', leadListId, 'name');
  const contacts = await listContacts(ctx, leadListId);
  const csv = toCsv(
    HEADER,
    contacts.map((c) => [c.full_name, c.email, c.email_status, c.title, c.companies?.name, c.companies?.domain, c.phone, c.location, c.linkedin_url]),
  );
  // The list's name as the file name, reduced to characters every system takes.
  const filename = `${list.name.replace(/[^A-Za-z0-9 ._-]+/g, '').trim().replace(/\s+/g, '-') || 'lead-list'}.csv`;
  return new Response(csv, { headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` } });
});
