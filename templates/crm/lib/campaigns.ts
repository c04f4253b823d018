// Campaigns: sequences of e-mail steps sent from the sender's mailbox. A campaign starts only after a person approves
// its first send (campaign-launch proposes it; approval-decide or substrate-events call activateCampaign), and each
// recipient moves through the steps on their own clock until the end, a reply (lib/mail.ts) or a failure.
import type { Ctx } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';

export interface Campaign {
  id: string;
  workspace_id: string;
  user_id: string | null;
  name: string;
  status: 'draft' | 'pending_approval' | 'active' | 'paused' | 'completed';
  sender_user_id: string | null;
  approved_at: string | null;
}

export interface Step {
  id: string;
  position: number;
  delay_days: number;
  subject: string;
  body: string;
}

/** The campaign's steps in sending order. */
export async function stepsOf(ctx: Ctx, campaignId: string): Promise<Step[]> {
  return rows(await ctx.asApp.data.from('campaign_steps').select<Step>('id,position,delay_days,subject,body', { query: `campaign_id=${eq(campaignId)}&order=position` }), 'campaign_steps');
}

/** 409 unless the campaign is in one of these states. */
export function requireStatus(campaign: Campaign, allowed: readonly Campaign['status'][], doing: string): void {
  if (!allowed.includes(campaign.status)) throw new HttpError(409, 'wrong_status', `Cannot ${doing} a ${campaign.status.replace('_', ' ')} campaign (it must be ${allowed.join(' or ')}).`);
}

/** A step's text for one contact: {{first_name}}, {{full_name}} and {{company}} filled in. */
export function personalize(text: string, contact: { full_name: string; company?: string | null }): string {
  const fields: Record<string, string> = { first_name: contact.full_name.split(/\s+/)[0] ?? '', full_name: contact.full_name, company: contact.company ?? '' };
  return text.replace(/\{\{\s*(first_name|full_name|company)\s*\}\}/g, (_, key: string) => fields[key] ?? '');
}

/**
 * Starts (or resumes) the campaign: status active, approved_at kept from the first approval, and every recipient not
 * yet scheduled due now for their first step. Called when a person approves the launch and when a paused campaign
 * resumes; recipients already under way keep their place.
 */
export async function activateCampaign(ctx: Ctx, campaignId: string): Promise<{ campaign: Campaign; scheduled: number }> {
  const now = new Date().toISOString();
  const [current] = rows(await ctx.asApp.data.from('campaigns').select<Campaign>('*', { query: `id=${eq(campaignId)}` }), 'campaigns');
  if (!current) throw new HttpError(404, 'not_found', `campaign ${campaignId} not found.`);
  // A launch approved late (the campaign meanwhile back in draft, or completed) starts nothing; active again is a no-op.
  requireStatus(current, ['pending_approval', 'paused', 'active'], 'activate');
  const [campaign] = rows(
    await ctx.asApp.data.from('campaigns').update<Campaign>({ status: 'active', approved_at: current.approved_at ?? now }, `id=${eq(campaignId)}`, { prefer: 'return=representation' }),
    'campaigns',
  );
  const scheduled = rows(
    await ctx.asApp.data
      .from('campaign_recipients')
      .update({ status: 'active', next_step: 0, next_send_at: now, error: null }, `campaign_id=${eq(campaignId)}&status=eq.pending`, { prefer: 'return=representation' }),
    'campaign_recipients',
  );
  return { campaign: campaign ?? current, scheduled: scheduled.length };
}
