// Platform billing: the account's plan and usage, the platform's Stripe subscription (checkout, portal, webhook),
// and the periodic passes that enforce the plan (limits, grace, idle pause, database size).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import { errors } from '../core/errors.ts';
import { paymentErrors, type PaymentEvent, type PlatformPayments } from './payments-port.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { usd } from '../core/money.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import { claimPaymentEvent, type PaymentEventOutcome } from './events.ts';
import { deliverNotification } from './notify.ts';
import type { MailSender } from './mail-port.ts';
import { aiOverageNanos, invoiceOverage, type OverageCharge, type OverageMeter } from './overage.ts';
import { applyPlatformEvent } from './platform-events.ts';
import { BillingGate } from './gate.ts';
import { TrafficMeter } from './traffic.ts';
import { enforceLimits, suspendExpiredGrace, type AccountStatus, type StatusChange } from './status.ts';
import { LIMITED_METERS, PLANS, SELF_SERVE_PLANS, isPlanId, type LimitedMeter, type Meter, type PlanId } from './plans.ts';
import { aiCreditsSince, aiCreditsSpent, billingPeriod, isoDay, overageNanos, usageByAccount, usageOfApp } from './usage.ts';
import type { ControlDatabase } from '../db/types.ts';

export interface BillingDeps {
  db: Kysely<ControlDatabase>;
  credits: CreditLedger;
  databases: AppDatabases;
  /** undefined without SVC_STRIPE_SECRET_KEY: checkout and portal answer 503, the rest works. */
  stripe: PlatformPayments | undefined;
  proPriceId: string | undefined;
  baseUrl: string;
  idlePauseDays: number;
  /** undefined without SVC_SMTP_URL: e-mails are logged and marked skipped. */
  mailer: MailSender | undefined;
  log: Logger;
}

/** The account's billing as GET /dashboard/billing answers it. Money in USD; bytes, users and invocations as counts. */
export interface BillingOverview {
  plan: PlanId;
  status: AccountStatus;
  statusReason: string | null;
  graceEndsAt: string | null;
  period: { start: string; end: string };
  /** The app whose share `usage` and `percentages` are, or null for the whole account. */
  appId: string | null;
  usage: Record<LimitedMeter | 'ai_credits', number>;
  limits: Record<LimitedMeter | 'ai_credits', number | null>;
  percentages: Record<LimitedMeter | 'ai_credits', number | null>;
  /** This period's overage so far, per meter beyond the allowance and ai_credits spent beyond the balance. */
  overageUsd: Partial<Record<OverageMeter, number>>;
  subscription: { status: string; currentPeriodEnd: string | null } | null;
}

export interface UsageView {
  date: string;
  meterType: Meter;
  quantity: number;
}

/** One day and meter summed over the account's apps: `day` as YYYY-MM-DD, `quantity` the sum as text. */
type UsageRow = Pick<Selectable<ControlDatabase['usage_daily']>, 'meter' | 'quantity'> & { day: string };

function usageView(r: UsageRow): UsageView {
  // The meters record usage only under Meter names.
  const meter = r.meter as Meter;
  return { date: r.day, meterType: meter, quantity: meter === 'ai_credits' ? usd(Number(r.quantity)) : Number(r.quantity) };
}

const DAY_MS = 86_400_000;
/** The longest span one usage query may cover. */
export const MAX_USAGE_DAYS = 366;

export class BillingService {
  readonly gate: BillingGate;
  readonly traffic: TrafficMeter;
  readonly #d: BillingDeps;

  constructor(deps: BillingDeps) {
    this.#d = deps;
    this.gate = new BillingGate(deps.db);
    this.traffic = new TrafficMeter(deps.db, deps.log);
  }

  /** The account's plan, status and usage against its limits; with `appId` (one of the account's), that app's share. */
  async overview(accountId: string, appId?: string, now = new Date()): Promise<BillingOverview> {
    const { db, credits } = this.#d;
    const plan = await credits.plan(accountId);
    // The status shown is current: this account's limits are looked at now, not only at the next periodic pass.
    await this.enforce(now, [accountId]);
    const usage = (await usageByAccount(db, now, [accountId])).get(accountId)!;
    const { rows } = await sql<Pick<Selectable<ControlDatabase['accounts']>, 'status' | 'status_reason' | 'grace_ends_at' | 'subscription_status' | 'current_period_end'>>`
      select status, status_reason, grace_ends_at, subscription_status, current_period_end from accounts where id = ${accountId}
    `.execute(db);
    const account = rows[0]!;
    const aiAllowance = PLANS[plan].aiCredits;
    const shown = appId === undefined ? { ...usage, ai_credits: await aiCreditsSpent(db, accountId, plan, now) } : await usageOfApp(db, appId, now, aiCreditsSince(plan, now));
    const allUsage = { ...shown, ai_credits: usd(shown.ai_credits) };
    const limits = { ...PLANS[plan].limits, ai_credits: aiAllowance ? usd(aiAllowance.nanos) : undefined };
    const period = billingPeriod(now);
    const overage: Partial<Record<OverageMeter, number>> = overageNanos(plan, usage);
    const aiOverage = await aiOverageNanos(db, accountId, period.start);
    if (aiOverage > 0) overage.ai_credits = aiOverage;
    return {
      plan,
      status: account.status,
      statusReason: account.status_reason,
      graceEndsAt: account.grace_ends_at?.toISOString() ?? null,
      period: { start: isoDay(period.start), end: isoDay(period.end) },
      appId: appId ?? null,
      usage: allUsage,
      limits: mapMeters(limits, (limit) => limit ?? null),
      percentages: mapMeters(limits, (limit, meter) => (limit ? Math.round((allUsage[meter] / limit) * 10_000) / 100 : null)),
      overageUsd: Object.fromEntries(Object.entries(overage).map(([m, nanos]) => [m, usd(nanos)])),
      subscription: account.subscription_status
        ? { status: account.subscription_status, currentPeriodEnd: account.current_period_end?.toISOString() ?? null }
        : null,
    };
  }

  /** Daily rows of the account's apps (summed over them) or of one of them, oldest first; level meters' rows are the day's change. */
  async usage(accountId: string, query: { startDate?: string | undefined; endDate?: string | undefined; meterType?: Meter | undefined; appId?: string | undefined }, now = new Date()): Promise<{ startDate: string; endDate: string; rows: UsageView[] }> {
    const endDate = query.endDate ?? isoDay(now);
    const startDate = query.startDate ?? isoDay(new Date(Date.parse(endDate) - 29 * DAY_MS));
    const span = (Date.parse(endDate) - Date.parse(startDate)) / DAY_MS;
    if (span < 0) throw errors.validation(`startDate ${startDate} is after endDate ${endDate}.`, [{ path: 'startDate', message: 'must not be after endDate' }]);
    if (span >= MAX_USAGE_DAYS) throw errors.validation(`At most ${MAX_USAGE_DAYS} days per query.`, [{ path: 'startDate', message: `at most ${MAX_USAGE_DAYS} days before endDate` }]);
    const { rows } = await sql<UsageRow>`
      select to_char(u.day, 'YYYY-MM-DD') as day, u.meter, sum(u.quantity)::text as quantity
      from usage_daily u join apps a on a.id = u.app_id
      where a.account_id = ${accountId} and u.day between ${startDate}::date and ${endDate}::date
        and (${query.meterType ?? null}::text is null or u.meter = ${query.meterType ?? null})
        and (${query.appId ?? null}::text is null or u.app_id::text = ${query.appId ?? null})
      group by u.day, u.meter order by u.day, u.meter
    `.execute(this.#d.db);
    return {
      startDate,
      endDate,
      rows: rows.map(usageView),
    };
  }

  /** A Stripe Checkout URL for a subscription to `planId` (pro), creating the account's Stripe customer once. */
  async checkout(accountId: string, planId: string, urls: { successUrl?: string | undefined; cancelUrl?: string | undefined }): Promise<{ url: string; sessionId: string }> {
    if (!isPlanId(planId) || !SELF_SERVE_PLANS.includes(planId)) {
      throw errors.validation(`Plan '${planId}' cannot be bought through checkout; self-serve plans: ${SELF_SERVE_PLANS.join(', ')} (enterprise is arranged with the operator, free needs no checkout).`, [
        { path: 'planId', message: `one of: ${SELF_SERVE_PLANS.join(', ')}` },
      ]);
    }
    const stripe = this.#stripe();
    if (!this.#d.proPriceId) throw paymentErrors.notConfigured();
    const customerId = await this.#customer(accountId, stripe);
    const back = `${this.#d.baseUrl}/dashboard/billing`;
    const session = await stripe.subscriptionCheckout({
      accountId,
      customerId,
      priceId: this.#d.proPriceId,
      planId,
      successUrl: urls.successUrl ?? `${back}?checkout=success`,
      cancelUrl: urls.cancelUrl ?? `${back}?checkout=cancel`,
    });
    return { url: session.url, sessionId: session.id };
  }

  async portal(accountId: string, returnUrl: string | undefined): Promise<{ url: string }> {
    const stripe = this.#stripe();
    const { rows } = await sql<{ stripe_customer_id: string | null }>`select stripe_customer_id from accounts where id = ${accountId}`.execute(this.#d.db);
    const customer = rows[0]?.stripe_customer_id;
    if (!customer) {
      throw errors.conflict('The account has no billing profile yet: it has never subscribed.', 'Subscribe first with billing_checkout (POST /dashboard/billing/checkout {"planId":"pro"}).');
    }
    return { url: await stripe.portal(customer, returnUrl ?? `${this.#d.baseUrl}/dashboard/billing`) };
  }

  async handleEvent(event: PaymentEvent, now = new Date()): Promise<PaymentEventOutcome> {
    const result = await this.#d.db.transaction().execute(async (tx) => {
      if (!(await claimPaymentEvent(tx, 'platform', event))) return { handled: false, accountId: undefined };
      const effect = await applyPlatformEvent(tx, event, now);
      return { handled: effect.accountId !== undefined, accountId: effect.accountId };
    });
    if (result.accountId) {
      this.#d.credits.forget(result.accountId);
      // A new plan may lift (or impose) a soft lock at once rather than at the next enforcement pass.
      await this.enforce(now, [result.accountId]);
      this.gate.forget(result.accountId);
    }
    return { received: true, handled: result.handled };
  }

  /** The periodic pass (and the one after a plan change): limits, then grace that ran out. */
  async enforce(now = new Date(), accountIds?: readonly string[]): Promise<StatusChange[]> {
    const changes = [...(await enforceLimits(this.#d.db, now, accountIds)), ...(accountIds ? [] : await suspendExpiredGrace(this.#d.db, now))];
    for (const change of changes) {
      this.gate.forget(change.accountId);
      this.#d.log.info({ account_id: change.accountId, from: change.from, to: change.to, reason: change.reason }, 'account status changed');
    }
    return changes;
  }

  /** Pauses the free plan's apps that had no request for SVC_APP_IDLE_PAUSE_DAYS days; returns their ids. */
  async pauseIdle(now = new Date()): Promise<string[]> {
    if (this.#d.idlePauseDays === 0) return [];
    const idleSince = new Date(now.getTime() - this.#d.idlePauseDays * DAY_MS);
    const { rows } = await sql<{ id: string }>`
      update apps a set paused_at = ${now}
      from accounts ac
      where ac.id = a.account_id and ac.plan = 'free' and a.status = 'ready' and a.paused_at is null and a.last_request_at < ${idleSince}
      returning a.id
    `.execute(this.#d.db);
    if (rows.length) this.#d.log.info({ apps: rows.map((r) => r.id) }, 'paused idle free apps');
    return rows.map((r) => r.id);
  }

  /** Records each app database's size as the database_bytes level (the change since the last measurement). */
  async measureDatabases(): Promise<void> {
    const sizes = await this.#d.databases.sizes();
    if (!sizes.size) return;
    await sql`
      with measured as (select * from unnest(${[...sizes.keys()]}::text[], ${[...sizes.values()]}::bigint[]) as m(app_id, bytes)),
      levels as (select app_id, sum(quantity) as level from usage_daily where meter = 'database_bytes' group by app_id)
      insert into usage_daily (app_id, meter, day, quantity)
      select a.id, 'database_bytes', (now() at time zone 'utc')::date, m.bytes - coalesce(l.level, 0)
      from measured m join apps a on a.id = m.app_id and a.status = 'ready' left join levels l on l.app_id = m.app_id
      where m.bytes <> coalesce(l.level, 0)
      on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity
    `.execute(this.#d.db);
  }

  /** Invoices the closed period's pro overage through Stripe (the billing_invoice_overage job); returns its charges. */
  async invoiceOverage(now = new Date()): Promise<OverageCharge[]> {
    return invoiceOverage(this.#d.db, this.#d.stripe, now, this.#d.log);
  }

  /** Sends one queued billing e-mail (the billing_notify job). */
  async deliverNotification(id: number): Promise<void> {
    await deliverNotification(this.#d.db, this.#d.mailer, id, this.#d.log);
  }

  #stripe(): PlatformPayments {
    if (!this.#d.stripe) throw paymentErrors.notConfigured();
    return this.#d.stripe;
  }

  async #customer(accountId: string, stripe: PlatformPayments): Promise<string> {
    const { rows } = await sql<Pick<Selectable<ControlDatabase['accounts']>, 'name' | 'stripe_customer_id'>>`select name, stripe_customer_id from accounts where id = ${accountId}`.execute(this.#d.db);
    const existing = rows[0]?.stripe_customer_id;
    if (existing) return existing;
    // Idempotent at Stripe (keyed by the account), so two concurrent checkouts get the same customer.
    const created = await stripe.createCustomer(accountId, rows[0]?.name ?? accountId);
    await sql`update accounts set stripe_customer_id = coalesce(stripe_customer_id, ${created}) where id = ${accountId}`.execute(this.#d.db);
    return created;
  }
}


function mapMeters<T, R>(values: Record<LimitedMeter | 'ai_credits', T>, f: (v: T, meter: LimitedMeter | 'ai_credits') => R): Record<LimitedMeter | 'ai_credits', R> {
  return Object.fromEntries([...LIMITED_METERS, 'ai_credits' as const].map((m) => [m, f(values[m], m)])) as Record<LimitedMeter | 'ai_credits', R>;
}
