// Campaigns: the campaign, its steps and recipients through the data API; recipients added, launch (a proposal a
// person approves) and pause through functions.
import type { Campaign, CampaignStep, Recipient } from '../types.ts';
import { db, fn, rows } from './core.ts';

export async function campaigns(workspaceId: string): Promise<Campaign[]> {
  return rows<Campaign>(await (await db()).from('campaigns').select('id,name,status,created_at').eq('workspace_id', workspaceId).order('created_at', { ascending: false }));
}

export async function steps(campaignId: string): Promise<CampaignStep[]> {
  return rows<CampaignStep>(await (await db()).from('campaign_steps').select('id,campaign_id,position,delay_days,subject,body').eq('campaign_id', campaignId).order('position'));
}

export async function recipients(campaignId: string): Promise<Recipient[]> {
  return rows<Recipient>(await (await db()).from('campaign_recipients').select('id,contact_id,status,next_step,next_send_at,error').eq('campaign_id', campaignId));
}

export async function createCampaign(workspaceId: string, name: string): Promise<Campaign> {
  return rows<Campaign>(await (await db()).from('campaigns').insert({ workspace_id: workspaceId, name }).select('id,name,status,created_at'))[0]!;
}

export async function addStep(workspaceId: string, campaignId: string, step: Pick<CampaignStep, 'position' | 'delay_days' | 'subject' | 'body'>): Promise<void> {
  rows(await (await db()).from('campaign_steps').insert({ workspace_id: workspaceId, campaign_id: campaignId, ...step }));
}

export const addRecipients = (campaignId: string, to: { contact_ids: string[] } | { lead_list_id: string }) =>
  fn<{ added: number; skipped_no_email?: number }>('campaign-add-recipients', { body: { campaign_id: campaignId, ...to } });

export const launch = (campaignId: string) => fn<{ campaign: Campaign }>('campaign-launch', { body: { campaign_id: campaignId } });

export const pause = (campaignId: string, paused: boolean) => fn('campaign-pause', { body: { campaign_id: campaignId, paused } });
