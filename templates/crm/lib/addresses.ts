// E-mail addresses as mail and calendars carry them ("Ann Lee <ann@acme.com>, bob@x.io"), and the workspace's
// contacts they belong to: how synced mail and events find their place on the timeline.
import type { Ctx } from './ctx.ts';
import { eq, inList, rows } from './http.ts';

const ADDRESS = /[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

/** The addresses in a header or list, lower-cased, in order, without repeats. */
export function addressesIn(value: unknown): string[] {
  const text = Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v : (v as { email?: string })?.email ?? '')).join(',') : String(value ?? '');
  return [...new Set((text.match(ADDRESS) ?? []).map((a) => a.toLowerCase()))];
}

export interface ContactRef {
  id: string;
  email: string;
  company_id: string | null;
  full_name: string;
}

/** The workspace's contacts with these addresses, by lower-cased address (contacts keep the case they were typed in). */
export async function contactsByEmail(ctx: Ctx, workspaceId: string, emails: readonly string[]): Promise<Map<string, ContactRef>> {
  const found = new Map<string, ContactRef>();
  if (!emails.length) return found;
  const variants = [...new Set(emails.flatMap((e) => [e, e.toLowerCase()]))];
  const query = `workspace_id=${eq(workspaceId)}&email=${inList(variants)}`;
  for (const c of rows(await ctx.asApp.data.from('contacts').select<ContactRef>('id,email,company_id,full_name', { query }), 'contacts')) {
    if (!found.has(c.email.toLowerCase())) found.set(c.email.toLowerCase(), c);
  }
  return found;
}
