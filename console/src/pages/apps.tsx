// The account's apps: listed with their state, created in a region (GET /regions), restored when paused for
// inactivity, deleted. A viewer sees the list only.
import { useState } from 'preact/hooks';
import { apps } from '../api.ts';
import { href } from '../router.ts';
import { useCan } from '../session.ts';
import { Action, Form, RowAction, Loading, Secret, Select, Table, Field, text, useLoad, when } from '../ui.tsx';

export function AppsPage() {
  const list = useLoad(apps.list, []);
  const canWrite = useCan('developer');
  const [created, setCreated] = useState<{ name: string; key: string }>();
  return (
    <section aria-labelledby="apps-title">
      <h1 id="apps-title" tabIndex={-1}>
        Apps
      </h1>
      {canWrite && (
        <CreateApp
          onCreated={async (name, key) => {
            setCreated({ name, key });
            await list.reload();
          }}
        />
      )}
      {created && <Secret label={`Service key of ${created.name}`} value={created.key} onDone={() => setCreated(undefined)} />}
      <Loading loaded={list}>
        {(rows) =>
          rows.length === 0 ? (
            <p class="muted">No apps yet.</p>
          ) : (
            <Table caption="Apps" columns={['Name', 'Region', 'State', 'Created', ...(canWrite ? ['Actions'] : [])]}>
              {rows.map((a) => (
                <tr key={a.app_id}>
                  <td>
                    <a href={href('apps', a.app_id)}>{a.name}</a>
                  </td>
                  <td>{a.region}</td>
                  <td>
                    {a.paused_at ? (
                      <>
                        Paused {when(a.paused_at)}{' '}
                        {canWrite && (
                          <Action label={`Restore ${a.name}`} act={() => apps.restore(a.app_id).then(list.reload)}>
                            Restore
                          </Action>
                        )}
                      </>
                    ) : (
                      'Running'
                    )}
                  </td>
                  <td>{when(a.created_at)}</td>
                  {canWrite && (
                    <RowAction label={`Delete ${a.name}`} confirm={`Delete ${a.name} and all of its data? This cannot be undone.`} act={() => apps.remove(a.app_id).then(list.reload)}>
                      Delete
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

function CreateApp({ onCreated }: { onCreated: (name: string, key: string) => Promise<void> }) {
  const submit = async (name: string, region: string) => {
    const app = await apps.create(name, region);
    await onCreated(app.name, app.service_key.key);
  };
  return <NewAppForm label="Create an app" button="Create app" submit={submit} />;
}

/** A new app's name and its region (GET /regions, the default chosen first): creating one, or cloning a template into one. */
export function NewAppForm({ label, button, submit }: { label: string; button: string; submit: (name: string, region: string) => Promise<unknown> }) {
  const regions = useLoad(apps.regions, []);
  return (
    <Loading loaded={regions}>
      {(list) => (
        <Form label={label} button={button} inline submit={(d) => submit(text(d, 'name') ?? '', text(d, 'region') ?? '')}>
          <Field label="Name" name="name" required maxLength={100} />
          <Select label="Region" name="region" options={list.map((r) => r.name)} initial={list.find((r) => r.default)?.name} />
        </Form>
      )}
    </Loading>
  );
}
