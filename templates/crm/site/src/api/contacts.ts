// Contacts and companies: read and added through the data API, enriched by the CRM's functions.
import type { Company, Contact } from '../types.ts';
import { db, fn, rows } from './core.ts';

const CONTACT = 'id,full_name,email,email_status,title,linkedin_url,location,company_id,source,enriched_at';
const COMPANY = 'id,name,domain,industry,size,location,enriched_at';

export async function contacts(workspaceId: string): Promise<Contact[]> {
  return rows<Contact>(await (await db()).from('contacts').select(CONTACT).eq('workspace_id', workspaceId).order('full_name').limit(500));
}

export async function companies(workspaceId: string): Promise<Company[]> {
  return rows<Company>(await (await db()).from('companies').select(COMPANY).eq('workspace_id', workspaceId).order('name').limit(500));
}

export type NewContact = Pick<Contact, 'full_name'> & Partial<Pick<Contact, 'email' | 'title' | 'linkedin_url' | 'company_id'>>;

export async function addContact(workspaceId: string, contact: NewContact): Promise<Contact> {
  return rows<Contact>(await (await db()).from('contacts').insert({ workspace_id: workspaceId, ...contact }).select(CONTACT))[0]!;
}

export async function addCompany(workspaceId: string, company: { name: string; domain?: string | null }): Promise<Company> {
  return rows<Company>(await (await db()).from('companies').insert({ workspace_id: workspaceId, ...company }).select(COMPANY))[0]!;
}

export interface Enriched {
  status: string;
  changed?: string[];
  credits?: number;
}

export const enrichContact = (contactId: string) => fn<Enriched>('contact-enrich', { body: { contact_id: contactId } });
export const enrichCompany = (companyId: string) => fn<Enriched>('company-enrich', { body: { company_id: companyId } });
export const findEmail = (contactId: string) => fn<{ email_status: string }>('email-find', { body: { contact_id: contactId } });
