import { overview } from '../api/settings.ts';
import { useCurrent } from '../context.ts';
import { Page, Show, useLoad, when } from '../ui.tsx';

const COUNTED: Array<[string, string]> = [
  ['contacts', 'Contacts'],
  ['companies', 'Companies'],
  ['deals', 'Deals'],
];

export function Home() {
  const { workspace } = useCurrent();
  const loaded = useLoad(() => overview(workspace.id), [workspace.id]);
  return (
    <Page title={workspace.name}>
      <Show loaded={loaded}>
        {(o) => (
          <>
            <ul class="stats">
              {COUNTED.map(([key, label]) => (
                <li key={key}>
                  <a href={`#/${key}`}>
                    <strong>{o.counts?.[key] ?? 0}</strong> {label}
                  </a>
                </li>
              ))}
              <li>
                <a href="#/settings">
                  <strong>{o.members.length}</strong> Members
                </a>
              </li>
            </ul>
            <h2>Tasks due</h2>
            {o.tasks_due?.length ? (
              <ul class="list">
                {o.tasks_due.map((t) => (
                  <li key={t.id}>
                    {t.title} <span class="muted">{when(t.due_at)}</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="muted">Nothing due this week.</p>
            )}
          </>
        )}
      </Show>
    </Page>
  );
}
