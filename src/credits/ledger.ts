// The account credit ledger: grants, charges and the balance that the AI gateway (and later people search and
// meetings) spend. Callers reserve before a vendor call and settle after, in the transaction of their usage row.
import type pg from 'pg';
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { BalanceQueue } from './balance-queue.ts';
import { AppError } from '../core/errors.ts';
import { billsAiOverage, isPlanId, PLANS, type PlanId } from '../billing/plans.ts';
import { usd } from '../core/money.ts';
import type { ControlDatabase } from '../db/types.ts';

type Db = Kysely<ControlDatabase>;

/**
 * An account's two queues (CreditLedger.runQueued): holds and advances, which the calls wait for before their vendor
 * call, apart from corrections, which run after the answers went out; each has at most one transaction in flight.
 */
export type QueueLane = 'before' | 'after';

/** How a call charged in advance is billed (CreditLedger.advanceTerms). */
export interface AdvanceTerms {
  /** Charges are capped at what the account has; false on plans with unlimited credits. */
  capped: boolean;
  /** The least balance no other call holds that the call needs, or null: never refused. */
  floor: number | null;
}

/** What a call in flight holds; undefined for accounts whose plan has unlimited credits. */
export interface Reservation {
  id: string;
  accountId: string;
}

/** The plans whose spend beyond the balance is overage (read by the settlement from the account's current plan). */
const OVERAGE_PLANS = (Object.keys(PLANS) as PlanId[]).filter(billsAiOverage);

/** How long a plan lookup (and the grant check that comes with it) is trusted in this process. */
const PLAN_TTL_MS = 30_000;

/** Deletes expired reservations and gives their amounts back (the process that held them is gone). */
export const RELEASE_EXPIRED_RESERVATIONS_SQL = `
  with gone as (delete from credit_reservations where expires_at < now() returning account_id, amount_nanos),
  per_account as (select account_id, sum(amount_nanos) as amount from gone group by account_id)
  update credit_balances b set reserved_nanos = greatest(0, b.reserved_nanos - p.amount)
  from per_account p where b.account_id = p.account_id`;


export class CreditLedger {
  readonly #db: Db;
  /** The statements that write an account's balance row, grouped per account on the same control database. */
  readonly #queue: BalanceQueue;
  readonly #plans = new Map<string, { plan: PlanId; until: number }>();

  constructor(db: Db, pool: pg.Pool) {
    this.#db = db;
    this.#queue = new BalanceQueue(pool);
  }

  /**
   * The account's plan, making sure its balance row exists and its plan grant was made (free: $0.10 once; pro:
   * $10 per billing period, keyed by the UTC month until billing defines periods). Idempotent and concurrency-safe:
   * a grant is a ledger row unique per (account, grant_key).
   */
  async plan(accountId: string): Promise<PlanId> {
    const cached = this.#plans.get(accountId);
    if (cached && cached.until > Date.now()) return cached.plan;
    const plan = await this.#db.transaction().execute(async (tx) => {
      const row = (await sql<{ plan: string }>`select plan from accounts where id = ${accountId}`.execute(tx)).rows[0];
      const plan: PlanId = row && isPlanId(row.plan) ? row.plan : 'free';
      await sql`insert into credit_balances (account_id) values (${accountId}) on conflict (account_id) do nothing`.execute(tx);
      const allowance = PLANS[plan].aiCredits;
      if (allowance) {
        const key = allowance.per === 'lifetime' ? `${plan}:lifetime` : `${plan}:${new Date().toISOString().slice(0, 7)}`;
        await sql`
          with granted as (
            insert into credit_ledger (account_id, kind, amount_nanos, source, grant_key)
            values (${accountId}, 'grant', ${allowance.nanos}, ${`plan:${plan}`}, ${key})
            on conflict (account_id, grant_key) do nothing
            returning amount_nanos
          )
          update credit_balances set balance_nanos = balance_nanos + granted.amount_nanos
          from granted where credit_balances.account_id = ${accountId}
        `.execute(tx);
      }
      return plan;
    });
    this.#plans.set(accountId, { plan, until: Date.now() + PLAN_TTL_MS });
    return plan;
  }

  /** Drops the cached plan after the account changed plans, so the next call sees (and grants) the new one. */
  forget(accountId: string): void {
    this.#plans.delete(accountId);
  }

  /**
   * Holds `nanos` of the account's credit (the call's worst case) for a call about to be made. Refused (402) unless
   * the whole hold fits in what is left beyond what calls in flight hold, so concurrent calls can never together
   * hold more than the balance. `minAvailableNanos` raises that floor: people search refuses below its balance gate.
   * `upTo`: hold what is left when that is less (and at least 1 nano, or minAvailableNanos), for work whose length
   * nobody knows in advance (a meeting bot): its charge is then capped by the settlement as any other.
   * A plan with an overage price (pro) is never refused: the hold takes what is left of the balance (maybe nothing),
   * so concurrent calls still never together spend the balance twice, and the settlement bills the rest as overage.
   */
  async reserve(accountId: string, nanos: number, ttlSeconds: number, opts: { minAvailableNanos?: number; upTo?: boolean } = {}): Promise<Reservation | undefined> {
    const plan = await this.plan(accountId);
    if (PLANS[plan].aiCredits === undefined) return undefined;
    const minAvailable = opts.minAvailableNanos ?? 1;
    if (![nanos, ttlSeconds, minAvailable].every(Number.isSafeInteger) || nanos < 0) throw new Error('reserve: amounts and ttl must be safe integers');
    const floor = billsAiOverage(plan) ? 0 : Math.max(1, minAvailable, opts.upTo ? 0 : nanos);
    // In the account's queue (BalanceQueue): grouped with the account's other statements, one round trip for the
    // group, committed without waiting for the WAL flush: a reservation lost to a database crash only stops holding
    // credit (the call's charge is written durably when it settles), so it needs no durability of its own. The
    // subquery locks the balance row, so the amount is computed on its latest version.
    const hold = sql<{ id: string }>`
      with held as (
        update credit_balances b set reserved_nanos = b.reserved_nanos + x.amount
        from (select greatest(0, least(${nanos}::bigint, balance_nanos - reserved_nanos)) as amount, balance_nanos - reserved_nanos as unheld
              from credit_balances where account_id = ${accountId}::uuid for update) x
        where b.account_id = ${accountId}::uuid and x.unheld >= ${floor}::bigint
        returning b.account_id, x.amount
      )
      insert into credit_reservations (account_id, amount_nanos, expires_at)
      select account_id, amount, now() + make_interval(secs => ${ttlSeconds}::int) from held
      returning id`;
    const [held] = await this.runQueued(accountId, hold.compile(this.#db), 'before');
    if (held?.id) return { id: held.id, accountId };
    throw insufficientCredits(await this.balance(accountId));
  }

  /**
   * Charges `nanos` and ends the reservation, inside the caller's transaction (the one that writes the usage row
   * the charge is for). A reservation already released by expiry is simply not released twice.
   */
  async settle(tx: Db, accountId: string, reservation: Reservation | undefined, nanos: number, source: string, usageRef: string): Promise<void> {
    await sql`with ${this.settlement(accountId, reservation, nanos, source, sql`${usageRef}::text`)} select 1`.execute(tx);
  }

  /**
   * The settlement as common table expressions, for a caller that writes its usage row and the charge in one
   * statement (one round trip): `with usage as (insert ... returning id), ${settlement} select ...`. `usageRef`
   * may refer to the caller's own CTEs; `(select shortfall_nanos from charged)` is the write-off, if any. Without a
   * reservation and a charge (own-key calls) it touches nothing.
   *
   * A call with a reservation (a plan with limited credits) is charged at most its hold plus the balance no other
   * call holds, so the balance never goes below zero: a cost beyond that (the price table under-estimated what the
   * upstream reported) is the platform's write-off, recorded as the charge row's shortfall_nanos; on a plan with an
   * overage price it is the account's overage instead (overage_nanos, invoiced when the period closes). The balance
   * row is locked first so that the amount is computed on its latest version.
   */
  settlement(accountId: string, reservation: Reservation | undefined, nanos: number, source: string, usageRef: RawBuilder<unknown>): RawBuilder<unknown> {
    const hold = reservation?.id ?? null;
    return sql`
      released as (
        delete from credit_reservations where id = ${hold}::uuid returning amount_nanos
      ),
      ${lockedAccount(accountId)},
      payable as (
        select case when ${hold}::uuid is null then ${nanos}::bigint
          else least(${nanos}::bigint, greatest(0, coalesce((select unheld from account), 0) + coalesce((select sum(amount_nanos) from released), 0)))
          end as amount
      ),
      ${overageOf(accountId)},
      charged as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${accountId}::uuid, 'charge', -amount, ${source}::text, ${usageRef},
          ${unpaid(nanos, sql.raw('amount'))}
        from payable, overage where ${nanos}::bigint > 0
        returning shortfall_nanos
      ),
      balanced as (
        update credit_balances set
          balance_nanos = balance_nanos - (select amount from payable),
          reserved_nanos = reserved_nanos - coalesce((select sum(amount_nanos) from released), 0)
        where account_id = ${accountId}::uuid and (${nanos}::bigint > 0 or ${hold}::uuid is not null)
      )`;
  }

  /**
   * How a call charged in advance (chargeInAdvance) of `nanos` at worst is billed, from the account's plan: capped
   * at what the account has, the rest being the platform's shortfall or the account's overage, except on plans with
   * unlimited credits; refused below `floor` of balance no other call holds (null: never refused; a plan with an
   * overage price takes what is left, maybe nothing, as reserve() does).
   */
  async advanceTerms(accountId: string, nanos: number): Promise<AdvanceTerms> {
    const plan = await this.plan(accountId);
    if (!Number.isSafeInteger(nanos) || nanos < 0) throw new Error('advanceTerms: the amount must be a safe integer');
    if (PLANS[plan].aiCredits === undefined) return { capped: false, floor: null };
    return { capped: true, floor: billsAiOverage(plan) ? 0 : Math.max(1, nanos) };
  }

  /**
   * A charge made before the work it pays for, at its worst case, as common table expressions around the caller's
   * usage row: `usage` must be an insert that selects `from paid` (so nothing is written when the call is refused)
   * and returns `id`; the charge row refers to it as `usageRefPrefix || id`. Selects `paid.amount` and the charge's
   * `id` as (select id from advance_charge). The work's real cost then replaces it in place (correction()), and a
   * process that dies first leaves the worst case charged: the caller's usage row already is the record.
   */
  chargeInAdvance(accountId: string, terms: AdvanceTerms, nanos: number, source: string, usageRefPrefix: string, usage: RawBuilder<unknown>): RawBuilder<unknown> {
    return sql`
      ${lockedAccount(accountId)},
      paid as (
        select case when ${terms.capped} then greatest(0, least(${nanos}::bigint, unheld)) else ${nanos}::bigint end as amount
        from account where ${terms.floor}::bigint is null or unheld >= ${terms.floor}::bigint
      ),
      usage as (${usage}),
      ${overageOf(accountId)},
      advance_charge as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${accountId}::uuid, 'charge', -paid.amount, ${source}::text, ${usageRefPrefix}::text || usage.id,
          ${unpaid(nanos, sql.raw('paid.amount'))}
        from paid, usage, overage where ${nanos}::bigint > 0
        returning id
      ),
      advance_balanced as (
        update credit_balances b set balance_nanos = b.balance_nanos - paid.amount from paid where b.account_id = ${accountId}::uuid and paid.amount <> 0
      )`;
  }

  /**
   * Replaces a charge made in advance (`chargeId`, null when the advance charged nothing) by the work's real cost
   * `nanos`, as common table expressions after the caller's `target(id, fresh)`: the usage row it corrected (fresh
   * false) or wrote anew because the advance was lost with a database crash (fresh true; charged whole). No row in
   * `target` (already corrected): nothing changes, so running it twice charges once. The charge is capped as
   * settlement() caps it, on the balance plus what the advance took; `(select shortfall_nanos from corrected_charge)`
   * is the write-off, if any. A cost of 0 deletes the advance's charge (a failed call).
   */
  correction(accountId: string, terms: AdvanceTerms, chargeId: string | null, nanos: number, source: string, usageRefPrefix: string): RawBuilder<unknown> {
    return sql`
      prior as (
        select id, -amount_nanos as paid from credit_ledger
        where id = ${chargeId}::bigint and account_id = ${accountId}::uuid and exists (select 1 from target where not fresh) for update
      ),
      ${lockedAccount(accountId)},
      payable as (
        select case when ${terms.capped}
          then least(${nanos}::bigint, greatest(0, coalesce((select unheld from account), 0) + coalesce((select paid from prior), 0)))
          else ${nanos}::bigint end as amount
      ),
      ${overageOf(accountId)},
      recharged as (
        update credit_ledger l set amount_nanos = -payable.amount,
          (shortfall_nanos, overage_nanos) = (${unpaid(nanos, sql.raw('payable.amount'))})
        from payable, overage where l.id = (select id from prior) and ${nanos}::bigint > 0
        returning l.shortfall_nanos
      ),
      uncharged as (
        delete from credit_ledger where id = (select id from prior) and ${nanos}::bigint = 0
      ),
      charged_now as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${accountId}::uuid, 'charge', -payable.amount, ${source}::text, ${usageRefPrefix}::text || target.id,
          ${unpaid(nanos, sql.raw('payable.amount'))}
        from target, payable, overage where not exists (select 1 from prior) and ${nanos}::bigint > 0
        returning shortfall_nanos
      ),
      corrected_charge as (
        select shortfall_nanos from recharged union all select shortfall_nanos from charged_now
      ),
      corrected_balance as (
        update credit_balances set balance_nanos = balance_nanos + coalesce((select paid from prior), 0) - (select amount from payable)
        where account_id = ${accountId}::uuid and exists (select 1 from target)
      )`;
  }

  /**
   * Runs a statement that writes the account's balance row for a call (its usage row with `chargeInAdvance()` or
   * `correction()`, in one statement) in the account's queue, grouped with the account's other such statements: one
   * round trip for the group, instead of each call waiting on the balance row's lock behind the one before (see
   * BalanceQueue). Committed without waiting for the WAL flush: the caller makes what it wrote durable (UsageFlush).
   * `lane`: what a call waits for before its vendor call goes in one queue, what runs after its answer in another, so
   * that the next call's advance does not wait for a round trip of the previous call's correction (both still lock
   * the balance row, for as long as their statements run). Its rows, or its own error as if it had run alone.
   */
  async runQueued<R>(accountId: string, query: CompiledQuery<R>, lane: QueueLane): Promise<R[]> {
    const result = await this.#queue.run(`${accountId}:${lane}`, query);
    return result.rows as R[];
  }

  async balance(accountId: string): Promise<{ balanceNanos: number; reservedNanos: number }> {
    const { rows } = await sql<{ balance_nanos: string; reserved_nanos: string }>`
      select balance_nanos::text, reserved_nanos::text from credit_balances where account_id = ${accountId}
    `.execute(this.#db);
    return { balanceNanos: Number(rows[0]?.balance_nanos ?? 0), reservedNanos: Number(rows[0]?.reserved_nanos ?? 0) };
  }
}


/** `account(unheld)`: the balance no call holds, its row locked so that amounts are computed on its latest version. */
function lockedAccount(accountId: string): RawBuilder<unknown> {
  return sql`account as (select balance_nanos - reserved_nanos as unheld from credit_balances where account_id = ${accountId}::uuid for update)`;
}

/**
 * A charge row's shortfall_nanos and overage_nanos: what of `nanos` the `paid` amount leaves, the platform's write-off,
 * or the account's overage on a plan billing it (needs `overage`).
 */
function unpaid(nanos: number, paid: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`case when overage.billed then 0 else ${nanos}::bigint - ${paid} end, case when overage.billed then ${nanos}::bigint - ${paid} else 0 end`;
}

/** `overage(billed)`: whether the account's current plan bills what its balance cannot pay as overage. */
function overageOf(accountId: string): RawBuilder<unknown> {
  return sql`overage as (select exists (select 1 from accounts where id = ${accountId}::uuid and plan = any(${OVERAGE_PLANS}::text[])) as billed)`;
}

export function insufficientCredits(b: { balanceNanos: number; reservedNanos: number }): AppError {
  return new AppError(
    402,
    'INSUFFICIENT_CREDITS',
    "The account's AI credits are exhausted (what is left is held by calls in flight, if any).",
    "Upgrade the plan, or set the app's own provider key (byokKey in ai_config_set): own-key calls use no credits.",
    { balance_usd: usd(b.balanceNanos), credit_floor_usd: 0 },
  );
}
