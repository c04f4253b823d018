// The account credit ledger: grants, charges and the balance that the AI gateway (and later people search and
// meetings) spend. Callers reserve before a vendor call and settle after, in the transaction of their usage row.
import type pg from 'pg';
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { BalanceQueue, type SetStatement } from './balance-queue.ts';
import { AppError } from '../core/errors.ts';
import { billsAiOverage, isPlanId, PLANS, type PlanId } from '../billing/plans.ts';
import { usd } from '../core/money.ts';
import type { ControlDatabase } from '../db/types.ts';

type Db = Kysely<ControlDatabase>;

/**
 * An account's two queues (CreditLedger.runInSet): holds and advances, which the calls wait for before their vendor
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

/**
 * How long the 'after' lane gathers corrections before each group it sends. Each transaction of that lane locks the
 * balance row the next calls' advances need: at one call in flight, a correction sent at once held it just as the next
 * call's advance came (measured: the advance 0.6 ms alone, 1.75 ms at p50 beside corrections); under load, a group
 * sent as soon as the one before ended held ~16 corrections, each group paying its fixed cost.
 */
const AFTER_LINGER_MS = 20;

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
            on conflict (account_id, grant_key) where grant_key is not null do nothing
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
    const [held] = await this.#runQueued(accountId, hold.compile(this.#db), 'before');
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
   * How a call charged in advance (chargesInAdvance) of `nanos` at worst is billed, from the account's plan: capped
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
   * Charges made before the work they pay for, at their worst case, for a set of calls of one account in one statement
   * (see BalanceQueue.runInSet), as common table expressions after the caller's `calls(ord, account_id, nanos,
   * capped, floor)` (`capped`, `floor`: the call's AdvanceTerms) and around the caller's `usage`: CTEs that write
   * the usage rows of the calls in `paid(ord, amount)` (the calls not refused) and end with `usage_ids(ord, id)`; a
   * charge row refers to its usage row as `usageRefPrefix || id`. Each call's amount is computed on the balance the
   * calls before it left, in `ord` order, as if each ran alone. `advance_charge(id, usage_ref)`: the charges. The work's
   * real cost then replaces each in place (correctionsInSet()), and a process that dies first leaves the worst case
   * charged: the caller's usage row already is the record.
   */
  static chargesInAdvance(source: string, usageRefPrefix: string, usage: RawBuilder<unknown>): RawBuilder<unknown> {
    return sql`
      ${lockedAccount(CALLS_ACCOUNT)},
      clamp (ord, left_nanos, amount) as (
        select -1, (select unheld from account), null::bigint
        union all
        select c.ord, r.left_nanos - coalesce(x.amount, 0), x.amount
        from clamp r join calls c on c.ord = r.ord + 1
        left join lateral (
          select case when c.capped then greatest(0, least(c.nanos, r.left_nanos)) else c.nanos end as amount
          where r.left_nanos is not null and (c.floor is null or r.left_nanos >= c.floor)
        ) x on true
      ),
      paid as (select c.ord, c.nanos, r.amount from clamp r join calls c using (ord) where r.amount is not null),
      ${usage},
      ${overageOf(CALLS_ACCOUNT)},
      advance_charge as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${CALLS_ACCOUNT}, 'charge', -paid.amount, ${source}::text, ${usageRefPrefix}::text || u.id,
          ${unpaid(sql.raw('paid.nanos'), sql.raw('paid.amount'))}
        from paid join usage_ids u using (ord), overage where paid.nanos > 0
        returning id, usage_ref
      ),
      advance_balanced as (
        update credit_balances b set balance_nanos = b.balance_nanos - (select sum(amount) from paid)
        where b.account_id = ${CALLS_ACCOUNT} and exists (select 1 from paid where amount <> 0)
      )`;
  }

  /**
   * Replaces charges made in advance by the work's real costs, for a set of calls of one account in one statement, as
   * common table expressions after the caller's `calls(ord, account_id, charge_id, nanos, capped, billed)` (`charge_id`
   * null when the advance charged nothing; `billed` false for calls that pay no credits, which touch nothing here)
   * and `target(ord, id, fresh)`: the usage rows it corrected (fresh false) or wrote anew because the advance was lost
   * with a database crash (fresh true; charged whole). A call without a row in `target` (already corrected) changes
   * nothing, so running it twice charges once. Each charge is capped as settlement() caps it, on the balance (as the
   * calls before it in `ord` order left it) plus what its advance took; `corrected_charge(ord, shortfall_nanos)` is
   * the write-off, if any. A cost of 0 deletes the advance's charge (a failed call). The charges are read without a
   * row lock (which wrote a WAL record per call): a charge is changed only by the correction of its own call, and the
   * caller's `target` holds a call at most once over every run (decided under its usage row's lock). The balance row is
   * locked at the start only when a call costs more than its advance took (capped on the balance); corrections that give
   * credit back (the usual case: the worst case was charged) take it only with the statement's last step, its update,
   * so the account's next advances wait for the commit alone, not the whole statement.
   */
  static correctionsInSet(source: string, usageRefPrefix: string): RawBuilder<unknown> {
    return sql`
      prior as (
        select t.ord, l.id, -l.amount_nanos as paid from target t join calls c using (ord)
        cross join lateral (select id, amount_nanos from credit_ledger where id = c.charge_id and account_id = c.account_id limit 1) l
        where not t.fresh and c.billed
      ),
      steps as (
        select row_number() over (order by t.ord) as step, t.ord, t.id, c.nanos, c.capped, coalesce(p.paid, 0) as prior_paid
        from target t join calls c using (ord) left join prior p using (ord) where c.billed
      ),
      account as (
        select balance_nanos - reserved_nanos as unheld from credit_balances
        where account_id = ${CALLS_ACCOUNT} and exists (select 1 from steps where capped and nanos > prior_paid) for update
      ),
      clamp (step, left_nanos, amount) as (
        select 0::bigint, coalesce((select unheld from account), 0), null::bigint
        union all
        select s.step, r.left_nanos + s.prior_paid - x.amount, x.amount
        from clamp r join steps s on s.step = r.step + 1
        cross join lateral (
          select case when s.capped then least(s.nanos, greatest(0, r.left_nanos + s.prior_paid)) else s.nanos end as amount
        ) x
      ),
      payable as (select s.ord, s.id, s.nanos, s.prior_paid, r.amount from clamp r join steps s using (step)),
      ${overageOf(CALLS_ACCOUNT)},
      recharged as (
        update credit_ledger l set amount_nanos = -p.amount,
          (shortfall_nanos, overage_nanos) = (${unpaid(sql.raw('p.nanos'), sql.raw('p.amount'))})
        from payable p join prior pr using (ord), overage where l.id = pr.id and p.nanos > 0
        returning pr.ord, l.shortfall_nanos
      ),
      uncharged as (
        delete from credit_ledger l using payable p join prior pr using (ord) where l.id = pr.id and p.nanos = 0
      ),
      charged_now as (
        insert into credit_ledger (account_id, kind, amount_nanos, source, usage_ref, shortfall_nanos, overage_nanos)
        select ${CALLS_ACCOUNT}, 'charge', -p.amount, ${source}::text, ${usageRefPrefix}::text || p.id,
          ${unpaid(sql.raw('p.nanos'), sql.raw('p.amount'))}
        from payable p, overage where not exists (select 1 from prior pr where pr.ord = p.ord) and p.nanos > 0
        returning usage_ref, shortfall_nanos
      ),
      corrected_charge as (
        select ord, shortfall_nanos from recharged
        union all
        select p.ord, n.shortfall_nanos from charged_now n join payable p on n.usage_ref = ${usageRefPrefix}::text || p.id
      ),
      corrected_balance as (
        update credit_balances set balance_nanos = balance_nanos + (select sum(prior_paid - amount) from payable)
        where account_id = ${CALLS_ACCOUNT} and exists (select 1 from payable)
      )`;
  }

  /**
   * Runs a statement that writes the account's balance row (a hold) in the account's queue, grouped with the account's
   * other such statements: one round trip for the group, instead of each call waiting on the balance row's lock behind
   * the one before (see BalanceQueue). Committed without waiting for the WAL flush. `lane`: what a call waits for
   * before its vendor call goes in one queue, what runs after its answer in another, so that the next call's advance
   * does not wait for a round trip of the previous call's correction (both still lock the balance row, for as long as
   * their statements run). Its rows, or its own error as if it had run alone.
   */
  async #runQueued<R>(accountId: string, query: CompiledQuery<R>, lane: QueueLane): Promise<R[]> {
    const result = await this.#queue.run(`${accountId}:${lane}`, query);
    return result.rows as R[];
  }

  /**
   * Runs a call's `row` of a set statement (around chargesInAdvance() or correctionsInSet()) in the account's queue
   * `lane` (see #runQueued), in one statement with the rows of the account's calls beside it (BalanceQueue.runInSet),
   * committed without waiting for the WAL flush (the set's `durably` statement makes it durable after the commit, in the
   * same round trip; see SetStatement). This call's rows of the result. The 'after' lane gathers rows for AFTER_LINGER_MS before each group: nobody waits on it.
   */
  runInSet<R>(accountId: string, set: SetStatement, lane: QueueLane, row: object): Promise<R[]> {
    return this.#queue.runInSet<R>(`${accountId}:${lane}`, set, row, { lingerMs: lane === 'after' ? AFTER_LINGER_MS : 0 });
  }

  async balance(accountId: string): Promise<{ balanceNanos: number; reservedNanos: number }> {
    const { rows } = await sql<{ balance_nanos: string; reserved_nanos: string }>`
      select balance_nanos::text, reserved_nanos::text from credit_balances where account_id = ${accountId}
    `.execute(this.#db);
    return { balanceNanos: Number(rows[0]?.balance_nanos ?? 0), reservedNanos: Number(rows[0]?.reserved_nanos ?? 0) };
  }
}


/** The account of a set statement's calls (chargesInAdvance, correctionsInSet): all of them are one account's. */
const CALLS_ACCOUNT = sql`(select account_id from calls limit 1)`;

/** `account(unheld)`: the balance no call holds, its row locked so that amounts are computed on its latest version. */
function lockedAccount(accountId: string | RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`account as (select balance_nanos - reserved_nanos as unheld from credit_balances where account_id = ${accountId}::uuid for update)`;
}

/**
 * A charge row's shortfall_nanos and overage_nanos: what of `nanos` the `paid` amount leaves, the platform's write-off,
 * or the account's overage on a plan billing it (needs `overage`).
 */
function unpaid(nanos: number | RawBuilder<unknown>, paid: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`case when overage.billed then 0 else ${nanos}::bigint - ${paid} end, case when overage.billed then ${nanos}::bigint - ${paid} else 0 end`;
}

/** `overage(billed)`: whether the account's current plan bills what its balance cannot pay as overage. */
function overageOf(accountId: string | RawBuilder<unknown>): RawBuilder<unknown> {
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
