// Templates: the gallery (GET /v1/templates), one template's manifest (what a clone creates and what the new owner
// must supply) and its clone, whose steps are followed live by polling GET /v1/clones/{id} about every second until
// the clone is ready (a link to the new app and its to-do list) or failed (the step and the reason). A viewer sees no
// Clone form.
import { useEffect, useState } from 'preact/hooks';
import { CLONE_STEPS, templates, type Clone, type CloneStep, type Manifest, type TodoItem } from '../api.ts';
import { Facts } from '../facts.tsx';
import { href } from '../router.ts';
import { useCan } from '../session.ts';
import { Loading, messageOf, Table, useLoad, when } from '../ui.tsx';
import { NewAppForm } from './apps.tsx';

const POLL_MS = 1000;

export function TemplatesPage() {
  const list = useLoad(templates.list, []);
  return (
    <section aria-labelledby="templates-title">
      <h1 id="templates-title" tabIndex={-1}>
        Templates
      </h1>
      <Loading loaded={list}>
        {(rows) =>
          rows.length === 0 ? (
            <p class="muted">No templates yet.</p>
          ) : (
            <Table caption="Templates" columns={['Title', 'Description', 'From', 'Visibility', 'Published']}>
              {rows.map((t) => (
                <tr key={t.app_id}>
                  <td>
                    <a href={href('templates', t.app_id)}>{t.title}</a>
                  </td>
                  <td>{t.description}</td>
                  <td>{t.shipped ? 'shipped with the platform' : 'your account'}</td>
                  <td>{t.visibility}</td>
                  <td>{when(t.published_at)}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
    </section>
  );
}

export function TemplatePage({ appId }: { appId: string }) {
  const manifest = useLoad(() => templates.get(appId), [appId]);
  const canClone = useCan('developer');
  const [clone, setClone] = useState<Clone>();
  return (
    <Loading loaded={manifest}>
      {(m) => (
        <section aria-labelledby="template-title">
          <p>
            <a href={href('templates')}>All templates</a>
          </p>
          <h1 id="template-title" tabIndex={-1}>
            {m.title}
          </h1>
          <p>{m.description}</p>
          <p class="muted">
            Version {m.version}, {m.shipped ? 'shipped with the platform' : 'published by your account'} ({m.visibility}).
          </p>
          {canClone && (
            <>
              <h2>Clone</h2>
              {clone ? <CloneProgress first={clone} /> : <NewAppForm label={`Clone ${m.title}`} button="Clone" submit={async (name, region) => setClone(await templates.clone(m.app_id, name, region))} />}
            </>
          )}
          <Creates manifest={m} />
          <h2>What the new owner must supply</h2>
          <Todo label={`To-do of ${m.title}`} items={m.owner_must_supply} />
        </section>
      )}
    </Loading>
  );
}

/** How many of each: { http: 50, cron: 3 } as '50 http, 3 cron'. */
const counted = (values: string[]): string => {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
};
const listed = (values: string[]): string => (values.length ? values.join(', ') : 'none');

function Creates({ manifest: { creates: c } }: { manifest: Manifest }) {
  const facts: Array<[string, string]> = [
    ['Tables', `${c.tables.length} tables, ${c.migrations} migrations`],
    ['Functions', `${c.functions.length} functions${c.functions.length ? ` (${counted(c.functions.map((f) => f.trigger))})` : ''}`],
    ['Site', c.site ? `${c.site.framework}, ${c.site.files} files` : 'none'],
    ['Integrations', listed(c.integrations)],
    ['Uses (billed to your credits)', listed(c.uses)],
    ['AI', c.ai ? `default model ${c.ai.default_model ?? 'the platform\'s'}` : 'none'],
    ['RAG collections', listed(c.rag_collections.map((r) => `${r.name} (${r.documents} documents)`))],
    ['Billing', listed([...c.billing.plans.map((p) => `plan ${p}`), ...c.billing.products.map((p) => `product ${p}`)])],
    ['Frontend variables', listed(c.frontend_env_keys)],
    ['Substrate link', c.substrate_link ? 'yes' : 'no'],
  ];
  return (
    <>
      <h2>What a clone creates</h2>
      <Facts label="What a clone creates" facts={facts} />
      <h3>Tables</h3>
      <Table caption="Tables a clone creates" columns={['Table', 'Access', 'Seed rows']}>
        {c.tables.map((t) => (
          <tr key={t.name}>
            <td>
              <code>{t.name}</code>
            </td>
            <td>{t.access}</td>
            <td>{t.seed_rows ?? '—'}</td>
          </tr>
        ))}
      </Table>
      <details>
        <summary>The {c.functions.length} functions and their triggers</summary>
        <Table caption="Functions a clone creates" columns={['Function', 'Trigger']}>
          {c.functions.map((f) => (
            <tr key={f.name}>
              <td>
                <code>{f.name}</code>
              </td>
              <td>{[f.trigger, f.schedule, f.event].filter(Boolean).join(' ')}</td>
            </tr>
          ))}
        </Table>
      </details>
    </>
  );
}

function Todo({ label, items }: { label: string; items: TodoItem[] }) {
  if (items.length === 0) return <p class="muted">Nothing: the app works as cloned.</p>;
  return (
    <ul aria-label={label} class="todo">
      {items.map((t, i) => (
        <li key={i}>
          {t.name && (
            <>
              <code>{t.name}</code>
              {t.function && (
                <>
                  {' '}
                  of <code>{t.function}</code>
                </>
              )}
              :{' '}
            </>
          )}
          {t.message} <span class="muted">({t.tool})</span>
        </li>
      ))}
    </ul>
  );
}

type StepState = 'done' | 'running' | 'pending' | 'failed';

function stepState(clone: Clone, step: CloneStep): StepState {
  const i = CLONE_STEPS.indexOf(step);
  if (clone.status === 'ready') return 'done';
  if (clone.status === 'queued') return 'pending';
  const current = CLONE_STEPS.indexOf(clone.status === 'failed' ? (clone.failed_step ?? 'database') : clone.status);
  if (i < current) return 'done';
  if (i > current) return 'pending';
  return clone.status === 'failed' ? 'failed' : 'running';
}

const settled = (c: Clone) => c.status === 'ready' || c.status === 'failed';

function summary(c: Clone): string {
  if (c.status === 'ready') return `${c.name} is ready.`;
  if (c.status === 'failed') return `The clone failed at ${c.failed_step ?? 'a step'}: ${c.error ?? 'no reason given'}`;
  if (c.status === 'queued') return 'Queued…';
  return `Cloning: ${c.status} (step ${CLONE_STEPS.indexOf(c.status) + 1} of ${CLONE_STEPS.length})…`;
}

/** The clone followed live: its status every POLL_MS until ready or failed; a failed poll is shown and tried again. */
function CloneProgress({ first }: { first: Clone }) {
  const [clone, setClone] = useState(first);
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    if (settled(clone)) return;
    const timer = setTimeout(
      () =>
        templates.cloneGet(clone.clone_id).then(
          (c) => (setProblem(undefined), setClone(c)),
          (err) => (setProblem(messageOf(err)), setClone({ ...clone })),
        ),
      POLL_MS,
    );
    return () => clearTimeout(timer);
  }, [clone]);
  return (
    <div class="clone" role="region" aria-label={`Clone ${clone.name}`}>
      <p role="status" aria-live="polite" class={clone.status === 'failed' ? 'error' : undefined}>
        {summary(clone)}
      </p>
      {problem && <p role="alert" class="error">{problem}</p>}
      <ol aria-label="Clone steps" class="steps">
        {CLONE_STEPS.map((step) => {
          const state = stepState(clone, step);
          return (
            <li key={step} data-state={state} aria-current={state === 'running' ? 'step' : undefined}>
              {step}: <span class="state">{state}</span>
            </li>
          );
        })}
      </ol>
      {clone.status === 'ready' && (
        <>
          <p>
            <a href={href('apps', clone.app_id)}>Open {clone.name}</a>
          </p>
          <h3>Before {clone.name} fully works</h3>
          <Todo label={`To-do of ${clone.name}`} items={clone.todo} />
        </>
      )}
    </div>
  );
}
