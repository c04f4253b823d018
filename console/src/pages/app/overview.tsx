// An app's overview tab: its URLs, region and migration version, the account's usage against its plan, and its
// service keys (created and shown once, listed by their hint, revoked).
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { account, apps, serviceKeys, type AppDetails, type Billing } from '../../api.ts';
import { useCan } from '../../session.ts';
import { Field, Form, Loading, RowAction, Secret, Table, text, useLoad, when } from '../../ui.tsx';

export default function OverviewTab({ app }: AppTabProps) {
  return (
    <>
      <Overview app={app} />
      <Usage />
      <ServiceKeys appId={app.app_id} />
    </>
  );
}

function Overview({ app }: { app: AppDetails }) {
  const api = `${location.origin}/v1/${app.app_id}`;
  const rows: Array<[string, string]> = [
    ['App ID', app.app_id],
    ['URL', app.url],
    ['Data API', `${api}/<table>`],
    ['End-user auth', `${api}/auth`],
    ['Functions', `${api}/fn/<name>`],
    ['Region', app.region],
    ['Migration version', String(app.migration_version)],
    ['Created', when(app.created_at)],
  ];
  return (
    <>
      <h2>Overview</h2>
      <dl class="facts" aria-label="Overview">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}

const meterRows = (b: Billing) => Object.entries(b.usage).map(([meter, used]) => ({ meter, used, limit: b.limits[meter] ?? null }));

/** The plan's allowances are the account's, summed over its apps: the API has no usage of one app yet. */
function Usage() {
  const billing = useLoad(account.billing, []);
  return (
    <>
      <h2>Usage</h2>
      <Loading loaded={billing}>
        {(b) => (
          <>
            <p class="muted">
              Plan {b.plan} ({b.status}); usage of the whole account this month, all apps together.
            </p>
            <Table caption="Usage against the plan" columns={['Meter', 'Used', 'Allowance']}>
              {meterRows(b).map((m) => (
                <tr key={m.meter}>
                  <td>{m.meter.replaceAll('_', ' ')}</td>
                  <td>{m.used.toLocaleString()}</td>
                  <td>{m.limit === null ? 'unlimited' : m.limit.toLocaleString()}</td>
                </tr>
              ))}
            </Table>
          </>
        )}
      </Loading>
    </>
  );
}

function ServiceKeys({ appId }: { appId: string }) {
  const keys = useLoad(() => serviceKeys.list(appId), [appId]);
  const canWrite = useCan('developer');
  const [created, setCreated] = useState<string>();
  const create = async (d: FormData) => {
    setCreated((await serviceKeys.create(appId, text(d, 'name') ?? 'default')).key);
    await keys.reload();
  };
  return (
    <>
      <h2>Service keys</h2>
      {canWrite && (
        <Form label="Create a service key" button="Create key" inline submit={create}>
          <Field label="Key name" name="name" required maxLength={100} />
        </Form>
      )}
      {created && <Secret label="New service key" value={created} onDone={() => setCreated(undefined)} />}
      <Loading loaded={keys}>
        {(list) => (
          <Table caption="Service keys" columns={['Name', 'Key', 'Created', ...(canWrite ? ['Actions'] : [])]}>
            {list.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.hint}…</code>
                </td>
                <td>{when(k.created_at)}</td>
                {canWrite && (
                  <RowAction label={`Revoke ${k.name}`} confirm={`Revoke the key ${k.name}? Clients using it stop working at once.`} act={() => serviceKeys.revoke(appId, k.id).then(keys.reload)}>
                    Revoke
                  </RowAction>
                )}
              </tr>
            ))}
          </Table>
        )}
      </Loading>
    </>
  );
}
