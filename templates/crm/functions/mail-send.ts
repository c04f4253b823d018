// POST {contact_id, subject, body, deal_id?}: an e-mail from the caller's own Gmail to the contact, logged on the
// contact's (and deal's) timeline as an outbound e-mail with Gmail's message and thread ids, so the sync that later
// sees it in the Sent folder logs it once and replies in the thread land beside it.
import { sendMail, logSent } from '../lib/mail.ts';
import { HttpError, body, handler, json, text, uuid } from '../lib/http.ts';
import { requireInWorkspace, rowOf } from '../lib/workspace.ts';

interface Contact {
  id: string;
  workspace_id: string;
  email: string | null;
  company_id: string | null;
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const contactId = uuid(input, 'contact_id');
  const subject = text(input, 'subject', { max: 998 });
  const message = text(input, 'body', { max: 100_000 });
  const dealId = uuid(input, 'deal_id', { optional: true });
  const { row: contact, member } = await rowOf<Contact>(ctx, 'contacts', contactId);
  if (dealId) await requireInWorkspace(ctx, 'deals', dealId, contact.workspace_id, 'deal_id');
  if (!contact.email) throw new HttpError(409, 'no_email', 'The contact has no e-mail address (find one with email-find).');
  const sent = await sendMail(ctx, member.user_id, { to: contact.email, subject, body: message });
  const activity = await logSent(ctx, { workspace_id: contact.workspace_id, user_id: member.user_id, contact, subject, body: message, deal_id: dealId ?? null }, sent);
  return json({ activity }, 201);
});
