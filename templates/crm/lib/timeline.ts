// Timeline entries (activities) written by the CRM itself: what a function did to a record, so the people on the
// team see when and why a contact changed (kind 'system'), next to notes, e-mails and meetings.
import type { DataClient } from './ctx.ts';
import { rows } from './http.ts';

export interface ActivityInput {
  workspace_id: string;
  user_id?: string | null;
  kind: 'note' | 'email' | 'meeting' | 'call' | 'task' | 'stage_change' | 'system';
  contact_id?: string | null;
  company_id?: string | null;
  deal_id?: string | null;
  subject?: string | null;
  body?: string;
}

/** Writes timeline entries (one call for all); the rows written. */
export async function addActivities(db: DataClient, entries: ActivityInput[]): Promise<Array<{ id: string }>> {
  if (!entries.length) return [];
  return rows(await db.from('activities').insert<{ id: string }>(entries), 'activities');
}
