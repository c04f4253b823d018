// One function's page: its record and code (read-only), lifetime metrics and a chart of its invocations, a new
// version, variables, a test invocation, its logs, and delete.
import { functions, type FunctionDetail, type Metrics } from '../../../api/functions.ts';
import { href } from '../../../router.ts';
import { useCan } from '../../../session.ts';
import { Action, Loading, useLoad, when } from '../../../ui.tsx';
import { Facts } from '../../../facts.tsx';
import { InvocationChart } from './chart.tsx';
import { DeployForm, EnvVars } from './deploy.tsx';
import { Invoke } from './invoke.tsx';
import { Logs } from './logs.tsx';

export function FunctionPage({ appId, name }: { appId: string; name: string }) {
  const fn = useLoad(() => functions.get(appId, name), [appId, name]);
  const canWrite = useCan('developer');
  const remove = async () => {
    await functions.remove(appId, name);
    location.hash = href('apps', appId, 'functions');
  };
  return (
    <>
      <p>
        <a href={href('apps', appId, 'functions')}>All functions</a>
      </p>
      <h2>{name}</h2>
      <Loading loaded={fn}>
        {(f) => (
          <>
            <Record fn={f} />
            <h3>Metrics</h3>
            <MetricsFacts m={f.metrics} />
            <InvocationChart appId={appId} name={f.name} version={f.metrics.total_invocations} />
            <h3>Code</h3>
            <pre class="code" aria-label={`Code of ${f.name}`} tabIndex={0}>
              <code>{f.code}</code>
            </pre>
            {canWrite && (
              <>
                <h3>Deploy a new version</h3>
                <DeployForm appId={appId} fn={f} onDeployed={fn.reload} />
              </>
            )}
            <EnvVars appId={appId} fn={f} canWrite={canWrite} changed={fn.reload} />
            {canWrite && <Invoke appId={appId} name={f.name} invoked={fn.reload} />}
            <Logs appId={appId} name={f.name} version={f.metrics.total_invocations} />
            {canWrite && (
              <>
                <h3>Delete</h3>
                <Action danger label={`Delete function ${f.name}`} confirm={`Delete the function ${f.name}, its variables and its logs?`} act={remove}>
                  Delete function
                </Action>
              </>
            )}
          </>
        )}
      </Loading>
    </>
  );
}

function Record({ fn }: { fn: FunctionDetail }) {
  const config = Object.entries(fn.trigger.config).map(([k, v]) => `${k} ${String(v)}`);
  return (
    <Facts
      label={`Function ${fn.name}`}
      facts={[
        ['Trigger', [fn.trigger.type, ...config].join(', ')],
        ['URL', fn.url ?? 'none (not an http function)'],
        ...(fn.next_run_at ? [['Next run', when(fn.next_run_at)] as [string, string]] : []),
        ['Description', fn.description || '—'],
        ['Version', fn.version],
        ['Limits', `${fn.timeoutMs} ms, ${fn.memoryLimitMb} MB`],
        ['Updated', when(fn.updated_at)],
      ]}
    />
  );
}

/** functions_get's aggregates over every invocation the function ever had. */
function MetricsFacts({ m }: { m: Metrics }) {
  return (
    <Facts
      label="Metrics"
      facts={[
        ['Invocations', m.total_invocations.toLocaleString()],
        ['Errors', `${m.error_count.toLocaleString()} (${m.error_rate}%)`],
        ['Average duration', `${m.avg_duration_ms} ms`],
        ['Last invocation', m.last_invocation ? when(m.last_invocation) : 'never'],
      ]}
    />
  );
}
