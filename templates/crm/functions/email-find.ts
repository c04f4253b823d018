// POST {contact_id}: queues the asynchronous work-email lookup for the contact (their LinkedIn URL is needed); the
// email-lookups cron fills the e-mail in when the vendor answers. 202: the result comes later.
import { handler, json, body, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';
import { queueLookup, type LookupContact } from '../lib/email-lookup.ts';

export default handler(async (request, ctx) => {
  const contactId = uuid(await body(request), 'contact_id');
  const { row } = await rowOf<LookupContact>(ctx, 'contacts', contactId);
  const queued = await queueLookup(ctx, ctx.data, row);
  return json({ contact_id: contactId, email_status: 'pending', ...queued }, 202);
});
