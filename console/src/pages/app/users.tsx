// An app's end users (auth_users_list): newest first, 50 a page by the API's cursor (the cursors of the pages before
// are kept for Previous), searched by e-mail; below them, their auth settings.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { endUsers } from '../../api/users.ts';
import { AuthSettingsSection } from './auth-settings.tsx';
import { useCursors } from '../../pager.tsx';
import { Field, Form, Loading, Table, text, useLoad, when } from '../../ui.tsx';

const PAGE_SIZE = 50;

export default function UsersTab({ app }: AppTabProps) {
  const [q, setQ] = useState<string>();
  const cursors = useCursors();
  const page = useLoad(() => endUsers.list(app.app_id, { limit: PAGE_SIZE, cursor: cursors.before, q }), [app.app_id, cursors.before, q]);
  const search = async (d: FormData) => {
    setQ(text(d, 'q'));
    cursors.reset();
  };
  return (
    <>
      <h2>Users</h2>
      <Form label="Search users" button="Search" inline submit={search}>
        <Field label="E-mail contains" name="q" type="search" maxLength={200} />
      </Form>
      {q && (
        <p class="muted">
          Users whose e-mail contains “{q}”.{' '}
          <button type="button" class="link" onClick={() => void search(new FormData())}>
            Show all
          </button>
        </p>
      )}
      <Loading loaded={page}>
        {(p) => (
          <>
            {p.users.length === 0 ? (
              <p class="muted">{q ? 'No user matches.' : 'No end user has signed up yet.'}</p>
            ) : (
              <Table caption="End users" columns={['E-mail', 'User ID', 'Signed up', 'Last sign-in']}>
                {p.users.map((u) => (
                  <tr key={u.id}>
                    <td>{u.email}</td>
                    <td>
                      <code>{u.id}</code>
                    </td>
                    <td>{when(u.created_at)}</td>
                    <td>{u.last_sign_in_at ? when(u.last_sign_in_at) : <span class="muted">never</span>}</td>
                  </tr>
                ))}
              </Table>
            )}
            <nav class="row pager" aria-label="Pages">
              <button type="button" disabled={!cursors.back} onClick={cursors.back}>
                Previous
              </button>
              <span role="status">Page {cursors.depth + 1}</span>
              <button type="button" disabled={!p.next_cursor} onClick={() => p.next_cursor && cursors.on(p.next_cursor)}>
                Next
              </button>
            </nav>
          </>
        )}
      </Loading>
      <AuthSettingsSection appId={app.app_id} />
    </>
  );
}
