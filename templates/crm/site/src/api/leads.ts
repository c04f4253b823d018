// Lead search by the people vendor (what each page cost is shown), saving results as contacts on lead lists.
import type { LeadList } from '../types.ts';
import { db, fn, fnText, rows } from './core.ts';

export interface PersonLead {
  full_name: string;
  linkedin_url: string | null;
  title: string | null;
  company: string | null;
  location: string | null;
  headline?: string | null;
  contact_id: string | null;
}

export interface CompanyLead {
  name?: string;
  domain?: string | null;
  industry?: string | null;
  location?: string | null;
  linkedin_url?: string | null;
  company_id?: string | null;
}

export interface Found<T> {
  results: T[];
  total: number;
  credits: number;
  next_token: string | null;
}

export const searchPeople = (workspaceId: string, query: string, nextToken?: string) =>
  fn<Found<PersonLead>>('lead-search-people', { body: { workspace_id: workspaceId, query, ...(nextToken ? { next_token: nextToken } : {}) } });

export const searchCompanies = (workspaceId: string, query: string) => fn<Found<CompanyLead>>('lead-search-companies', { body: { workspace_id: workspaceId, query } });

export const save = (workspaceId: string, people: PersonLead[], listName: string) =>
  fn<{ created: number; existing: number; lead_list?: { id: string } | null }>('lead-save', { body: { workspace_id: workspaceId, people, list_name: listName } });

export async function lists(workspaceId: string): Promise<LeadList[]> {
  return rows<LeadList>(await (await db()).from('lead_lists').select('id,name,credits_spent,created_at').eq('workspace_id', workspaceId).order('created_at', { ascending: false }));
}

export const enrichList = (leadListId: string) => fn<Record<string, unknown>>('lead-list-enrich', { body: { lead_list_id: leadListId } });

export const exportList = (leadListId: string) => fnText('lead-list-export', { method: 'GET', query: { lead_list_id: leadListId } });
