// An app's Functions tab (#/apps/<id>/functions/<name>): the list with a form deploying a new function, and one
// function's page (its code, a new version, variables, a test invocation, logs, lifetime metrics, delete).
import type { AppTabProps } from './tabs.ts';
import { functions } from '../../api/functions.ts';
import { href } from '../../router.ts';
import { useCan } from '../../session.ts';
import { Loading, Table, useLoad, when } from '../../ui.tsx';
import { DeployForm } from './functions/deploy.tsx';
import { FunctionPage } from './functions/page.tsx';

export default function FunctionsTab({ app, rest }: AppTabProps) {
  return rest[0] ? <FunctionPage appId={app.app_id} name={rest[0]} /> : <FunctionList appId={app.app_id} />;
}

const open = (appId: string, name: string) => {
  location.hash = href('apps', appId, 'functions', name);
};

function FunctionList({ appId }: { appId: string }) {
  const list = useLoad(() => functions.list(appId), [appId]);
  const canDeploy = useCan('developer');
  return (
    <>
      <h2>Functions</h2>
      <Loading loaded={list}>
        {(fns) =>
          fns.length === 0 ? (
            <p class="muted">No functions yet.</p>
          ) : (
            <Table caption="Functions" columns={['Name', 'Trigger', 'Variables', 'Updated']}>
              {fns.map((f) => (
                <tr key={f.id}>
                  <td>
                    <a href={href('apps', appId, 'functions', f.name)}>{f.name}</a>
                  </td>
                  <td>{f.trigger.type}</td>
                  <td>{f.env_var_names.length}</td>
                  <td>{when(f.updated_at)}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      {canDeploy && (
        <>
          <h3>New function</h3>
          <DeployForm appId={appId} onDeployed={(name) => open(appId, name)} />
        </>
      )}
    </>
  );
}
