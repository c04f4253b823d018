// An app's Functions tab (#/apps/<id>/functions/<name>): the list with a form deploying a new function, and one
// function's page (its code, a new version, variables, a test invocation, logs, lifetime metrics, delete).
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { functions, type FunctionInfo } from '../../api/functions.ts';
import { href } from '../../router.ts';
import { useCan } from '../../session.ts';
import { Action, Loading, Table, useLoad, when } from '../../ui.tsx';
import { DeployForm } from './functions/deploy.tsx';
import { FunctionPage } from './functions/page.tsx';

export default function FunctionsTab({ app, rest }: AppTabProps) {
  return rest[0] ? <FunctionPage appId={app.app_id} name={rest[0]} /> : <FunctionList appId={app.app_id} />;
}

const open = (appId: string, name: string) => {
  location.hash = href('apps', appId, 'functions', name);
};

function FunctionList({ appId }: { appId: string }) {
  const [more, setMore] = useState<FunctionInfo[]>([]);
  /** The next page's cursor; null when the last page is shown. */
  const [next, setNext] = useState<string | null>(null);
  const list = useLoad(async () => {
    const page = await functions.list(appId);
    setMore([]);
    setNext(page.next_before);
    return page.functions;
  }, [appId]);
  const readOn = async (before: string) => {
    const page = await functions.list(appId, before);
    setMore((m) => [...m, ...page.functions]);
    setNext(page.next_before);
  };
  const canDeploy = useCan('developer');
  return (
    <>
      <h2>Functions</h2>
      <Loading loaded={list}>
        {(first) => {
          const fns = [...first, ...more];
          return fns.length === 0 ? (
            <p class="muted">No functions yet.</p>
          ) : (
            <>
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
              {next !== null && <Action act={() => readOn(next)}>More functions</Action>}
            </>
          );
        }}
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
