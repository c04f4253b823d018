// Work-email lookups (people_email_lookups) and their states: `pending` from the queue until the provider's callback
// (`resolved` with an e-mail and billed, `failed` without one) or the deadline (`expired`). Every transition is a
// conditional update of a pending row, so a callback, its redelivery and the expiry job can race: one wins.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { PeopleSlot } from '../config.ts';
import type { CreditLedger, Reservation } from '../credits/ledger.ts';
import { FREE, type Charge } from './pricing.ts';
import { recordUsage, releaseCredit } from './usage.ts';
import { enqueueSql } from '../core/jobs.ts';
import { peopleEmailExpire } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';

const expireKey = (lookupId: string): string => `${peopleEmailExpire.name}:${lookupId}`;

export type LookupRow = Selectable<ControlDatabase['people_email_lookups']>;
export type LookupStatus = LookupRow['status'];

export interface NewLookup {
  id: string;
  appId: string;
  accountId: string;
  slot: PeopleSlot;
  socialUrl: string;
  secret: string;
  /** Credit held for the resolution's charge until the lookup ends. */
  hold: Reservation | undefined;
  deadline: Date;
}

/** The per-lookup secret the provider's callback URL carries; only its hash is stored. */
export const newSecret = (): string => randomBytes(32).toString('base64url');
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function secretMatches(row: LookupRow, secret: string): boolean {
  return timingSafeEqual(Buffer.from(sha256(secret), 'hex'), Buffer.from(row.secret_sha256, 'hex'));
}

/** The row and its expiry job, in one statement: no pending lookup exists without the job that ends it. */
export async function insertLookup(db: Kysely<ControlDatabase>, l: NewLookup): Promise<void> {
  await sql`
    with inserted as (
      insert into people_email_lookups (id, app_id, account_id, slot, social_url, status, secret_sha256, hold_reservation_id, deadline)
      values (${l.id}, ${l.appId}, ${l.accountId}, ${l.slot}, ${l.socialUrl}, 'pending', ${sha256(l.secret)}, ${l.hold?.id ?? null}, ${l.deadline})
      returning id
    )
    ${enqueueSql(peopleEmailExpire, sql`json_build_object('lookup_id', id::text)`, { runAt: l.deadline, jobKey: expireKey(l.id) })} from inserted
  `.execute(db);
}

/**
 * Removes a lookup whose queueing failed, unless the provider's callback already settled it (it may call back before
 * its answer to the queue request fails): a resolved lookup was billed and stays pollable.
 */
export async function dropLookup(db: Kysely<ControlDatabase>, id: string): Promise<void> {
  await sql`
    with gone as (delete from people_email_lookups where id = ${id} and status = 'pending' returning id)
    select graphile_worker.remove_job(${expireKey(id)}::text) from gone
  `.execute(db);
}

export async function findLookup(db: Kysely<ControlDatabase>, id: string): Promise<LookupRow | undefined> {
  const { rows } = await sql<LookupRow>`select * from people_email_lookups where id = ${id}`.execute(db);
  return rows[0];
}

/**
 * The provider's outcome: `resolved` (billed `charge`, from the credit held at queue time) with an e-mail, `failed`
 * (free) without. Only a pending lookup moves; the status the lookup has afterwards is returned either way.
 */
export async function settleLookup(db: Kysely<ControlDatabase>, ledger: CreditLedger, id: string, email: string | null, charge: Charge, now: Date): Promise<LookupStatus | undefined> {
  return db.transaction().execute(async (tx) => {
    const billed = email ? charge : FREE;
    const { rows } = await sql<LookupRow>`
      update people_email_lookups set status = ${email ? 'resolved' : 'failed'}, email = ${email}, credits_consumed = credits_consumed + ${billed.credits},
        settled_at = ${now}
      where id = ${id} and status = 'pending' returning *
    `.execute(tx);
    const row = rows[0];
    if (!row) return (await findLookup(tx, id))?.status;
    const usage = { appId: row.app_id, accountId: row.account_id, slot: row.slot, charge: billed, costUsd: undefined, socialUrl: row.social_url, lookupId: id };
    await recordUsage(tx, ledger, { ...usage, action: email ? 'profile_email_resolved' : 'profile_email_resolved_error', responseStatus: 200 }, hold(row));
    return row.status;
  });
}

/** A pending lookup past its deadline becomes `expired` and gives its held credit back; false when it was not one. */
export async function expireLookup(db: Kysely<ControlDatabase>, ledger: CreditLedger, id: string, now: Date): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<LookupRow>`
      update people_email_lookups set status = 'expired', settled_at = ${now}
      where id = ${id} and status = 'pending' and deadline <= ${now} returning *
    `.execute(tx);
    const row = rows[0];
    if (row) await releaseCredit(tx, ledger, row.account_id, hold(row));
    return row !== undefined;
  });
}

/** Adds the queue's charge to the lookup's total, with its usage row and ledger charge in the same statement. */
export function addCredits(id: string, credits: number) {
  return sql`counted as (update people_email_lookups set credits_consumed = credits_consumed + ${credits} where id = ${id})`;
}

function hold(row: LookupRow): Reservation | undefined {
  return row.hold_reservation_id ? { id: row.hold_reservation_id, accountId: row.account_id } : undefined;
}
