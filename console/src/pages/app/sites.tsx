// An app's Sites tab: its deployments (state, live, URL), a zip deployed from the browser (create, PUT to the signed
// URL, start, then its state polled until it settles), the live site opened, a rollback to an earlier deployment
// whose files are kept (promote), cancel and delete; the site's public variables.
import { useEffect, useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { canRollBackTo, cancellable, FRAMEWORKS, settled, sites, type Deployment, type Framework } from '../../api/sites.ts';
import { useCan } from '../../session.ts';
import { Action, bytes, Field, Form, Loading, messageOf, Select, Table, text, TextArea, useLoad, when } from '../../ui.tsx';
import { fileOf, pairLines } from './runtime-ui.tsx';

const POLL_MS = 1000;

export default function SitesTab({ app }: AppTabProps) {
  const appId = app.app_id;
  const list = useLoad(() => sites.list(appId), [appId]);
  const canWrite = useCan('developer');
  const [building, setBuilding] = useState<Deployment>();
  const live = list.data?.find((d) => d.live);
  return (
    <>
      <h2>Sites</h2>
      {live?.url ? (
        <p>
          Live site:{' '}
          <a href={live.url} target="_blank" rel="noopener">
            Open the live site
          </a>{' '}
          <code>{live.url}</code>
        </p>
      ) : (
        <p class="muted">No live site yet.</p>
      )}
      {canWrite && <UploadForm appId={appId} started={setBuilding} />}
      {building && <Progress key={building.id} appId={appId} first={building} changed={list.reload} />}
      <h3>Deployments</h3>
      <Loading loaded={list}>{(rows) => <Deployments appId={appId} rows={rows} canWrite={canWrite} changed={list.reload} />}</Loading>
      <Environment appId={appId} canWrite={canWrite} />
    </>
  );
}

function UploadForm({ appId, started }: { appId: string; started: (d: Deployment) => void }) {
  const deploy = async (d: FormData) => {
    const zip = fileOf(d, 'zip');
    if (!zip) throw new Error('Choose a zip of the built site.');
    started(await sites.deployZip(appId, (text(d, 'framework') ?? 'static') as Framework, zip));
  };
  return (
    <Form label="Deploy a site" button="Deploy zip" submit={deploy}>
      <div class="row">
        <Field label="Site zip (index.html at its root or in one folder)" type="file" name="zip" accept=".zip,application/zip" required />
        <Select label="Framework" name="framework" options={FRAMEWORKS} initial="static" />
      </div>
    </Form>
  );
}

/** The deployment's state read every second until it settles; the list is read again at each change of state. */
function Progress({ appId, first, changed }: { appId: string; first: Deployment; changed: () => Promise<void> }) {
  const [d, setD] = useState(first);
  const [failed, setFailed] = useState<string>();
  useEffect(() => {
    if (settled(d.status)) return;
    const timer = setTimeout(() => {
      sites.get(appId, d.id).then(setD, (err: unknown) => setFailed(messageOf(err)));
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [appId, d]);
  useEffect(() => void changed(), [d.status]);
  return (
    <p role="status" aria-label="Deployment progress">
      Deployment <code>{d.id.slice(0, 8)}</code>: <strong>{d.status}</strong>
      {d.error && <span class="error"> {d.error}</span>}
      {failed && <span role="alert" class="error"> {failed}</span>}
    </p>
  );
}

function Deployments({ appId, rows, canWrite, changed }: { appId: string; rows: Deployment[]; canWrite: boolean; changed: () => Promise<void> }) {
  if (rows.length === 0) return <p class="muted">No deployments yet.</p>;
  return (
    <Table caption="Deployments" columns={['Created', 'State', 'Live', 'URL', 'Size', ...(canWrite ? ['Actions'] : [])]}>
      {rows.map((d) => (
        <tr key={d.id} data-deployment={d.id}>
          <td>{when(d.created_at)}</td>
          <td>
            {d.status}
            {d.error && <span class="error"> {d.error}</span>}
          </td>
          <td>{d.live ? <span class="badge">live</span> : ''}</td>
          <td>{d.url ? <a href={d.url} target="_blank" rel="noopener">{d.url}</a> : <span class="muted">{d.status === 'READY' ? 'files not kept' : '—'}</span>}</td>
          <td>{d.size_bytes === null ? '—' : `${bytes(d.size_bytes)}${d.file_count === null ? '' : `, ${d.file_count} file${d.file_count === 1 ? '' : 's'}`}`}</td>
          {canWrite && <DeploymentActions appId={appId} d={d} changed={changed} />}
        </tr>
      ))}
    </Table>
  );
}

function DeploymentActions({ appId, d, changed }: { appId: string; d: Deployment; changed: () => Promise<void> }) {
  const name = `deployment ${d.id.slice(0, 8)} of ${when(d.created_at)}`;
  return (
    <td>
      <span class="row">
        {canRollBackTo(d) && (
          <Action label={`Roll back to ${name}`} confirm={`Make ${name} the live site?`} act={() => sites.promote(appId, d.id).then(changed)}>
            Roll back
          </Action>
        )}
        {cancellable(d.status) && (
          <Action label={`Cancel ${name}`} act={() => sites.cancel(appId, d.id).then(changed)}>
            Cancel
          </Action>
        )}
        <Action danger label={`Delete ${name}`} confirm={d.live ? `Delete the live ${name}? The site goes offline until another is made live.` : `Delete ${name}?`} act={() => sites.remove(appId, d.id).then(changed)}>
          Delete
        </Action>
      </span>
    </td>
  );
}

/** frontend_env_get lists names only: the values are public to visitors but never read back, so a change replaces the set. */
function Environment({ appId, canWrite }: { appId: string; canWrite: boolean }) {
  const keys = useLoad(() => sites.envKeys(appId), [appId]);
  const replace = async (d: FormData) => {
    await sites.setEnv(appId, pairLines(text(d, 'env'), '=', 'variable'));
    await keys.reload();
  };
  return (
    <>
      <h3>Environment</h3>
      <Loading loaded={keys}>
        {(k) => (k.length === 0 ? <p class="muted">No site variables.</p> : <p>Variables in window.__ENV__: {k.map((n) => <code key={n}>{n} </code>)}</p>)}
      </Loading>
      {canWrite && (
        <Form label="Replace the site's variables" button="Replace variables" submit={replace}>
          <p class="muted">Every visitor can read these values: never put a secret here. Saving replaces every variable (empty clears them).</p>
          <TextArea label="Variables (one per line, NAME=value)" name="env" rows={3} />
        </Form>
      )}
    </>
  );
}
