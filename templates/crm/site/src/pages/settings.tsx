// The workspace: members and their roles, invitations, and each member's connected mail, calendar and social accounts.
import { useState } from 'preact/hooks';
import { connect, disconnect, enableSync, integrations, invite, overview, removeMember, setRole, syncNow, type ToolkitStatus } from '../api/settings.ts';
import { canManage, useCurrent } from '../context.ts';
import type { Member, Role } from '../types.ts';
import { Action, Choice, Field, Form, Page, Show, useLoad, value, when, Head } from '../ui.tsx';

const SYNC: Record<string, 'mail' | 'calendar'> = { gmail: 'mail', googlecalendar: 'calendar' };
const TOOLKIT: Record<string, string> = { gmail: 'Gmail', googlecalendar: 'Google Calendar', linkedin: 'LinkedIn' };

/**
 * The invitation's address. Without SITE_URL member-invite answers a path from the root (`/#/invite/<token>`), which
 * resolved against the page would drop the folder the site is served from (/sites/<app>/): it is this page's own
 * address with the invitation's route instead.
 */
function inviteUrl(link: string): string {
  return link.startsWith('/#') ? `${location.href.split('#')[0]}${link.slice(1)}` : new URL(link, location.href).toString();
}

export function Settings() {
  const { workspace } = useCurrent();
  const info = useLoad(() => overview(workspace.id), [workspace.id]);
  const tools = useLoad(() => integrations(workspace.id), [workspace.id]);
  const [link, setLink] = useState<string | null>(null);
  const manager = canManage(workspace);
  return (
    <Page title={`${workspace.name}: members and accounts`}>
      <h2>Members</h2>
      <Show loaded={info}>{(o) => <Members members={o.members} manager={manager} onChange={info.reload} />}</Show>
      {manager && (
        <>
          <h3>Invite someone</h3>
          <Form
            label="Invite a member"
            onSubmit={async (d) => {
              const made = await invite(workspace.id, value(d, 'email') ?? '', (value(d, 'role') ?? 'member') as 'admin' | 'member');
              setLink(inviteUrl(made.link));
              await info.reload();
            }}
            done="Invitation made."
          >
            <Field label="E-mail" name="email" type="email" required />
            <Choice
              label="Role"
              name="role"
              options={[
                ['member', 'Member'],
                ['admin', 'Admin'],
              ]}
            />
            <button class="primary">Invite</button>
          </Form>
          {link && (
            <p role="status">
              Send this link: <input class="link-box" readOnly value={link} aria-label="Invitation link" onFocus={(e) => e.currentTarget.select()} />
            </p>
          )}
        </>
      )}
      <h2>Connected accounts</h2>
      <Show loaded={tools}>{(list) => <Toolkits list={list} onChange={tools.reload} />}</Show>
    </Page>
  );
}

function Members({ members, manager, onChange }: { members: Member[]; manager: boolean; onChange: () => Promise<void> }) {
  const { workspace, user } = useCurrent();
  return (
    <table>
      <Head columns={['Member', 'Role']} actions />
      <tbody>
        {members.map((m) => {
          const who = m.display_name ?? m.email ?? m.user_id;
          const me = m.user_id === user.id;
          return (
            <tr key={m.user_id}>
              <th scope="row">
                {who} {me && <span class="muted">(you)</span>}
              </th>
              <td>
                {manager && !me && m.role !== 'owner' ? (
                  <label>
                    <span class="visually-hidden">Role of {who}</span>
                    <select value={m.role} onChange={(e) => void setRole(workspace.id, m.user_id, e.currentTarget.value as Role).then(onChange)}>
                      <option value="member">member</option>
                      <option value="admin">admin</option>
                    </select>
                  </label>
                ) : (
                  m.role
                )}
              </td>
              <td>
                {(me ? m.role !== 'owner' : manager && m.role !== 'owner') && (
                  <Action label={me ? 'Leave the workspace' : `Remove ${who}`} done={me ? 'You left the workspace.' : `${who} removed.`} onAction={async () => (await removeMember(workspace.id, m.user_id), await onChange())}>
                    {me ? 'Leave' : 'Remove'}
                  </Action>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Toolkits({ list, onChange }: { list: ToolkitStatus[]; onChange: () => Promise<void> }) {
  const { workspace, user } = useCurrent();
  return (
    <ul class="list">
      {list.map((t) => {
        const kind = SYNC[t.toolkit];
        const mine = t.members.find((m) => m.user_id === user.id);
        const active = t.connections.find((c) => c.status === 'active');
        const name = TOOLKIT[t.toolkit] ?? t.toolkit;
        return (
          <li key={t.toolkit}>
            <strong>{name}</strong> {t.purpose && <span class="muted">{t.purpose}</span>}
            <p class="muted">
              {t.connected ? 'Connected' : 'Not connected'}
              {mine?.syncing && ` · syncing, last ${when(mine.last_synced_at)}`}
              {mine?.last_error && ` · ${mine.last_error}`}
              {t.members.length > 0 && ` · used by ${t.members.map((m) => m.display_name ?? m.email).join(', ')}`}
            </p>
            <div class="row-actions">
              {!t.connected && (
                <Action label={`Connect ${name}`} onAction={() => connect(t.toolkit)}>
                  Connect
                </Action>
              )}
              {active && (
                <Action label={`Disconnect ${name}`} done={`${name} disconnected.`} onAction={async () => (await disconnect(active.id), await onChange())}>
                  Disconnect
                </Action>
              )}
              {t.connected && kind && !mine?.syncing && (
                <Action label={`Turn on ${kind} sync`} done={`${kind} sync on.`} onAction={async () => (await enableSync(workspace.id, kind), await onChange())}>
                  Turn on sync
                </Action>
              )}
              {t.connected && kind && mine?.syncing && (
                <Action label={`Sync ${kind} now`} done="Synced." onAction={async () => (await syncNow(workspace.id, kind), await onChange())}>
                  Sync now
                </Action>
              )}
            </div>
          </li>
        );
      })}
    </ul>
  );
}
