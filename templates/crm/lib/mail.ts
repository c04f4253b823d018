// Members' mail through Gmail (Composio's GMAIL_* tools): new messages logged as e-mail activities on their contacts'
// timelines, and mail sent from a member's own mailbox. The message id is the activity's external_id, unique per
// workspace, so a sync that sees a message again (or two members on one thread) logs it once.
import { addressesIn, contactsByEmail, type ContactRef } from './addresses.ts';
import type { Ctx } from './ctx.ts';
import { eq, inList, rows } from './http.ts';
import type { SyncRun, SyncState } from './sync.ts';
import { runTool } from './tools.ts';

/** How much of a message body the timeline keeps. */
const BODY_CHARS = 20_000;
/** Messages per page, and pages per run. */
const PAGE = 50;
const MAX_PAGES = 10;

export interface MailMessage {
  id: string;
  threadId: string | null;
  at: string;
  from: string | null;
  to: string[];
  subject: string;
  text: string;
  sent: boolean;
}

/** Composio's GMAIL_FETCH_EMAILS message, in the CRM's terms. */
function messageOf(m: Record<string, any>): MailMessage | null {
  const id = m.messageId ?? m.id;
  if (typeof id !== 'string' || !id) return null;
  const at = new Date(m.messageTimestamp ?? m.internalDate ?? Date.now());
  return {
    id,
    threadId: typeof m.threadId === 'string' ? m.threadId : null,
    at: Number.isNaN(at.getTime()) ? new Date().toISOString() : at.toISOString(),
    from: addressesIn(m.sender ?? m.from)[0] ?? null,
    to: addressesIn([m.to, m.cc].filter(Boolean).join(',')),
    subject: String(m.subject ?? m.preview?.subject ?? ''),
    text: String(m.messageText ?? m.preview?.body ?? '').slice(0, BODY_CHARS),
    sent: Array.isArray(m.labelIds) && m.labelIds.includes('SENT'),
  };
}

/** The member's mailbox address, to tell what they sent from what they received. */
async function mailboxOf(ctx: Ctx, state: SyncState): Promise<string | null> {
  const query = `workspace_id=${eq(state.workspace_id)}&user_id=${eq(state.user_id)}`;
  const [member] = rows(await ctx.asApp.data.from('workspace_members').select<{ email: string | null }>('email', { query }), 'member');
  return member?.email?.toLowerCase() ?? null;
}

/**
 * One run of a member's mail sync: messages since the cursor (Gmail's after:<epoch seconds>). Gmail lists newest
 * first, so every page is read before the cursor moves (up to MAX_PAGES: a mailbox that far behind keeps the newest).
 */
export async function syncMail(ctx: Ctx, state: SyncState): Promise<SyncRun> {
  const query = state.cursor ? `after:${state.cursor}` : 'newer_than:30d';
  const messages: MailMessage[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const data = await runTool(ctx, state.user_id, 'GMAIL_FETCH_EMAILS', { query, max_results: PAGE, include_payload: false, ...(pageToken ? { page_token: pageToken } : {}) });
    messages.push(...((data.messages ?? []) as Record<string, any>[]).map(messageOf).filter((m): m is MailMessage => m !== null));
    pageToken = typeof data.nextPageToken === 'string' && data.nextPageToken ? data.nextPageToken : undefined;
    if (!pageToken) break;
  }
  if (pageToken) console.warn(`mail sync of ${state.user_id}: more than ${MAX_PAGES * PAGE} new messages, the oldest are not logged`);
  messages.sort((a, b) => a.at.localeCompare(b.at));
  const items = await logMessages(ctx, state, messages);
  const newest = messages.at(-1);
  return { items, cursor: newest ? String(Math.floor(new Date(newest.at).getTime() / 1000)) : state.cursor };
}

interface EmailActivity {
  id: string;
  contact_id: string;
  thread_id: string | null;
  direction: 'inbound' | 'outbound';
  occurred_at: string;
}

/** Messages with a contact logged (others are the member's own business); replies stop campaign sequences. */
async function logMessages(ctx: Ctx, state: SyncState, messages: MailMessage[]): Promise<number> {
  const mailbox = await mailboxOf(ctx, state);
  const outbound = (m: MailMessage) => m.sent || (mailbox !== null && m.from === mailbox);
  const contacts = await contactsByEmail(ctx, state.workspace_id, [...new Set(messages.flatMap((m) => (outbound(m) ? m.to : m.from ? [m.from] : [])))]);
  const activities = messages.flatMap((m) => {
    const contact = (outbound(m) ? m.to : [m.from ?? '']).map((a) => contacts.get(a)).find((c): c is ContactRef => c !== undefined);
    if (!contact) return [];
    return [
      {
        workspace_id: state.workspace_id,
        user_id: state.user_id,
        kind: 'email',
        contact_id: contact.id,
        company_id: contact.company_id,
        subject: m.subject,
        body: m.text,
        direction: outbound(m) ? 'outbound' : 'inbound',
        external_id: m.id,
        thread_id: m.threadId,
        occurred_at: m.at,
      },
    ];
  });
  if (!activities.length) return 0;
  const inserted = rows(
    await ctx.asApp.data
      .from('activities')
      .insert<EmailActivity>(activities, { query: 'on_conflict=workspace_id,external_id', prefer: 'resolution=ignore-duplicates,return=representation' }),
    'activities',
  );
  await stopReplied(ctx, state.workspace_id, inserted.filter((a) => a.direction === 'inbound'));
  return inserted.length;
}

interface Recipient {
  id: string;
  contact_id: string;
  thread_id: string | null;
  last_sent_at: string | null;
}

/**
 * A reply ends the contact's sequence: an inbound message in a recipient's thread, or from the recipient after the
 * campaign last wrote to them (a reply that started a new thread).
 */
async function stopReplied(ctx: Ctx, workspaceId: string, inbound: EmailActivity[]): Promise<void> {
  if (!inbound.length) return;
  const threads = [...new Set(inbound.map((a) => a.thread_id).filter((t): t is string => t !== null))];
  const contactIds = [...new Set(inbound.map((a) => a.contact_id))];
  const match = [`contact_id.${inList(contactIds)}`, ...(threads.length ? [`thread_id.${inList(threads)}`] : [])];
  const query = `workspace_id=${eq(workspaceId)}&status=${inList(['active', 'pending'])}&or=(${match.join(',')})`;
  const candidates = rows(await ctx.asApp.data.from('campaign_recipients').select<Recipient>('id,contact_id,thread_id,last_sent_at', { query }), 'campaign_recipients');
  const replied = candidates.filter((r) =>
    inbound.some((a) => (r.thread_id !== null && a.thread_id === r.thread_id) || (a.contact_id === r.contact_id && r.last_sent_at !== null && a.occurred_at > r.last_sent_at)),
  );
  if (!replied.length) return;
  rows(
    await ctx.asApp.data.from('campaign_recipients').update({ status: 'replied', next_send_at: null }, `id=${inList(replied.map((r) => r.id))}`),
    'campaign_recipients',
  );
}

/** Sends from the member's Gmail; Gmail's ids of the sent message, when the tool returns them. */
export async function sendMail(ctx: Ctx, userId: string, mail: { to: string; subject: string; body: string }): Promise<{ messageId: string | null; threadId: string | null }> {
  const data = await runTool(ctx, userId, 'GMAIL_SEND_EMAIL', { recipient_email: mail.to, subject: mail.subject, body: mail.body });
  return { messageId: typeof data.id === 'string' ? data.id : null, threadId: typeof data.threadId === 'string' ? data.threadId : null };
}

/** An e-mail the CRM sent, on the contact's timeline; the contact's last_contacted_at moves with it. */
export async function logSent(
  ctx: Ctx,
  entry: { workspace_id: string; user_id: string; contact: { id: string; company_id: string | null }; subject: string; body: string; deal_id?: string | null },
  sent: { messageId: string | null; threadId: string | null },
): Promise<Record<string, unknown>> {
  const now = new Date().toISOString();
  const activity = {
    workspace_id: entry.workspace_id,
    user_id: entry.user_id,
    kind: 'email',
    contact_id: entry.contact.id,
    company_id: entry.contact.company_id,
    deal_id: entry.deal_id ?? null,
    subject: entry.subject,
    body: entry.body.slice(0, BODY_CHARS),
    direction: 'outbound',
    external_id: sent.messageId,
    thread_id: sent.threadId,
    occurred_at: now,
  };
  const [row] = rows(await ctx.asApp.data.from('activities').insert<Record<string, unknown>>(activity, { prefer: 'return=representation' }), 'activities');
  rows(await ctx.asApp.data.from('contacts').update({ last_contacted_at: now }, `id=${eq(entry.contact.id)}`), 'contacts');
  return row ?? activity;
}
