// Notes, e-mails, meetings and calls, newest first; for one contact or deal when the route names it (#/timeline/
// contact:<id>). Search runs over the workspace's indexed notes, e-mails and transcripts.
import { useState } from 'preact/hooks';
import { activities, addNote, search, type TimelineFilter } from '../api/timeline.ts';
import { useCurrent } from '../context.ts';
import { useRoute } from '../router.ts';
import type { Activity, Citation } from '../types.ts';
import { Area, Field, Form, Page, Show, useLoad, value, when } from '../ui.tsx';
import { Citations } from './citations.tsx';

function filterOf(param: string | undefined): TimelineFilter {
  const [kind, id] = (param ?? '').split(':');
  if (kind === 'contact' && id) return { contact_id: id };
  if (kind === 'deal' && id) return { deal_id: id };
  return {};
}

export function Timeline() {
  const { workspace } = useCurrent();
  const { param } = useRoute();
  const filter = filterOf(param);
  const loaded = useLoad(() => activities(workspace.id, filter), [workspace.id, param]);
  const [found, setFound] = useState<{ q: string; results: Citation[] } | null>(null);
  const scoped = filter.contact_id ? 'this contact' : filter.deal_id ? 'this deal' : null;
  return (
    <Page title={scoped ? `Timeline of ${scoped}` : 'Timeline'} actions={scoped && <a href="#/timeline">Whole workspace</a>}>
      <Form
        label="Add a note"
        class="stack"
        done="Note added."
        onSubmit={async (d) => {
          await addNote(workspace.id, value(d, 'body') ?? '', filter);
          await loaded.reload();
        }}
      >
        <Area label={scoped ? `Note on ${scoped}` : 'Note'} name="body" required rows={3} />
        <button class="primary">Add note</button>
      </Form>
      <Form
        label="Search the timeline"
        onSubmit={async (d) => {
          const q = value(d, 'q') ?? '';
          setFound({ q, results: await search(workspace.id, q) });
        }}
      >
        <Field label="Search notes, e-mails and transcripts" name="q" type="search" required />
        <button>Search</button>
      </Form>
      {found && (
        <section aria-label="Search results">
          <h2>Results for “{found.q}”</h2>
          {found.results.length ? <Citations list={found.results} /> : <p class="muted">Nothing found.</p>}
        </section>
      )}
      <Show loaded={loaded}>{(list) => (list.length ? <Entries list={list} /> : <p class="muted">Nothing on the timeline yet.</p>)}</Show>
    </Page>
  );
}

const KIND_LABEL: Record<string, string> = { note: 'Note', email: 'E-mail', meeting: 'Meeting', call: 'Call', task: 'Task', stage_change: 'Stage', system: 'CRM' };

function Entries({ list }: { list: Activity[] }) {
  return (
    <ol class="timeline">
      {list.map((a) => (
        <li key={a.id} class={`entry ${a.kind}`}>
          <p class="entry-head">
            <span class="badge">{KIND_LABEL[a.kind] ?? a.kind}</span>
            {a.direction && <span class="muted">{a.direction}</span>}
            <time dateTime={a.occurred_at}>{when(a.occurred_at)}</time>
          </p>
          {a.subject && <p class="entry-subject">{a.subject}</p>}
          <p class="entry-body">{a.body}</p>
        </li>
      ))}
    </ol>
  );
}
