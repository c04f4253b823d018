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
    // In the account's queue (BalanceQueue): grouped with the account's other holds and settlements, one round trip
    // for the group, and a group of holds alone commits without waiting for the WAL flush: a reservation lost to a
    // database crash only stops holding credit (the call's charge is written durably when it settles), so it needs
    // no durability of its own. The subquery locks the balance row, so the amount is computed on its latest version.
    const hold = sql`
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
    const result = await this.#queue.run(accountId, hold.compile(this.#db), false);
    const id = (result.rows[0] as { id?: string } | undefined)?.id;
    if (id) return { id, accountId };
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
      account as (
        select balance_nanos - reserved_nanos as unheld from credit_balances where account_id = ${accountId}::uuid for update
      ),
      payable as (
        select case when ${hold}::uuid is null then ${nanos}::bigint
          else least(${nanos}::bigint, greatest(0, coalesce((select unheld from account), 0) + coalesce((select sum(amount_nanos) from released), 0)))
          end as amount
      ),
      overage as (
        select exists (select 1 from accounts where id = ${accountId}::uuid and plan = any(${OVERAGE_PLANS}::text[])) as billed
      ),
      charged as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${accountId}::uuid, 'charge', -amount, ${source}::text, ${usageRef},
          case when overage.billed then 0 else ${nanos}::bigint - amount end,
          case when overage.billed then ${nanos}::bigint - amount else 0 end
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
   * Runs a statement that settles a call of the account (its usage row and `settlement()`, in one statement) in the
   * account's queue, where it is committed durably with the account's other holds and settlements of its group: one
   * round trip and one WAL flush for the group, instead of each call waiting on the balance row's lock through the
   * flush of the one before (see BalanceQueue). Its rows, or its own error as if it had run alone.
   */
  async settleQueued<R>(accountId: string, query: CompiledQuery<R>): Promise<R[]> {
    const result = await this.#queue.run(accountId, query, true);
    return result.rows as R[];
  }

  async balance(accountId: string): Promise<{ balanceNanos: number; reservedNanos: number }> {
    const { rows } = await sql<{ balance_nanos: string; reserved_nanos: string }>`
      select balance_nanos::text, reserved_nanos::text from credit_balances where account_id = ${accountId}
    `.execute(this.#db);
    return { balanceNanos: Number(rows[0]?.balance_nanos ?? 0), reservedNanos: Number(rows[0]?.reserved_nanos ?? 0) };
  }
}


function insufficientCredits(b: { balanceNanos: number; reservedNanos: number }): AppError {
  return new AppError(
    402,
    'INSUFFICIENT_CREDITS',
    "The account's AI credits are exhausted (what is left is held by calls in flight, if any).",
    "Upgrade the plan, or set the app's own provider key (byokKey in ai_config_set): own-key calls use no credits.",
    { balance_usd: usd(b.balanceNanos), credit_floor_usd: 0 },
  );
}
