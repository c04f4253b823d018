// The table editor (#/apps/<id>/data/<table>): the app's tables, and the one the route names (the first when none)
// paged, sorted, filtered and edited through the data API, as the service role; its changes live when it streams.
import type { AppTabProps } from './tabs.ts';
import { schema } from '../../api/schema.ts';
import { href } from '../../router.ts';
import { Loading, useLoad } from '../../ui.tsx';
import { RowsGrid } from './data-grid.tsx';
import { LiveChanges } from './data-live.tsx';

export default function DataTab({ app, rest }: AppTabProps) {
  const view = useLoad(() => schema.get(app.app_id), [app.app_id]);
  return (
    <>
      <h2>Table editor</h2>
      <Loading loaded={view}>
        {(v) => {
          const names = Object.keys(v.tables);
          if (names.length === 0) return <p class="muted">No tables yet: create some on the Schema tab.</p>;
          const current = rest[0] && rest[0] in v.tables ? rest[0] : names[0]!;
          return (
            <div class="editor">
              <nav aria-label="Tables" class="table-list">
                <ul>
                  {names.map((n) => (
                    <li key={n}>
                      <a href={href('apps', app.app_id, 'data', n)} aria-current={n === current ? 'page' : undefined}>
                        {n}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <section aria-labelledby="rows-title" class="rows">
                <h3 id="rows-title">{current}</h3>
                <LiveChanges key={current} appId={app.app_id} name={current} table={v.tables[current]!} />
                {/* Keyed by the table: another table starts with its own order, filters and first page. */}
                <RowsGrid key={current} appId={app.app_id} name={current} table={v.tables[current]!} />
              </section>
            </div>
          );
        }}
      </Loading>
    </>
  );
}
