// POST {contact_id}: the contact's profile from the people vendor (by their LinkedIn URL, else found by name among the
// people of their company), recorded on the contact and its timeline; the credits it cost are in the answer.
import { handler, json, body, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';
import { enrichContact, type ContactRow } from '../lib/enrich.ts';

export default handler(async (request, ctx) => {
  const contactId = uuid(await body(request), 'contact_id');
  const { row, member } = await rowOf<ContactRow>(ctx, 'contacts', contactId);
  const done = await enrichContact(ctx, ctx.data, row, { userId: member.user_id });
  return json({ status: done.status, contact: done.row, changed: done.changed, credits: done.credits });
});
