// The outbox: the webhooks that receive the person's executed actions, one per capability, each signed with its
// secret (X-Svc-Signature: sha256=<HMAC of the raw body>); and the deliveries, by status and capability, with their
// attempts and last error. A dead one (it gave up) is sent again with Redeliver. The API never returns a secret: one
// left empty here is made in the browser and shown once, to give the receiver.
import { useState } from 'preact/hooks';
import { DELIVERY_STATUSES, outbox, type Delivery } from '../../api/substrate.ts';
import type { TabProps } from '../../tabs.tsx';
import { Action, Field, Form, Loading, RowAction, Secret, Select, Table, text, useLoad, when } from '../../ui.tsx';
import { Filters } from './parts.tsx';

const CAPABILITIES = [
  'record_decision',
  'record_commitment',
  'record_learning',
  'record_principle',
  'supersede_decision',
  'retire_principle',
  'upsert_entity',
  'update_entity',
  'patch_entity',
  'merge_entities',
  'delete_entity',
  'upsert_source_artifact',
  'send_email_draft',
  'revert_action',
  'bulk_revert_actions',
];

/** 32 random bytes as hex: a signing secret nobody chose. */
function newSecret(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
}

export default function Outbox(_: TabProps) {
  return (
    <section aria-labelledby="outbox-title">
      <h2 id="outbox-title">Outbox</h2>
      <Targets />
      <Deliveries />
    </section>
  );
}

function Targets() {
  const targets = useLoad(outbox.targets, []);
  const [secret, setSecret] = useState<string>();
  const save = async (data: FormData) => {
    const typed = text(data, 'signing_secret');
    const signing = typed ?? newSecret();
    await outbox.setTarget(text(data, 'capability') ?? '', {
      webhook_url: text(data, 'webhook_url') ?? '',
      signing_secret: signing,
      source_app_id: text(data, 'source_app_id'),
    });
    if (!typed) setSecret(signing);
    await targets.reload();
  };
  return (
    <>
      <h3>Targets</h3>
      <Loading loaded={targets}>
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No targets: executed actions go nowhere.</p>
          ) : (
            <Table caption="Outbox targets" columns={['Capability', 'Webhook', 'Only from app', 'Updated', '']}>
              {all.map((t) => (
                <tr key={t.capability}>
                  <td>
                    <code>{t.capability}</code>
                  </td>
                  <td class="clip">{t.webhook_url}</td>
                  <td>{t.source_app_id ?? 'any'}</td>
                  <td>{when(t.updated_at)}</td>
                  <RowAction
                    label={`Delete the target of ${t.capability}`}
                    confirm={`Delete the webhook of ${t.capability}? Its pending deliveries become dead.`}
                    act={async () => (await outbox.removeTarget(t.capability), await targets.reload())}
                  >
                    Delete
                  </RowAction>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      {secret && <Secret label="Signing secret" value={secret} onDone={() => setSecret(undefined)} />}
      <div class="row-form">
        <h4>Set a target</h4>
        <Form label="Set a target" button="Set target" submit={save}>
          <Field label="Capability" name="capability" required list="outbox-capabilities" maxLength={100} />
          <datalist id="outbox-capabilities">
            {CAPABILITIES.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
          <Field label="Webhook URL" name="webhook_url" type="url" required maxLength={2000} />
          <Field
            label="Signing secret (empty: one is made and shown once)"
            name="signing_secret"
            type="password"
            minLength={8}
            maxLength={500}
            autocomplete="off"
          />
          <Field label="Only actions from app (optional)" name="source_app_id" maxLength={100} />
        </Form>
      </div>
    </>
  );
}

function Deliveries() {
  const [ask, setAsk] = useState<{ status?: string | undefined; capability?: string | undefined }>({});
  const list = useLoad(() => outbox.deliveries(ask.status, ask.capability), [ask.status, ask.capability]);
  const [news, setNews] = useState('');
  const redeliver = async (d: Delivery) => {
    const again = await outbox.redeliver(d.id);
    setNews(`Delivery ${again.id} is ${again.status} again.`);
    await list.reload();
  };
  return (
    <>
      <h3>Deliveries</h3>
      <Filters
        label="Filter deliveries"
        apply={(data) => setAsk({ status: data.get('status') === 'all' ? undefined : (data.get('status') as string), capability: text(data, 'capability') })}
      >
        <Select label="Status" name="status" options={['all', ...DELIVERY_STATUSES]} initial="all" />
        <Field label="Capability" name="capability" list="outbox-capabilities" maxLength={100} />
      </Filters>
      <div class="row">
        <Action act={list.reload}>Refresh</Action>
        <p role="status" class="notice">
          {news}
        </p>
      </div>
      <Loading loaded={list}>
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No deliveries match.</p>
          ) : (
            <Table caption="Outbox deliveries" columns={['Delivery', 'Capability', 'Status', 'Attempts', 'Last error', 'Created', 'Delivered', '']}>
              {all.map((d) => (
                <tr key={d.id} data-delivery={d.id}>
                  <td>
                    <code>{d.id}</code>
                    <div class="muted small">action {d.action_id}</div>
                  </td>
                  <td>
                    <code>{d.capability}</code>
                  </td>
                  <td>{d.status === 'dead' ? 'dead (gave up)' : d.status}</td>
                  <td>{d.attempts}</td>
                  <td class="clip">{d.last_error ?? (d.last_status ? `answered ${d.last_status}` : '—')}</td>
                  <td>{when(d.created_at)}</td>
                  <td>{d.delivered_at ? when(d.delivered_at) : '—'}</td>
                  <td>
                    {d.status === 'dead' && (
                      <Action label={`Redeliver ${d.id}`} act={() => redeliver(d)}>
                        Redeliver
                      </Action>
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
    </>
  );
}
