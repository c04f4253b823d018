// Memory: the person's decisions, commitments, learnings and source artifacts. Words typed search them (full text,
// best match first, GET memory); no words browse them newest first a page at a time (GET memory/list, next_before).
// Either way limited to the kinds ticked.
import { useState } from 'preact/hooks';
import { memory, MEMORY_KINDS, type MemoryRow } from '../../api/substrate.ts';
import type { TabProps } from '../../tabs.tsx';
import { Field, Loading, Select, Table, text, useLoad, when } from '../../ui.tsx';
import { Filters, Pager, useCursorPages } from './parts.tsx';

const PAGE = 25;
const MATCHES = ['and', 'or', 'phrase'] as const;

interface Ask {
  q?: string | undefined;
  kinds: string;
  match: string;
}

export default function Memory(_: TabProps) {
  const [ask, setAsk] = useState<Ask>({ kinds: MEMORY_KINDS.join(','), match: 'and' });
  const apply = (data: FormData) =>
    setAsk({ q: text(data, 'q'), kinds: data.getAll('kinds').join(',') || MEMORY_KINDS.join(','), match: data.get('match') as string });
  return (
    <section aria-labelledby="memory-title">
      <h2 id="memory-title">Memory</h2>
      <Filters label="Search memory" apply={apply}>
        <Field label="Words (empty: browse, newest first)" name="q" type="search" maxLength={500} />
        <fieldset class="kinds">
          <legend>Kinds</legend>
          {MEMORY_KINDS.map((k) => (
            <label key={k}>
              <input type="checkbox" name="kinds" value={k} defaultChecked /> {k.replace('_', ' ')}
            </label>
          ))}
        </fieldset>
        <Select label="Match" name="match" options={MATCHES} initial="and" />
      </Filters>
      {ask.q ? <Search key={JSON.stringify(ask)} ask={ask as Ask & { q: string }} /> : <Browse key={ask.kinds} kinds={ask.kinds} />}
    </section>
  );
}

function Search({ ask }: { ask: Ask & { q: string } }) {
  const found = useLoad(() => memory.search(ask.q, ask.kinds, ask.match), []);
  return <Loading loaded={found}>{(rows) => <Rows rows={rows} caption={`Memory matching ${ask.q}`} />}</Loading>;
}

function Browse({ kinds }: { kinds: string }) {
  const pages = useCursorPages((before) => memory.list(kinds, before, PAGE));
  return (
    <Loading loaded={pages.loaded}>
      {(page) => (
        <>
          <Rows rows={page.rows} caption="Memory, newest first" />
          <Pager pages={pages} label="Memory" />
        </>
      )}
    </Loading>
  );
}

function Rows({ rows, caption }: { rows: MemoryRow[]; caption: string }) {
  if (rows.length === 0) return <p class="muted">Nothing found.</p>;
  return (
    <Table caption={caption} columns={['Kind', 'Title', 'Text', 'Status', 'Updated']}>
      {rows.map((r) => (
        <tr key={r.id}>
          <td>{r.kind.replace('_', ' ')}</td>
          <td>
            {r.title}
            <div class="muted small">{r.id}</div>
          </td>
          <td class="clip">{r.body_text ?? '—'}</td>
          <td>{r.status ?? '—'}</td>
          <td>
            <time dateTime={r.updated_at}>{when(r.updated_at)}</time>
          </td>
        </tr>
      ))}
    </Table>
  );
}
