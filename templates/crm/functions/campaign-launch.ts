// POST {campaign_id}: asks a person to approve the campaign's first send. The first step goes to the substrate as a
// send_email_draft (a capability that always waits for approval), mirrored as a proposals row of the workspace for
// the approvals inbox; the campaign waits in pending_approval until approval-decide or substrate-events activates it
// (lib/campaigns.ts activateCampaign). The caller becomes the sender unless the campaign names one.
import { activateCampaign, requireStatus, stepsOf, type Campaign } from '../lib/campaigns.ts';
import { HttpError, body, eq, handler, inList, json, one, rows, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';

/** send_email_draft takes at most 50 addresses: the approver sees the first 50 and the total. */
const MAX_TO = 50;

export default handler(async (request, ctx) => {
  const { row: campaign, member } = await rowOf<Campaign>(ctx, 'campaigns', uuid(await body(request), 'campaign_id'));
  requireStatus(campaign, ['draft'], 'launch');
  if (!ctx.substrate) throw new HttpError(409, 'not_linked', "The app is not linked to its owner's substrate, which approves launches (substrate_app_link).");
  const [first] = await stepsOf(ctx, campaign.id);
  if (!first) throw new HttpError(409, 'no_steps', 'Add a step to the campaign first.');
  const recipients = rows(
    await ctx.asApp.data.from('campaign_recipients').select<{ contact_id: string }>('contact_id', { query: `campaign_id=${eq(campaign.id)}&status=eq.pending` }),
    'campaign_recipients',
  );
  if (!recipients.length) throw new HttpError(409, 'no_recipients', 'Add recipients to the campaign first.');
  const to = rows(
    await ctx.asApp.data.from('contacts').select<{ email: string }>('email', { query: `id=${inList(recipients.slice(0, MAX_TO).map((r) => r.contact_id))}&email=not.is.null&order=email` }),
    'contacts',
  ).map((c) => c.email);
  const sender = campaign.sender_user_id ?? member.user_id;
  const previous = rows(await ctx.asApp.data.from('proposals').select('id', { query: `campaign_id=${eq(campaign.id)}&kind=eq.campaign_launch` }), 'proposals').length;

  const draft = { to, subject: first.subject, body: first.body };
  // One proposal per launch attempt: a retry of the same attempt replays it, a launch after a rejection is new.
  const proposed = await ctx.substrate.propose('send_email_draft', draft, { idempotency_key: `campaign-launch:${campaign.id}:${previous}`, require_approval: true });
  const summary = `Launch campaign "${campaign.name}": first e-mail "${first.subject}" to ${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`;
  const proposal = one(
    await ctx.asApp.data.from('proposals').insert(
      {
        workspace_id: campaign.workspace_id,
        user_id: member.user_id,
        action_id: proposed.action_id,
        kind: 'campaign_launch',
        campaign_id: campaign.id,
        summary,
        payload: { ...draft, recipients: recipients.length, sender_user_id: sender },
        status: proposed.requires_approval ? 'pending' : 'applied',
      },
      { query: 'on_conflict=action_id', prefer: 'resolution=merge-duplicates,return=representation' },
    ),
    'proposal',
  );
  rows(await ctx.asApp.data.from('campaigns').update({ status: 'pending_approval', sender_user_id: sender }, `id=${eq(campaign.id)}`), 'campaigns');
  // The capability always waits for a person; should a policy ever run it at once, the launch needs no second step.
  if (!proposed.requires_approval) return json({ proposal, campaign: (await activateCampaign(ctx, campaign.id)).campaign });
  return json({ proposal, campaign: { ...campaign, status: 'pending_approval', sender_user_id: sender } }, 202);
});
