// The timeline: activities through the data API, notes and search through functions (they index and query RAG).
import type { Activity, Citation } from '../types.ts';
import { db, fn, rows } from './core.ts';

export interface TimelineFilter {
  contact_id?: string;
  deal_id?: string;
}

export async function activities(workspaceId: string, filter: TimelineFilter = {}): Promise<Activity[]> {
  let q = (await db()).from('activities').select('id,kind,subject,body,direction,contact_id,deal_id,company_id,occurred_at').eq('workspace_id', workspaceId);
  if (filter.contact_id) q = q.eq('contact_id', filter.contact_id);
  if (filter.deal_id) q = q.eq('deal_id', filter.deal_id);
  return rows<Activity>(await q.order('occurred_at', { ascending: false }).limit(100));
}

export const addNote = (workspaceId: string, body: string, about: TimelineFilter) => fn<{ activity: Activity; indexed: boolean }>('note-add', { body: { workspace_id: workspaceId, body, ...about } });

export async function search(workspaceId: string, q: string): Promise<Citation[]> {
  return (await fn<{ results: Citation[] }>('search', { method: 'GET', query: { workspace_id: workspaceId, q } })).results ?? [];
}
