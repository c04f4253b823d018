// The table editor's Live view: the table's changes as they commit, through supabase-js's channel() on the app's
// realtime socket, over the routes any page uses. The socket takes the app's publishable key; the channel's access
// token is a realtime token minted with this session (realtime_token: the app's role for five minutes, asked for
// again at half its life, and void once the session ends), so every row's changes arrive, as the grid shows every row.
// supabase-js loads only when Live is switched on.
import type { RealtimePostgresChangesPayload, SupabaseClient } from '@supabase/supabase-js';
import { useEffect, useState } from 'preact/hooks';
import { publishableKeys } from '../../api.ts';
import { realtime } from '../../api/realtime.ts';
import type { TableView } from '../../api/schema.ts';
import { useCan } from '../../session.ts';
import { messageOf } from '../../ui.tsx';
import { cellText } from './data-row-form.tsx';

type Change = RealtimePostgresChangesPayload<Record<string, unknown>>;
/** Changes listed at most (the newest). */
const SHOWN = 100;

export function LiveChanges({ appId, name, table }: { appId: string; name: string; table: TableView }) {
  const canWatch = useCan('developer');
  const [on, setOn] = useState(false);
  if (!table.realtime) {
    return <p class="muted">Live: this table does not stream. Apply its definition with "realtime": true (Schema tab) to see its changes here.</p>;
  }
  if (!canWatch) return <p class="muted">Live needs the developer role: its channel acts as the app.</p>;
  return (
    <section aria-label="Live changes">
      <button type="button" aria-pressed={on} onClick={() => setOn(!on)}>
        Live
      </button>
      {on && <Feed appId={appId} name={name} />}
    </section>
  );
}

function Feed({ appId, name }: { appId: string; name: string }) {
  const [state, setState] = useState('Connecting…');
  const [changes, setChanges] = useState<Array<{ seq: number; change: Change }>>([]);
  useEffect(() => {
    let client: SupabaseClient | undefined;
    let stopped = false;
    let seq = 0;
    void (async () => {
      const [{ createClient }, keys] = await Promise.all([import('@supabase/supabase-js'), publishableKeys.list(appId)]);
      const key = keys[0]?.key;
      if (!key) return setState('Live needs a publishable key of the app: create one on the Overview.');
      // realtime-js asks at every heartbeat (and twice as it starts): one token is minted and held until half spent.
      let held: { token: Promise<string>; renewAt: number } | undefined;
      const accessToken = (): Promise<string> => {
        if (!held || Date.now() >= held.renewAt) {
          const minted = realtime.token(appId);
          const entry = { token: minted.then((t) => t.token), renewAt: Infinity };
          minted.then(
            (t) => (entry.renewAt = Date.now() + t.expires_in * 500),
            () => held === entry && (held = undefined),
          );
          held = entry;
        }
        return held.token;
      };
      if (stopped) return;
      client = createClient(`${location.origin}/v1/${appId}`, key, { accessToken });
      // The join carries the token only when it is held before the channel subscribes.
      await client.realtime.setAuth();
      if (stopped) return;
      client
        .channel(`table-editor:${name}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: name }, (change: Change) => setChanges((list) => [{ seq: ++seq, change }, ...list].slice(0, SHOWN)))
        .subscribe((status, err) => setState(status === 'SUBSCRIBED' ? 'Live: changes appear here as they commit.' : err ? `${status}: ${err.message}` : status));
    })().catch((err: unknown) => setState(messageOf(err)));
    return () => {
      stopped = true;
      void client?.removeAllChannels();
    };
  }, [appId, name]);
  return (
    <>
      <p role="status">{state}</p>
      {changes.length > 0 && (
        <div class="grid">
          <table>
            <caption class="visually-hidden">Changes of {name}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Committed</th>
                <th scope="col">Change</th>
                <th scope="col">Row</th>
              </tr>
            </thead>
            <tbody>
              {changes.map(({ seq, change: c }) => (
                <tr key={seq}>
                  <td>{new Date(c.commit_timestamp).toLocaleTimeString()}</td>
                  <td>{c.eventType}</td>
                  <td>
                    <code>{cellText(c.eventType === 'DELETE' ? c.old : c.new)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
