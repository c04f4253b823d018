// An app's Integrations tab: the vendor's toolkits (the curated ones, or a search of its catalog) and the ones the
// app enables for its end users, the connections those users made (the whole app's), and the execution log.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { EXECUTIONS_PAGE, integrations, type IntegrationsConfig } from '../../api/integrations.ts';
import { Pager, useCursors } from '../../pager.tsx';
import { useCan } from '../../session.ts';
import { Action, Field, Form, Loading, RowAction, Table, text, useLoad, when, type Loaded } from '../../ui.tsx';

export default function IntegrationsTab({ app }: AppTabProps) {
  const config = useLoad(() => integrations.config(app.app_id), [app.app_id]);
  return (
    <>
      <h2>Integrations</h2>
      <Enabled appId={app.app_id} config={config} />
      <Available appId={app.app_id} configured={config.reload} />
      <Connections appId={app.app_id} />
      <Executions appId={app.app_id} />
    </>
  );
}

const list = (d: FormData, name: string): string[] | undefined => text(d, name)?.split(/[\s,]+/).filter(Boolean);

function Enabled({ appId, config }: { appId: string; config: Loaded<IntegrationsConfig> }) {
  const canWrite = useCan('developer');
  const configure = async (d: FormData) => {
    await integrations.configure(appId, { toolkit: text(d, 'toolkit')!, displayName: text(d, 'displayName')!, scopes: list(d, 'scopes'), redirectOrigins: list(d, 'redirectOrigins') });
    await config.reload();
  };
  return (
    <section aria-labelledby="int-enabled">
      <h3 id="int-enabled">Enabled toolkits</h3>
      <Loading loaded={config}>
        {(c) => (
          <>
            <p class="muted">
              End users connect from {[c.appOrigin, ...c.redirectOrigins].join(', ')}.
            </p>
            {c.integrations.length === 0 ? (
              <p class="muted">No toolkit enabled yet.</p>
            ) : (
              <Table caption="Enabled toolkits" columns={['Toolkit', 'Display name', 'Scopes', 'Updated', ...(canWrite ? ['Actions'] : [])]}>
                {c.integrations.map((t) => (
                  <tr key={t.toolkit}>
                    <td>{t.toolkit}</td>
                    <td>{t.displayName}</td>
                    <td>{t.scopes?.join(', ') ?? 'vendor-managed'}</td>
                    <td>{when(t.updatedAt)}</td>
                    {canWrite && (
                      <RowAction label={`Disable ${t.toolkit}`} confirm={`Disable ${t.displayName}? Connections stay but cannot run until it is enabled again.`} act={() => integrations.disable(appId, t.toolkit).then(config.reload)}>
                        Disable
                      </RowAction>
                    )}
                  </tr>
                ))}
              </Table>
            )}
          </>
        )}
      </Loading>
      {canWrite && (
        <Form label="Configure a toolkit" button="Save toolkit" submit={configure}>
          <div class="row">
            <Field label="Toolkit slug" name="toolkit" required pattern="[a-z0-9_\-]{1,64}" />
            <Field label="Display name" name="displayName" required maxLength={100} />
          </div>
          <Field label="Scopes (comma-separated; empty: vendor-managed)" name="scopes" />
          <Field label="Redirect origins besides the app's (comma-separated; empty: unchanged)" name="redirectOrigins" />
        </Form>
      )}
    </section>
  );
}

function Available({ appId, configured }: { appId: string; configured: () => Promise<void> }) {
  const [search, setSearch] = useState<string>();
  const toolkits = useLoad(() => integrations.available(appId, search), [appId, search]);
  const canWrite = useCan('developer');
  const enable = async (toolkit: string, displayName: string) => {
    await integrations.configure(appId, { toolkit, displayName });
    await Promise.all([configured(), toolkits.reload()]);
  };
  return (
    <section aria-labelledby="int-available">
      <h3 id="int-available">Available toolkits</h3>
      <Form label="Search the catalog" button="Search" inline submit={async (d) => setSearch(text(d, 'search'))}>
        <Field label="Search (empty: the curated ones)" name="search" type="search" maxLength={100} />
      </Form>
      <Loading loaded={toolkits}>
        {(all) => (
          <Table caption="Available toolkits" columns={['Toolkit', 'Name', 'Description', 'Enabled', ...(canWrite ? ['Actions'] : [])]}>
            {all.map((t) => (
              <tr key={t.toolkit}>
                <td>{t.toolkit}</td>
                <td>{t.displayName}</td>
                <td>{t.description}</td>
                <td>{t.enabled ? 'yes' : 'no'}</td>
                {canWrite && <td>{!t.enabled && <Action label={`Enable ${t.toolkit}`} act={() => enable(t.toolkit, t.displayName)}>Enable</Action>}</td>}
              </tr>
            ))}
          </Table>
        )}
      </Loading>
    </section>
  );
}

function Connections({ appId }: { appId: string }) {
  const connections = useLoad(() => integrations.connections(appId), [appId]);
  const canWrite = useCan('developer');
  return (
    <section aria-labelledby="int-connections">
      <h3 id="int-connections">Connections</h3>
      <Loading loaded={connections}>
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No end user has connected an account yet.</p>
          ) : (
            <Table caption="Connections" columns={['Toolkit', 'End user', 'Status', 'Connected', ...(canWrite ? ['Actions'] : [])]}>
              {all.map((c) => (
                <tr key={c.id}>
                  <td>{c.toolkit}</td>
                  <td>
                    <code>{c.userId}</code>
                  </td>
                  <td>{c.status}</td>
                  <td>{when(c.createdAt)}</td>
                  {canWrite && (
                    <RowAction label={`Disconnect ${c.toolkit} of ${c.userId}`} confirm="Disconnect this account and revoke it at the vendor?" act={() => integrations.disconnect(appId, c.id).then(connections.reload)}>
                      Disconnect
                    </RowAction>
                  )}
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
    </section>
  );
}

function Executions({ appId }: { appId: string }) {
  const cursors = useCursors();
  const log = useLoad(() => integrations.executions(appId, cursors.before), [appId, cursors.before]);
  // A full page may have more after it: the next page starts before its last execution.
  const next = log.data?.length === EXECUTIONS_PAGE ? log.data.at(-1)!.id : null;
  return (
    <section aria-labelledby="int-executions">
      <h3 id="int-executions">Execution log</h3>
      <Loading loaded={log}>
        {(rows) =>
          rows.length === 0 ? (
            <p class="muted">No executions.</p>
          ) : (
            <Table caption="Executions" columns={['Time', 'End user', 'Tool', 'Result', 'Duration']}>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td>{when(e.createdAt)}</td>
                  <td>
                    <code>{e.userId}</code>
                  </td>
                  <td>{e.toolName}</td>
                  <td>{e.successful ? 'ok' : <span class="error">{e.error ?? 'failed'}</span>}</td>
                  <td>{e.durationMs} ms</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      <Pager label="executions" cursors={cursors} next={next} />
    </section>
  );
}
