// Billing e-mails: a row per message (one per cause), enqueued with the change that causes it and sent by the
// billing_notify job; without SVC_SMTP_URL (or an address to send to) the row is marked skipped and logged.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { MailSender } from './mail-port.ts';
import { enqueueSql } from '../core/jobs.ts';
import { billingNotify } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';

export interface Notification {
  accountId: string;
  kind: 'payment_failed' | 'suspended';
  /** What makes the message distinct (the failed invoice's id): a redelivered event queues nothing new. */
  dedupeKey: string;
  to: string | undefined;
  subject: string;
  body: string;
}

export async function queueNotification(tx: Kysely<ControlDatabase>, n: Notification): Promise<void> {
  await sql`
    with queued as (
      insert into billing_notifications (account_id, kind, dedupe_key, to_address, subject, body)
      values (${n.accountId}, ${n.kind}, ${n.dedupeKey}, ${n.to ?? null}, ${n.subject}, ${n.body})
      on conflict (account_id, kind, dedupe_key) do nothing
      returning id
    )
    ${enqueueSql(billingNotify, sql`json_build_object('id', id)`, { jobKey: sql`${billingNotify.name}::text || ':' || id` })}
    from queued
  `.execute(tx);
}

/** Sends one queued message; safe to run twice (a message already sent or skipped is left alone). */
export async function deliverNotification(db: Kysely<ControlDatabase>, mailer: MailSender | undefined, id: number, log: Logger): Promise<void> {
  const { rows } = await sql<{ to_address: string | null; subject: string; body: string; status: string }>`
    select to_address, subject, body, status from billing_notifications where id = ${id}
  `.execute(db);
  const n = rows[0];
  if (!n || n.status !== 'pending') return;
  if (!mailer || !n.to_address) {
    log.warn({ notification: id, smtp: Boolean(mailer), has_address: Boolean(n.to_address) }, 'billing e-mail not sent: no SMTP server or no address');
    await sql`update billing_notifications set status = 'skipped' where id = ${id}`.execute(db);
    return;
  }
  try {
    await mailer.send({ to: n.to_address, subject: n.subject, text: n.body });
  } catch (err) {
    await sql`update billing_notifications set error = ${String((err as Error).message).slice(0, 500)} where id = ${id}`.execute(db);
    // Thrown again so the job is retried with backoff.
    throw err;
  }
  await sql`update billing_notifications set status = 'sent', sent_at = now(), error = null where id = ${id}`.execute(db);
}
