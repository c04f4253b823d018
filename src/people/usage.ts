// Credits for people calls: the balance gate and reservation before the provider is called, and the usage row
// (people_usage_logs) written with its credit charge in one statement after.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { PeopleSlot } from '../config.ts';
import type { CreditLedger, Reservation } from '../credits/ledger.ts';
import { AppError } from '../core/errors.ts';
import { peopleErrors } from './errors.ts';
import { toUsd, type Charge } from './pricing.ts';
import type { ControlDatabase } from '../db/types.ts';

export type PeopleAction = 'search_person' | 'search_company' | 'profile' | 'profile_email_queue' | 'profile_email_resolved';
export type LoggedAction = PeopleAction | `${PeopleAction}_error` | 'profile_cache_hit';

export interface PeopleUsage {
  appId: string;
  accountId: string;
  action: LoggedAction;
  slot: PeopleSlot;
  charge: Charge;
  /** What the provider charged us (USD) when it said; otherwise the charge stands for it. */
  costUsd: number | undefined;
  responseStatus: number | null;
  socialUrl: string | null;
  lookupId: string | null;
}

/** The ledger source of people charges; credit_ledger.usage_ref is 'people_usage:<row id>'. */
const SOURCE = 'people';

export interface CreditHold {
  accountId: string;
  slot: PeopleSlot;
  nanos: number;
  /** The least credit that must be available (beyond what calls in flight hold) for the hold to be granted. */
  floorNanos: number;
  ttlSeconds: number;
}

/**
 * Holds credit for a call about to be made. Refused with 402 (nothing is sent to the provider) when what is
 * available is below the floor: the caller makes it the gate, and at least the call's maximum price, so that calls
 * near the gate, however many at once, never spend more than the balance.
 */
export async function reserveCredit(ledger: CreditLedger, hold: CreditHold, gateUsd: number): Promise<Reservation | undefined> {
  try {
    return await ledger.reserve(hold.accountId, hold.nanos, hold.ttlSeconds, { minAvailableNanos: hold.floorNanos });
  } catch (err) {
    if (err instanceof AppError && err.status === 402) throw peopleErrors.insufficientCredits(hold.slot, gateUsd);
    throw err;
  }
}

/** The row, its charge and the end of its reservation, all or nothing; `also` runs in the same statement. */
export async function recordUsage(db: Kysely<ControlDatabase>, ledger: CreditLedger, usage: PeopleUsage, reservation: Reservation | undefined, also?: RawBuilder<unknown>): Promise<void> {
  const settlement = ledger.settlement(usage.accountId, reservation, usage.charge.nanos, SOURCE, sql`'people_usage:' || (select id from usage)`);
  const charged = toUsd(usage.charge.nanos);
  await sql`
    with usage as (
      insert into people_usage_logs (app_id, account_id, action, slot, credits_consumed, usd_cost, usd_charged, response_status, social_url, lookup_id)
      values (${usage.appId}, ${usage.accountId}, ${usage.action}, ${usage.slot}, ${usage.charge.credits}, ${usage.costUsd ?? charged}, ${charged},
              ${usage.responseStatus}, ${usage.socialUrl}, ${usage.lookupId})
      returning id::text
    ),
    ${also ?? sql`also as (select 1)`},
    ${settlement}
    select 1
  `.execute(db);
}

/** Gives a reservation back unused (the call never reached the provider). */
export async function releaseCredit(db: Kysely<ControlDatabase>, ledger: CreditLedger, accountId: string, reservation: Reservation | undefined): Promise<void> {
  if (reservation) await ledger.settle(db, accountId, reservation, 0, SOURCE, 'people_usage:none');
}
