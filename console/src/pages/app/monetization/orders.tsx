// Every end user's orders of the app, newest first, filtered by status and paged by cursor (billing_orders_list
// naming no user: the app-wide list its keys and owner read).
import { useState } from 'preact/hooks';
import { monetization, ORDER_STATUSES, type OrderStatus, type Product } from '../../../api/monetization.ts';
import { Pager, useCursors } from '../../../pager.tsx';
import { Loading, Table, useLoad, when } from '../../../ui.tsx';
import { money } from './catalog.tsx';

export function Orders({ appId, products }: { appId: string; products: Product[] }) {
  const [status, setStatus] = useState<OrderStatus>();
  const cursors = useCursors();
  const orders = useLoad(() => monetization.orders(appId, { status, before: cursors.before }), [appId, status, cursors.before]);
  const productName = (id: string) => products.find((p) => p.id === id)?.name ?? id;
  const filter = (value: string) => {
    setStatus(value === 'any' ? undefined : (value as OrderStatus));
    cursors.reset();
  };
  return (
    <section aria-labelledby="mon-orders">
      <h3 id="mon-orders">Orders</h3>
      <label class="field">
        <span>Status</span>
        <select name="status" onChange={(e) => filter(e.currentTarget.value)}>
          {['any', ...ORDER_STATUSES].map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <Loading loaded={orders}>
        {(page) =>
          page.orders.length === 0 ? (
            <p class="muted">No orders.</p>
          ) : (
            <Table caption="Orders" columns={['Time', 'Order', 'End user', 'Product', 'Quantity', 'Amount', 'Status']}>
              {page.orders.map((o) => (
                <tr key={o.id}>
                  <td>{when(o.createdAt)}</td>
                  <td>
                    <code>{o.id}</code>
                  </td>
                  <td>
                    <code>{o.userId}</code>
                  </td>
                  <td>{productName(o.productId)}</td>
                  <td>{o.quantity}</td>
                  <td>{money(o.amountCents, o.currency)}</td>
                  <td>{o.status}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      <Pager label="orders" cursors={cursors} next={orders.data?.next_before} />
    </section>
  );
}
