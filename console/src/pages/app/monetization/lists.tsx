// Every end user's orders and subscriptions of the app, newest first, filtered by status and paged by cursor
// (billing_orders_list and billing_subscriptions_list naming no user: the app-wide lists its keys and owner read).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { monetization, ORDER_STATUSES, SUBSCRIPTION_STATUSES, type ListPage, type Plan, type Product } from '../../../api/monetization.ts';
import { Pager, useCursors } from '../../../pager.tsx';
import { Loading, Table, useLoad, when } from '../../../ui.tsx';
import { money } from './catalog.tsx';

const nameOf = (items: Array<{ id: string; name: string }>, id: string) => items.find((i) => i.id === id)?.name ?? id;

export function Orders({ appId, products }: { appId: string; products: Product[] }) {
  return (
    <AppList
      title="Orders"
      statuses={ORDER_STATUSES}
      load={(filter) => monetization.orders(appId, filter)}
      deps={[appId]}
      columns={['Time', 'Order', 'End user', 'Product', 'Quantity', 'Amount', 'Status']}
      row={(o) => [when(o.createdAt), <code>{o.id}</code>, <code>{o.userId}</code>, nameOf(products, o.productId), o.quantity, money(o.amountCents, o.currency), o.status]}
    />
  );
}

export function Subscriptions({ appId, plans }: { appId: string; plans: Plan[] }) {
  return (
    <AppList
      title="Subscriptions"
      statuses={SUBSCRIPTION_STATUSES}
      load={(filter) => monetization.subscriptions(appId, filter)}
      deps={[appId]}
      columns={['Since', 'End user', 'Plan', 'Status', 'Period ends']}
      row={(s) => [
        when(s.createdAt),
        <code>{s.userId}</code>,
        nameOf(plans, s.planId),
        s.status,
        s.currentPeriodEnd ? `${when(s.currentPeriodEnd)}${s.cancelAtPeriodEnd ? ' (cancels then)' : ''}` : '',
      ]}
    />
  );
}

interface ListProps<S extends string, T> {
  title: string;
  statuses: readonly S[];
  load: (filter: { status?: S; before?: string }) => Promise<ListPage<T>>;
  deps: unknown[];
  columns: string[];
  row: (item: T) => ComponentChildren[];
}

function AppList<S extends string, T extends { id: string }>({ title, statuses, load, deps, columns, row }: ListProps<S, T>) {
  const [status, setStatus] = useState<S>();
  const cursors = useCursors();
  const page = useLoad(() => load({ status, before: cursors.before }), [...deps, status, cursors.before]);
  const filter = (value: string) => {
    setStatus(value === 'any' ? undefined : (value as S));
    cursors.reset();
  };
  const id = `mon-${title.toLowerCase()}`;
  return (
    <section aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <div class="row">
        <label class="field">
          <span>Status of {title.toLowerCase()}</span>
          <select onChange={(e) => filter(e.currentTarget.value)}>
            {['any', ...statuses].map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      <Loading loaded={page}>
        {(p) =>
          p.items.length === 0 ? (
            <p class="muted">No {title.toLowerCase()}.</p>
          ) : (
            <Table caption={title} columns={columns}>
              {p.items.map((item) => (
                <tr key={item.id}>
                  {row(item).map((cell, i) => (
                    <td key={i}>{cell}</td>
                  ))}
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      <Pager label={title.toLowerCase()} cursors={cursors} next={page.data?.next_before} />
    </section>
  );
}
