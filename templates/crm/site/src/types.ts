// The CRM's rows as the site reads them (templates/crm/schema.json), only the columns it shows.
export type Role = 'owner' | 'admin' | 'member';

export interface Workspace {
  id: string;
  name: string;
  role: Role;
}

export interface Member {
  user_id: string;
  email: string | null;
  display_name: string | null;
  role: Role;
}

export interface Stage {
  id: string;
  name: string;
  position: number;
  probability: number;
  kind: 'open' | 'won' | 'lost';
}

export interface Company {
  id: string;
  name: string;
  domain: string | null;
  industry: string | null;
  size: string | null;
  location: string | null;
  enriched_at: string | null;
}

export interface Contact {
  id: string;
  full_name: string;
  email: string | null;
  email_status: 'unknown' | 'pending' | 'found' | 'not_found';
  title: string | null;
  linkedin_url: string | null;
  location: string | null;
  company_id: string | null;
  source: string;
  enriched_at: string | null;
}

export interface Deal {
  id: string;
  title: string;
  stage_id: string;
  amount: number | string;
  currency: string;
  company_id: string | null;
  contact_id: string | null;
  next_step: string | null;
  forecast: string;
  position: number;
}

export interface Activity {
  id: string;
  kind: string;
  subject: string | null;
  body: string;
  direction: 'inbound' | 'outbound' | null;
  contact_id: string | null;
  deal_id: string | null;
  company_id: string | null;
  occurred_at: string;
}

export interface Meeting {
  id: string;
  title: string;
  meeting_url: string | null;
  starts_at: string | null;
  ends_at: string | null;
  contact_id: string | null;
  deal_id: string | null;
  bot_id: string | null;
  bot_status: string | null;
  transcript_text: string | null;
  summary: string | null;
}

export interface Campaign {
  id: string;
  name: string;
  status: 'draft' | 'pending_approval' | 'active' | 'paused' | 'completed';
  created_at: string;
}

export interface CampaignStep {
  id: string;
  campaign_id: string;
  position: number;
  delay_days: number;
  subject: string;
  body: string;
}

export interface Recipient {
  id: string;
  contact_id: string;
  status: string;
  next_step: number;
  next_send_at: string | null;
  error: string | null;
}

export interface LeadList {
  id: string;
  name: string;
  credits_spent: number | string;
  created_at: string;
}

export interface SocialPost {
  id: string;
  network: 'linkedin' | 'twitter';
  topic: string | null;
  body: string;
  status: 'draft' | 'scheduled' | 'published' | 'failed';
  scheduled_at: string | null;
  published_at: string | null;
  error: string | null;
}

export interface Proposal {
  id: string;
  kind: 'stage_change' | 'next_step' | 'forecast' | 'campaign_launch';
  summary: string;
  status: 'pending' | 'approved' | 'rejected' | 'applied';
  deal_id: string | null;
  campaign_id: string | null;
  payload: Record<string, unknown>;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
}

/** A passage the agent's answer or a search cites (the CRM's search hit). */
export interface Citation {
  n?: number;
  kind?: string;
  snippet?: string;
  activity_id?: string;
  meeting_id?: string;
  contact_id?: string;
  deal_id?: string;
  score?: number;
}
