// Work e-mails through the people vendor's asynchronous lookup: queued from a contact's LinkedIn URL (billed then; the
// e-mail found is billed when it arrives), the lookup id kept on the contact with email_status 'pending', and
// collected later by the email-lookups cron, which fills the e-mail in and says so on the timeline.
import type { Ctx, DataClient } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';
import { creditsOf } from './people.ts';
import { addActivities, type ActivityInput } from './timeline.ts';

export interface LookupContact {
  id: string;
  workspace_id: string;
  email: string | null;
  email_status: 'unknown' | 'pending' | 'found' | 'not_found';
  email_lookup_id: string | null;
  linkedin_url: string | null;
  enrichment: Record<string, unknown> | null;
}

/** Queues the lookup (409 without a LinkedIn URL); a lookup already pending is kept, not paid for twice. */
export async function queueLookup(ctx: Ctx, db: DataClient, contact: LookupContact): Promise<{ lookup_id: string; credits: number; queued: boolean }> {
  if (contact.email_status === 'pending' && contact.email_lookup_id) return { lookup_id: contact.email_lookup_id, credits: 0, queued: false };
  if (!contact.linkedin_url) throw new HttpError(409, 'no_profile', 'The work-email lookup needs the contact\'s LinkedIn URL: add it or enrich the contact first.');
  const answer = await ctx.people.queueEmail({ socialProfileUrl: contact.linkedin_url });
  rows(await db.from('contacts').update({ email_status: 'pending', email_lookup_id: answer.lookupId, updated_at: new Date().toISOString() }, `id=${eq(contact.id)}`), 'contact');
  return { lookup_id: answer.lookupId as string, credits: creditsOf(answer), queued: true };
}

export interface Collected {
  checked: number;
  found: number;
  not_found: number;
  pending: number;
}

/**
 * One pass over pending lookups (as the app: every workspace's): each resolved one fills the contact's e-mail (when it
 * has none; a typed one stays, the work e-mail is kept in enrichment) and a failed or expired one marks it not found.
 */
export async function collectLookups(ctx: Ctx, limit: number): Promise<Collected> {
  const db = ctx.asApp.data;
  const pending = rows(
    await db.from('contacts').select<LookupContact>('id,workspace_id,email,email_status,email_lookup_id,linkedin_url,enrichment', {
      query: `email_status=eq.pending&email_lookup_id=not.is.null&order=updated_at.asc&limit=${limit}`,
    }),
    'contacts',
  );
  const outcome: Collected = { checked: pending.length, found: 0, not_found: 0, pending: 0 };
  const timeline: ActivityInput[] = [];
  for (const contact of pending) {
    let lookup: { status: string; email: string | null; credits_consumed?: number };
    try {
      lookup = await ctx.people.emailLookup(contact.email_lookup_id!);
    } catch (err) {
      // A lookup the platform no longer knows (404) will never resolve; anything else is retried on the next run.
      if ((err as { status?: number }).status !== 404) {
        console.error(`lookup ${contact.email_lookup_id}: ${(err as Error).message}`);
        outcome.pending++;
        continue;
      }
      lookup = { status: 'failed', email: null };
    }
    if (lookup.status === 'pending') {
      outcome.pending++;
      continue;
    }
    const found = lookup.status === 'resolved' && lookup.email ? lookup.email : null;
    const workEmail = { email: found, status: lookup.status, credits: lookup.credits_consumed ?? null, at: new Date().toISOString() };
    const patch = {
      email_status: found ? 'found' : 'not_found',
      ...(found && !contact.email ? { email: found } : {}),
      enrichment: { ...contact.enrichment, work_email: workEmail },
      updated_at: new Date().toISOString(),
    };
    // Only a row still pending on this lookup changes: a newer lookup queued meanwhile is left to its own result.
    rows(await db.from('contacts').update(patch, `id=${eq(contact.id)}&email_lookup_id=${eq(contact.email_lookup_id!)}`), 'contact');
    timeline.push({
      workspace_id: contact.workspace_id,
      kind: 'system',
      contact_id: contact.id,
      subject: found ? 'Work e-mail found' : 'No work e-mail found',
      body: found ? `${found}${contact.email && contact.email !== found ? ` (kept ${contact.email} as the contact's e-mail)` : ''}` : `The lookup ended ${lookup.status}.`,
    });
    if (found) outcome.found++;
    else outcome.not_found++;
  }
  await addActivities(db, timeline);
  return outcome;
}
