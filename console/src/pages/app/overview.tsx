// An app's overview tab: its URLs, region and migration version, the account's usage against its plan, its service
// keys (created and shown once, listed by their hint, revoked) and its publishable keys (public: listed whole, copied).
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { publishableKeys, serviceKeys, type AppDetails } from '../../api.ts';
import { billing } from '../../api/billing.ts';
import { DailyUsage } from '../billing.tsx';
import { UsageTable } from '../../usage.tsx';
import { Facts } from '../../facts.tsx';
import { useCan } from '../../session.ts';
import { Copy, Field, Form, Loading, RowAction, Secret, Table, text, useLoad, when } from '../../ui.tsx';

export default function OverviewTab({ app }: AppTabProps) {
  return (
    <>
      <Overview app={app} />
      <Usage appId={app.app_id} />
      <ServiceKeys appId={app.app_id} />
      <PublishableKeys appId={app.app_id} />
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
      <Facts label="Overview" facts={rows} />
    </>
  );
}

/** The app's share of the account's usage, against the allowances of the account's plan (plans are per account). */
function Usage({ appId }: { appId: string }) {
  const share = useLoad(() => billing.get(appId), [appId]);
  return (
    <>
      <h2>Usage</h2>
      <Loading loaded={share}>
        {(b) => (
          <>
            <p class="muted">
              This app's usage this period against the {b.plan} plan's allowances, which the account's apps share.
            </p>
            <UsageTable billing={b} caption="Usage against the plan" />
          </>
        )}
      </Loading>
      <DailyUsage appId={appId} />
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

/** The keys a browser sends (supabase-js's second argument): not secrets, so shown whole with a copy button. */
function PublishableKeys({ appId }: { appId: string }) {
  const keys = useLoad(() => publishableKeys.list(appId), [appId]);
  const canWrite = useCan('developer');
  const create = async (d: FormData) => {
    await publishableKeys.create(appId, text(d, 'name') ?? 'default');
    await keys.reload();
  };
  return (
    <>
      <h2>Publishable keys</h2>
      <p class="muted">
        Public keys for browsers and apps: supabase-js takes one as <code>{`createClient('${location.origin}/v1/${appId}', '<publishable key>')`}</code>.
      </p>
      {canWrite && (
        <Form label="Create a publishable key" button="Create publishable key" inline submit={create}>
          <Field label="Name of the publishable key" name="name" required maxLength={100} />
        </Form>
      )}
      <Loading loaded={keys}>
        {(list) => (
          <Table caption="Publishable keys" columns={['Name', 'Key', 'Created', 'Copy', ...(canWrite ? ['Actions'] : [])]}>
            {list.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.key}</code>
                </td>
                <td>{when(k.created_at)}</td>
                <td>
                  <Copy label={`Copy publishable key ${k.name}`} value={k.key} />
                </td>
                {canWrite && (
                  <RowAction
                    label={`Revoke publishable key ${k.name}`}
                    confirm={`Revoke the publishable key ${k.name}? Browsers and apps sending it get 401 from then on.`}
                    act={() => publishableKeys.revoke(appId, k.id).then(keys.reload)}
                  >
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
