// The account's billing: its plan and status, usage against the plan's allowances, daily usage charted by meter, and
// for its owners the upgrade (Stripe Checkout) and the billing portal. Plans and payment are the owners' (the API
// says so too): other roles see the numbers only.
import { useState } from 'preact/hooks';
import { billing, DAILY_METERS, type BillingOverview, type DailyMeter } from '../api/billing.ts';
import { BarChart, dailyBars } from '../chart.tsx';
import { Facts } from '../facts.tsx';
import { useCan } from '../session.ts';
import { formatMeter, meterLabel, UsageTable } from '../usage.tsx';
import { Action, isoDay, Loading, useLoad, when } from '../ui.tsx';

const CHART_DAYS = 30;

export function BillingPage() {
  const overview = useLoad(() => billing.get(), []);
  return (
    <section aria-labelledby="billing-title">
      <h1 id="billing-title" tabIndex={-1}>
        Billing
      </h1>
      <Loading loaded={overview}>
        {(b) => (
          <>
            <Plan billing={b} />
            <h2>Usage this period</h2>
            <UsageTable billing={b} caption="Usage against the plan" />
            <DailyUsage />
          </>
        )}
      </Loading>
    </section>
  );
}

/** Leaves the console for a Stripe page; coming back lands on this page again. */
const go = async (link: Promise<{ url: string }>) => location.assign((await link).url);

function Plan({ billing: b }: { billing: BillingOverview }) {
  const isOwner = useCan('owner');
  const facts: Array<[string, string]> = [
    ['Plan', b.plan],
    ['Status', b.statusReason ? `${b.status}: ${b.statusReason}` : b.status],
    ['Period', `${b.period.start} to ${b.period.end}`],
    ...(b.graceEndsAt ? [['Grace ends', when(b.graceEndsAt)] as [string, string]] : []),
    ...(b.subscription ? [['Subscription', `${b.subscription.status}${b.subscription.currentPeriodEnd ? `, renews ${when(b.subscription.currentPeriodEnd)}` : ''}`] as [string, string]] : []),
  ];
  return (
    <>
      <Facts label="Plan" facts={facts} />
      {isOwner && (
        <p class="row">
          {b.plan === 'free' && <Action act={() => go(billing.checkout('pro'))}>Upgrade to pro</Action>}
          {b.subscription && <Action act={() => go(billing.portal())}>Manage billing</Action>}
        </p>
      )}
    </>
  );
}

/** The last 30 days of one meter, a bar a day. */
export function DailyUsage({ appId }: { appId?: string }) {
  const [meter, setMeter] = useState<DailyMeter>('lambda_invocations');
  const endDate = isoDay(Date.now());
  const startDate = isoDay(Date.now() - (CHART_DAYS - 1) * 86_400_000);
  const daily = useLoad(() => billing.daily({ startDate, endDate, meterType: meter, appId }), [meter, appId, endDate]);
  return (
    <>
      <h2>Daily usage</h2>
      <label class="field">
        <span>Meter</span>
        <select value={meter} onChange={(e) => setMeter(e.currentTarget.value as DailyMeter)}>
          {DAILY_METERS.map((m) => (
            <option key={m} value={m}>
              {meterLabel(m)}
            </option>
          ))}
        </select>
      </label>
      <Loading loaded={daily}>
        {(d) => (
          <BarChart
            title={`${meterLabel(meter)} per day, ${startDate} to ${endDate}`}
            bars={dailyBars(d.startDate, d.endDate, new Map(d.rows.map((r) => [r.date, r.quantity])))}
            format={(n) => formatMeter(meter, n)}
          />
        )}
      </Loading>
    </>
  );
}
