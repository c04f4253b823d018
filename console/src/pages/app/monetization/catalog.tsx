// The app's plans and products on sale: listed, created, changed (name, price) and taken off sale. Both are priced
// items of the owner's connected account; one editor serves both.
import { useState } from 'preact/hooks';
import { INTERVALS, monetization, type Plan, type Product } from '../../../api/monetization.ts';
import { useCan } from '../../../session.ts';
import { Action, Field, Form, Loading, Select, Table, text, when, type Loaded } from '../../../ui.tsx';

/** An amount in minor units (cents) as the person reads it. */
export const money = (cents: number, currency: string): string =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(cents / 100);
/** A price typed in major units (9.50) as cents. */
const cents = (d: FormData, name: string): number | undefined => {
  const v = text(d, name);
  return v === undefined ? undefined : Math.round(Number(v) * 100);
};
const currency = (d: FormData) => (text(d, 'currency') ?? 'usd').toLowerCase();

export function Catalog({ appId, plans, products }: { appId: string; plans: Loaded<Plan[]>; products: Loaded<Product[]> }) {
  const canWrite = useCan('developer');
  const createPlan = async (d: FormData) => {
    const features = text(d, 'features')?.split(',').map((f) => f.trim()).filter(Boolean) ?? [];
    await monetization.createPlan(appId, { name: text(d, 'name')!, priceCents: cents(d, 'price')!, currency: currency(d), interval: text(d, 'interval') as Plan['interval'], features });
    await plans.reload();
  };
  const createProduct = async (d: FormData) => {
    await monetization.createProduct(appId, { name: text(d, 'name')!, priceCents: cents(d, 'price')!, currency: currency(d), description: text(d, 'description') });
    await products.reload();
  };
  return (
    <>
      <section aria-labelledby="mon-plans">
        <h3 id="mon-plans">Plans</h3>
        <Loading loaded={plans}>
          {(list) => (
            <Items
              kind="plan"
              items={list}
              detail={(p) => `${p.interval}${p.features.length ? `: ${p.features.join(', ')}` : ''}`}
              update={(id, change) => monetization.updatePlan(appId, id, change).then(plans.reload)}
            />
          )}
        </Loading>
        {canWrite && (
          <Form label="New plan" button="Create plan" submit={createPlan}>
            <PriceFields />
            <Select label="Billed every" name="interval" options={INTERVALS} initial="month" />
            <Field label="Features (comma-separated)" name="features" />
          </Form>
        )}
      </section>
      <section aria-labelledby="mon-products">
        <h3 id="mon-products">Products</h3>
        <Loading loaded={products}>
          {(list) => <Items kind="product" items={list} detail={(p) => p.description ?? ''} update={(id, change) => monetization.updateProduct(appId, id, change).then(products.reload)} />}
        </Loading>
        {canWrite && (
          <Form label="New product" button="Create product" submit={createProduct}>
            <PriceFields />
            <Field label="Description" name="description" maxLength={2000} />
          </Form>
        )}
      </section>
    </>
  );
}

function PriceFields() {
  return (
    <div class="row">
      <Field label="Name" name="name" required maxLength={200} />
      <Field label="Price" name="price" type="number" required min={0.01} step="0.01" />
      <Field label="Currency" name="currency" defaultValue="usd" pattern="[A-Za-z]{3}" size={4} />
    </div>
  );
}

type Change = { name?: string; priceCents?: number; active?: boolean };

function Items<T extends Plan | Product>({ kind, items, detail, update }: { kind: string; items: T[]; detail: (item: T) => string; update: (id: string, change: Change) => Promise<unknown> }) {
  const canWrite = useCan('developer');
  const [editing, setEditing] = useState<string>();
  if (items.length === 0) return <p class="muted">No {kind}s on sale.</p>;
  const save = async (id: string, d: FormData) => {
    await update(id, { name: text(d, 'name'), priceCents: cents(d, 'price') });
    setEditing(undefined);
  };
  return (
    <Table caption={`${kind[0]!.toUpperCase()}${kind.slice(1)}s on sale`} columns={['Name', 'Price', 'Details', 'Created', ...(canWrite ? ['Actions'] : [])]}>
      {items.map((item) => (
        <tr key={item.id}>
          <td>{item.name}</td>
          <td>{money(item.priceCents, item.currency)}</td>
          <td>{detail(item)}</td>
          <td>{when(item.createdAt)}</td>
          {canWrite && (
            <td>
              {editing === item.id ? (
                <Form label={`Change ${item.name}`} button="Save" inline submit={(d) => save(item.id, d)}>
                  <Field label="Name" name="name" defaultValue={item.name} maxLength={200} />
                  <Field label="Price" name="price" type="number" min={0.01} step="0.01" defaultValue={String(item.priceCents / 100)} />
                </Form>
              ) : (
                <button type="button" aria-label={`Change ${item.name}`} onClick={() => setEditing(item.id)}>
                  Change
                </button>
              )}
              <Action label={`Take ${item.name} off sale`} confirm={`Take ${item.name} off sale? Existing ${kind === 'plan' ? 'subscriptions' : 'orders'} stay.`} act={() => update(item.id, { active: false })}>
                Take off sale
              </Action>
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}
