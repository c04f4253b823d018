// Every 10 minutes: the due step of each active campaign's recipients, sent from the sender's Gmail and logged on the
// contact's timeline. A recipient then waits the next step's delay_days, or is completed after the last step; a send
// that fails marks that recipient failed with the error (the others go on). A campaign with nobody left is completed.
import { personalize, stepsOf, type Campaign, type Step } from '../lib/campaigns.ts';
import type { Ctx } from '../lib/ctx.ts';
import { eq, handler, inList, json, rows } from '../lib/http.ts';
import { logSent, sendMail } from '../lib/mail.ts';
import { errorText } from '../lib/tools.ts';
import { currentMembers } from '../lib/workspace.ts';

/** Sends per run: Gmail's sending limits are per day, and a run must end well within the function's timeout. */
const BATCH = 100;
const DAY_MS = 86_400_000;

interface Recipient {
  id: string;
  workspace_id: string;
  campaign_id: string;
  contact_id: string;
  next_step: number;
  thread_id: string | null;
}

interface Contact {
  id: string;
  full_name: string;
  email: string | null;
  company_id: string | null;
  /** The company's name, for {{company}}. */
  company?: string | null;
}

type Outcome = 'sent' | 'completed' | 'failed';

/** Sends one recipient's due step and moves them on; only a still-active recipient is updated (a reply may have come). */
async function sendStep(ctx: Ctx, campaign: Campaign, senderIsMember: boolean, steps: Step[], r: Recipient, contact: Contact | undefined): Promise<Outcome> {
  const step = steps[r.next_step];
  const where = `id=${eq(r.id)}&status=eq.active`;
  const recipients = ctx.asApp.data.from('campaign_recipients');
  if (!step) {
    rows(await recipients.update({ status: 'completed', next_send_at: null }, where), 'campaign_recipients');
    return 'completed';
  }
  try {
    if (!contact?.email) throw new Error('the contact has no e-mail address');
    if (!campaign.sender_user_id) throw new Error('the campaign has no sender');
    if (!senderIsMember) throw new Error('the sender is no longer a member of the workspace');
    const mail = { to: contact.email, subject: personalize(step.subject, contact), body: personalize(step.body, contact) };
    const sent = await sendMail(ctx, campaign.sender_user_id, mail);
    await logSent(ctx, { workspace_id: r.workspace_id, user_id: campaign.sender_user_id, contact, subject: mail.subject, body: mail.body }, sent);
    const next = steps[r.next_step + 1];
    const now = Date.now();
    rows(
      await recipients.update(
        {
          next_step: r.next_step + 1,
          last_sent_at: new Date(now).toISOString(),
          thread_id: r.thread_id ?? sent.threadId,
          status: next ? 'active' : 'completed',
          next_send_at: next ? new Date(now + next.delay_days * DAY_MS).toISOString() : null,
        },
        where,
      ),
      'campaign_recipients',
    );
    return next ? 'sent' : 'completed';
  } catch (err) {
    rows(await recipients.update({ status: 'failed', error: errorText(err), next_send_at: null }, where), 'campaign_recipients');
    return 'failed';
  }
}

/** Active campaigns whose recipients have all finished (completed, replied, failed, stopped) are completed. */
async function completeFinished(ctx: Ctx, campaignIds: string[]): Promise<void> {
  for (const id of campaignIds) {
    const left = rows(await ctx.asApp.data.from('campaign_recipients').select('id', { query: `campaign_id=${eq(id)}&status=${inList(['pending', 'active'])}&limit=1` }), 'campaign_recipients');
    if (!left.length) rows(await ctx.asApp.data.from('campaigns').update({ status: 'completed' }, `id=${eq(id)}&status=eq.active`), 'campaigns');
  }
}

export default handler(async (_request, ctx) => {
  const now = new Date().toISOString();
  const campaigns = rows(await ctx.asApp.data.from('campaigns').select<Campaign>('*', { query: 'status=eq.active' }), 'campaigns');
  const counts: Record<Outcome, number> = { sent: 0, completed: 0, failed: 0 };
  if (campaigns.length) {
    const due = rows(
      await ctx.asApp.data.from('campaign_recipients').select<Recipient>('id,workspace_id,campaign_id,contact_id,next_step,thread_id', {
        query: `status=eq.active&next_send_at=lte.${encodeURIComponent(now)}&campaign_id=${inList(campaigns.map((c) => c.id))}&order=next_send_at&limit=${BATCH}`,
      }),
      'campaign_recipients',
    );
    const contactIds = [...new Set(due.map((r) => r.contact_id))];
    const contacts = contactIds.length ? rows(await ctx.asApp.data.from('contacts').select<Contact>('id,full_name,email,company_id', { query: `id=${inList(contactIds)}` }), 'contacts') : [];
    const companyIds = [...new Set(contacts.map((c) => c.company_id).filter((id): id is string => id !== null))];
    const companies = companyIds.length ? rows(await ctx.asApp.data.from('companies').select<{ id: string; name: string }>('id,name', { query: `id=${inList(companyIds)}` }), 'companies') : [];
    for (const c of contacts) c.company = companies.find((co) => co.id === c.company_id)?.name ?? null;
    const members = await currentMembers(ctx);
    const steps = new Map<string, Step[]>();
    for (const r of due) {
      const campaign = campaigns.find((c) => c.id === r.campaign_id)!;
      if (!steps.has(campaign.id)) steps.set(campaign.id, await stepsOf(ctx, campaign.id));
      const sender = members.has(campaign.workspace_id, campaign.sender_user_id);
      counts[await sendStep(ctx, campaign, sender, steps.get(campaign.id)!, r, contacts.find((c) => c.id === r.contact_id))]++;
    }
  }
  await completeFinished(ctx, campaigns.map((c) => c.id));
  return json(counts);
});
