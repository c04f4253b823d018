// One table's rows, 50 at a time through the data API (never the whole table): sorted by a column header's button
// (order=col.asc|desc; the primary key by default, so pages are stable), filtered in the API's dialect, paged first,
// previous, next and last. Totals are `count=estimated` (exact up to 1,000, the planner's estimate past it); the last
// page asks for an exact count first, since an estimate cannot say where it starts.
import { useState } from 'preact/hooks';
import { ApiError } from '../../api.ts';
import { data, keyFilters, pageQuery, type Filter, type Order, type Row } from '../../api/data.ts';
import { primaryKey, type TableView } from '../../api/schema.ts';
import { useCan } from '../../session.ts';
import { Action, Loading, useLoad } from '../../ui.tsx';
import { Filters } from './data-filters.tsx';
import { RowForm, cellText } from './data-row-form.tsx';

export const PAGE_SIZE = 50;
/** count=estimated is exact up to here (the data API's read cap). */
const EXACT_UP_TO = 1000;

interface Shown {
  rows: Row[];
  total: number | null;
  index: number;
  exact: boolean;
}

export function RowsGrid({ appId, name, table }: { appId: string; name: string; table: TableView }) {
  const key = primaryKey(table);
  const columns = Object.keys(table.columns);
  const canWrite = useCan('developer');
  const [filters, setFilters] = useState<Filter[]>([]);
  const [order, setOrder] = useState<Order | undefined>(key[0] ? { column: key[0], dir: 'asc' } : undefined);
  const [target, setTarget] = useState(0);
  const [exact, setExact] = useState(false);
  const [editing, setEditing] = useState<Row | 'new'>();

  // The primary key breaks ties, so offsets page through a stable order whatever column sorts.
  const orders: Order[] = order ? [order, ...key.filter((k) => k !== order.column).map((column) => ({ column, dir: 'asc' as const }))] : [];
  const read = async (count: 'exact' | 'estimated'): Promise<Shown> => {
    const page = await data.page(appId, name, { limit: PAGE_SIZE, offset: target * PAGE_SIZE, order: orders, filters, count });
    return { ...page, index: target, exact: count === 'exact' || (page.total ?? 0) <= EXACT_UP_TO };
  };
  /**
   * An offset past the counted rows is 416. Past an estimate lower than the real count the rows are there, so the
   * page is read again counting exactly; past the exact count too, the page is empty.
   */
  const load = async (): Promise<Shown> => {
    for (const count of exact ? (['exact'] as const) : (['estimated', 'exact'] as const)) {
      try {
        return await read(count);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 416)) throw err;
      }
    }
    return { rows: [], total: null, index: target, exact };
  };
  /** The last page's offset needs the exact count: one row counted first, then that page (exact from then on). */
  const goLast = async () => {
    const counted = await data.page(appId, name, { limit: 1, offset: 0, filters, count: 'exact' });
    setExact(true);
    setTarget(Math.max(0, Math.ceil((counted.total ?? 0) / PAGE_SIZE) - 1));
  };
  const shown = useLoad(load, [appId, name, JSON.stringify([filters, order]), target, exact]);
  const refilter = (f: Filter[]) => {
    setFilters(f);
    setTarget(0);
    setExact(false);
  };
  const sort = (column: string) => {
    setOrder(order?.column === column && order.dir === 'asc' ? { column, dir: 'desc' } : { column, dir: 'asc' });
    setTarget(0);
  };
  const save = async (changes: Row) => {
    if (editing === 'new') await data.insert(appId, name, changes);
    else if (editing && Object.keys(changes).length) await data.update(appId, name, keyFilters(editing, key), changes);
    setEditing(undefined);
    await shown.reload();
  };

  return (
    <>
      <Filters columns={columns} filters={filters} onChange={refilter} />
      <p class="muted">
        Query: <code>{`GET /v1/${appId}/${name}?${pageQuery({ limit: PAGE_SIZE, offset: target * PAGE_SIZE, order: orders, filters })}`}</code>
      </p>
      {canWrite && !editing && (
        <button type="button" onClick={() => setEditing('new')}>
          Insert row
        </button>
      )}
      {editing && <RowForm table={table} name={name} row={editing === 'new' ? undefined : editing} save={save} cancel={() => setEditing(undefined)} />}
      {canWrite && key.length === 0 && <p class="muted">This table has no primary key: its rows cannot be edited or deleted here.</p>}
      <Loading loaded={shown}>
        {(s) => (
          <>
            <Pager shown={s} go={setTarget} last={goLast} />
            <div class="grid">
              <table>
                <caption class="visually-hidden">Rows of {name}</caption>
                <thead>
                  <tr>
                    {columns.map((c) => (
                      <SortHeader key={c} column={c} order={order} sort={sort} />
                    ))}
                    {canWrite && key.length > 0 && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {s.rows.map((row) => (
                    <tr key={key.map((k) => cellText(row[k])).join('\u0000') || JSON.stringify(row)}>
                      {columns.map((c) => (
                        <td key={c}>{row[c] === null ? <span class="muted">NULL</span> : cellText(row[c])}</td>
                      ))}
                      {canWrite && key.length > 0 && (
                        <RowActions label={key.map((k) => `${k} ${cellText(row[k])}`).join(', ')} edit={() => setEditing(row)} remove={() => data.remove(appId, name, keyFilters(row, key)).then(shown.reload)} />
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {s.rows.length === 0 && <p class="muted">No rows match.</p>}
          </>
        )}
      </Loading>
    </>
  );
}

function SortHeader({ column, order, sort }: { column: string; order?: Order; sort: (c: string) => void }) {
  const dir = order?.column === column ? order.dir : undefined;
  return (
    <th scope="col" aria-sort={dir === 'asc' ? 'ascending' : dir === 'desc' ? 'descending' : 'none'}>
      <button type="button" class="link" onClick={() => sort(column)}>
        {column}
        {dir === 'asc' ? ' ▲' : dir === 'desc' ? ' ▼' : ''}
      </button>
    </th>
  );
}

function RowActions({ label, edit, remove }: { label: string; edit: () => void; remove: () => Promise<unknown> }) {
  return (
    <td class="actions">
      <button type="button" aria-label={`Edit row ${label}`} onClick={edit}>
        Edit
      </button>{' '}
      <Action danger label={`Delete row ${label}`} confirm={`Delete the row ${label}? This cannot be undone.`} act={remove}>
        Delete
      </Action>
    </td>
  );
}

function Pager({ shown, go, last }: { shown: Shown; go: (index: number) => void; last: () => Promise<void> }) {
  const pages = shown.total === null ? null : Math.max(1, Math.ceil(shown.total / PAGE_SIZE));
  const first = shown.index * PAGE_SIZE;
  const total = shown.total === null ? '' : ` of ${shown.exact ? '' : 'about '}${shown.total.toLocaleString('en')}`;
  const atEnd = shown.rows.length < PAGE_SIZE || (shown.exact && pages !== null && shown.index >= pages - 1);
  return (
    <nav class="row pager" aria-label="Pages">
      <button type="button" disabled={shown.index === 0} onClick={() => go(0)}>
        First
      </button>
      <button type="button" disabled={shown.index === 0} onClick={() => go(shown.index - 1)}>
        Previous
      </button>
      <span role="status">
        {shown.rows.length ? `Rows ${(first + 1).toLocaleString('en')}–${(first + shown.rows.length).toLocaleString('en')}${total}` : `No rows${total}`}
        {pages !== null && `, page ${shown.index + 1} of ${shown.exact ? '' : 'about '}${pages.toLocaleString('en')}`}
      </span>
      <button type="button" disabled={atEnd} onClick={() => go(shown.index + 1)}>
        Next
      </button>
      {atEnd ? (
        <button type="button" disabled>
          Last
        </button>
      ) : (
        <Action act={last}>Last</Action>
      )}
    </nav>
  );
}
