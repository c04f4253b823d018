// POST {campaign_id, contact_ids? | lead_list_id?}: adds the workspace's contacts (listed, or a lead list's) to a draft
// or paused campaign. Contacts already in it are left as they are; contacts without an e-mail address are skipped
// and named, since no step could reach them.
import type { Ctx } from '../lib/ctx.ts';
import { requireStatus, type Campaign } from '../lib/campaigns.ts';
import { HttpError, body, eq, handler, inList, json, rows, uuid } from '../lib/http.ts';
import { requireInWorkspace, rowOf } from '../lib/workspace.ts';

/** Recipients per request: one insert, and a list the site can show. */
const MAX_CONTACTS = 1000;

interface Contact {
  id: string;
  email: string | null;
}

/** The contact ids the request names: its contact_ids, or the entries of its lead list. */
async function contactIdsOf(ctx: Ctx, input: Record<string, unknown>, workspaceId: string): Promise<string[]> {
  const listId = uuid(input, 'lead_list_id', { optional: true });
  if (listId && input.contact_ids !== undefined) throw new HttpError(400, 'invalid_body', 'Send contact_ids or lead_list_id, not both.');
  if (listId) {
    await requireInWorkspace(ctx, 'lead_lists', listId, workspaceId, 'lead_list_id');
    const entries = rows(await ctx.asApp.data.from('lead_list_entries').select<{ contact_id: string }>('contact_id', { query: `lead_list_id=${eq(listId)}` }), 'lead list');
    return entries.map((e) => e.contact_id);
  }
  const ids = input.contact_ids;
  if (!Array.isArray(ids) || !ids.length || ids.length > MAX_CONTACTS) throw new HttpError(400, 'invalid_field', `contact_ids must be a list of 1 to ${MAX_CONTACTS} contact ids (or send lead_list_id).`);
  // Each checked as a uuid (the message names contact_ids), lower-cased as the database returns them.
  return [...new Set(ids.map((id) => uuid({ contact_ids: id }, 'contact_ids')))];
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const { row: campaign } = await rowOf<Campaign>(ctx, 'campaigns', uuid(input, 'campaign_id'));
  requireStatus(campaign, ['draft', 'paused'], 'add recipients to');
  const ids = await contactIdsOf(ctx, input, campaign.workspace_id);
  const contacts = ids.length
    ? rows(await ctx.asApp.data.from('contacts').select<Contact>('id,email', { query: `workspace_id=${eq(campaign.workspace_id)}&id=${inList(ids)}` }), 'contacts')
    : [];
  const unknown = ids.filter((id) => !contacts.some((c) => c.id === id));
  if (unknown.length) throw new HttpError(400, 'unknown_contacts', `Not contacts of this workspace: ${unknown.join(', ')}.`);
  const reachable = contacts.filter((c) => c.email);
  const added = reachable.length
    ? rows(
        await ctx.asApp.data.from('campaign_recipients').insert(
          reachable.map((c) => ({ workspace_id: campaign.workspace_id, campaign_id: campaign.id, contact_id: c.id })),
          { query: 'on_conflict=campaign_id,contact_id', prefer: 'resolution=ignore-duplicates,return=representation' },
        ),
        'campaign_recipients',
      )
    : [];
  const skipped = contacts.filter((c) => !c.email).map((c) => c.id);
  return json({ added: added.length, skipped_no_email: skipped }, 201);
});
