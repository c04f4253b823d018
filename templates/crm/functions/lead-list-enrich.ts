// POST {lead_list_id}: queues work-email lookups for the list's contacts who have no e-mail (and a LinkedIn URL to
// look up by), at most PER_CALL at a time; the email-lookups cron fills them in. The credits go on the list.
import { handler, json, body, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';
import { chargeList, listContacts } from '../lib/leads.ts';
import { queueLookup } from '../lib/email-lookup.ts';

/** Lookups queued per call (each is billed): a long list takes a few clicks, each showing what it cost. */
const PER_CALL = 50;

export default handler(async (request, ctx) => {
  const leadListId = uuid(await body(request), 'lead_list_id');
  await rowOf(ctx, 'lead_lists', leadListId, 'id');
  const contacts = await listContacts(ctx, leadListId);
  const skipped = { has_email: 0, no_profile: 0, pending: 0, over_limit: 0 };
  const queued: Array<{ contact_id: string; lookup_id: string }> = [];
  let credits = 0;
  for (const contact of contacts) {
    if (contact.email || contact.email_status === 'found') skipped.has_email++;
    else if (contact.email_status === 'pending') skipped.pending++;
    else if (!contact.linkedin_url) skipped.no_profile++;
    else if (queued.length >= PER_CALL) skipped.over_limit++;
    else {
      const lookup = await queueLookup(ctx, ctx.data, contact);
      queued.push({ contact_id: contact.id, lookup_id: lookup.lookup_id });
      credits += lookup.credits;
    }
  }
  await chargeList(ctx, leadListId, credits);
  return json({ lead_list_id: leadListId, contacts: contacts.length, queued: queued.length, lookups: queued, skipped, credits }, queued.length ? 202 : 200);
});
