// A function's logs (functions_logs), newest first: filtered by level and a time window, paged back with `before`
// (the answer's next_before), each entry with its console output. Reloaded when the function ran again.
import { useState } from 'preact/hooks';
import { functions, type ConsoleLine, type LogEntry, type LogFilter } from '../../../api/functions.ts';
import { Action, Field, Form, Loading, Select, Table, text, useLoad, when } from '../../../ui.tsx';

/** A datetime-local field's value as the API's ISO date-time (the person's own time zone). */
const iso = (local: string | undefined): string | undefined => (local ? new Date(local).toISOString() : undefined);

function filterOf(d: FormData): LogFilter {
  const level = text(d, 'level');
  return { level: level === 'error' || level === 'info' ? level : undefined, since: iso(text(d, 'since')), until: iso(text(d, 'until')) };
}

export function ConsoleOutput({ lines }: { lines: ConsoleLine[] }) {
  if (lines.length === 0) return <p class="muted">No console output.</p>;
  return (
    <pre class="code console" aria-label="Console output">
      {lines.map((l) => `[${l.level}] ${l.message}`).join('\n')}
    </pre>
  );
}

/** `version` changes when the function ran again (its invocation count): the first page is read anew. */
export function Logs({ appId, name, version }: { appId: string; name: string; version: number }) {
  const [filter, setFilter] = useState<LogFilter>({});
  const [older, setOlder] = useState<LogEntry[]>([]);
  /** The next page's cursor; null when the last page is shown. */
  const [next, setNext] = useState<string | null>(null);
  const first = useLoad(async () => {
    const page = await functions.logs(appId, name, filter);
    setOlder([]);
    setNext(page.next_before);
    return page.logs;
  }, [appId, name, filter, version]);
  const more = async (before: string) => {
    const page = await functions.logs(appId, name, { ...filter, before });
    setOlder((o) => [...o, ...page.logs]);
    setNext(page.next_before);
  };
  return (
    <>
      <h3>Logs</h3>
      <Form keep label="Log filters" button="Apply filters" submit={async (d) => setFilter(filterOf(d))}>
        <div class="row">
          <Select label="Level" name="level" options={['any', 'error', 'info']} initial="any" />
          <Field label="Since" name="since" type="datetime-local" step={1} />
          <Field label="Until" name="until" type="datetime-local" step={1} />
        </div>
      </Form>
      <Loading loaded={first}>
        {(page) => {
          const all = [...page, ...older];
          return all.length === 0 ? (
            <p class="muted">No log entries.</p>
          ) : (
            <>
              <LogTable name={name} entries={all} />
              {next !== null && <Action act={() => more(next)}>Older entries</Action>}
            </>
          );
        }}
      </Loading>
    </>
  );
}

function LogTable({ name, entries }: { name: string; entries: LogEntry[] }) {
  return (
    <Table caption={`Logs of ${name}`} columns={['Time', 'Trigger', 'Request', 'Status', 'Duration', 'Level', 'Output']}>
      {entries.map((e) => (
        <tr key={e.id}>
          <td>{when(e.created_at)}</td>
          <td>{e.trigger}</td>
          <td>
            <code>
              {e.method} {e.path}
            </code>
          </td>
          <td>{e.status_code}</td>
          <td>{e.duration_ms} ms</td>
          <td>
            <span class="badge" data-level={e.level}>
              {e.level}
            </span>
          </td>
          <td>
            {e.error && <p class="error">{e.error}</p>}
            <ConsoleOutput lines={e.console} />
          </td>
        </tr>
      ))}
    </Table>
  );
}
