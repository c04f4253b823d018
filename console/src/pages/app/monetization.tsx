// An app's Monetization tab: the owner's Stripe Connect account (status, onboarding link), the plans and products
// on sale (create, change, take off sale) and every end user's orders and subscriptions, newest first.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { monetization, type ConnectStatus } from '../../api/monetization.ts';
import { Facts } from '../../facts.tsx';
import { useCan } from '../../session.ts';
import { Action, Loading, useLoad } from '../../ui.tsx';
import { Catalog } from './monetization/catalog.tsx';
import { Orders, Subscriptions } from './monetization/lists.tsx';

export default function MonetizationTab({ app }: AppTabProps) {
  const plans = useLoad(() => monetization.plans(app.app_id), [app.app_id]);
  const products = useLoad(() => monetization.products(app.app_id), [app.app_id]);
  return (
    <>
      <h2>Monetization</h2>
      <Connect appId={app.app_id} />
      <Catalog appId={app.app_id} plans={plans} products={products} />
      <Subscriptions appId={app.app_id} plans={plans.data ?? []} />
      <Orders appId={app.app_id} products={products.data ?? []} />
    </>
  );
}

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

function connectFacts(s: ConnectStatus): Array<[string, string]> {
  return [
    ['Status', s.status.replace('_', ' ')],
    ['Account', s.accountId ?? 'none'],
    ['Charges enabled', yesNo(s.chargesEnabled)],
    ['Payouts enabled', yesNo(s.payoutsEnabled)],
    ['Still due', s.requirementsDue.join(', ') || 'nothing'],
  ];
}

function Connect({ appId }: { appId: string }) {
  const status = useLoad(() => monetization.status(appId), [appId]);
  const canWrite = useCan('developer');
  const [link, setLink] = useState<string>();
  const onboard = async () => setLink((await monetization.onboard(appId, location.href)).onboardingUrl);
  return (
    <section aria-labelledby="mon-connect">
      <h3 id="mon-connect">Stripe Connect</h3>
      <p class="muted">End users pay into the owner's connected Stripe account; the platform takes its fee from each payment.</p>
      <Loading loaded={status}>
        {(s) => <Facts label="Stripe Connect" facts={connectFacts(s)} />}
      </Loading>
      <div class="row">
        {canWrite && status.data?.status !== 'enabled' && <Action act={onboard}>{status.data?.accountId ? 'Continue onboarding' : 'Start onboarding'}</Action>}
        <Action act={status.reload}>Refresh status</Action>
      </div>
      {link && (
        <p>
          <a href={link} target="_blank" rel="noopener">
            Open Stripe onboarding
          </a>{' '}
          (a fresh link, valid for a short time)
        </p>
      )}
    </section>
  );
}
