// The account: its members and their roles, invitations, platform keys and the audit log. Managing people and keys
// is an admin's (the API says so too); a member below sees the member list only.
import { useState } from 'preact/hooks';
import { account, ROLES, roleAtLeast, type AuditEntry, type Member, type Role } from '../api.ts';
import { useCan, useSession } from '../session.ts';
import { Action, Field, Form, Loading, messageOf, RowAction, Secret, Select, Table, text, useLoad, when } from '../ui.tsx';

/** The roles someone with `mine` may grant: none above their own. */
const grantable = (mine: Role): Role[] => ROLES.filter((r) => roleAtLeast(mine, r));

export function AccountPage() {
  const isAdmin = useCan('admin');
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title" tabIndex={-1}>
        Account
      </h1>
      <Members />
      {isAdmin && (
        <>
          <Invitations />
          <PlatformKeys />
          <AuditLog />
        </>
      )}
    </section>
  );
}

function Members() {
  const me = useSession();
  const members = useLoad(account.members, []);
  const isAdmin = useCan('admin');
  // Not themselves here, nor anyone above their own role (an admin an owner): the API would refuse.
  const manages = (m: Member) => isAdmin && m.person_id !== me.person.id && roleAtLeast(me.role, m.role);
  return (
    <>
      <h2>Members</h2>
      <Loading loaded={members}>
        {(list) => (
          <Table caption="Members" columns={['Name', 'E-mail', 'Role', 'Joined', ...(isAdmin ? ['Actions'] : [])]}>
            {list.map((m) => (
              <tr key={m.person_id}>
                <td>{m.name || '—'}</td>
                <td>{m.email}</td>
                <td>{manages(m) ? <RoleChoice member={m} mine={me.role} onChanged={members.reload} /> : m.role}</td>
                <td>{when(m.joined_at)}</td>
                {isAdmin &&
                  (manages(m) ? (
                    <RowAction label={`Remove ${m.email}`} confirm={`Remove ${m.email} from the account?`} act={() => account.removeMember(m.person_id).then(members.reload)}>
                      Remove
                    </RowAction>
                  ) : (
                    <td />
                  ))}
              </tr>
            ))}
          </Table>
        )}
      </Loading>
    </>
  );
}

/** A member's role, changed as soon as another is chosen. */
function RoleChoice({ member, mine, onChanged }: { member: Member; mine: Role; onChanged: () => Promise<void> }) {
  const [failed, setFailed] = useState<string>();
  const change = (role: Role) =>
    account.setRole(member.person_id, role).then(onChanged, (err: unknown) => {
      setFailed(messageOf(err));
      return onChanged();
    });
  return (
    <>
      <select aria-label={`Role of ${member.email}`} value={member.role} onChange={(e) => void change(e.currentTarget.value as Role)}>
        {grantable(mine).map((r) => (
          <option key={r}>{r}</option>
        ))}
      </select>
      {failed && <span role="alert" class="error">{failed}</span>}
    </>
  );
}

function Invitations() {
  const me = useSession();
  const open = useLoad(account.invitations, []);
  const [link, setLink] = useState<string>();
  const invite = async (d: FormData) => {
    const inv = await account.invite((text(d, 'role') ?? 'viewer') as Role, text(d, 'email'));
    // The console's invitation page with the token, as the invitation's e-mail links it.
    setLink(inv.url);
    await open.reload();
  };
  return (
    <>
      <h2>Invitations</h2>
      <Form label="Invite a person" button="Invite" inline submit={invite}>
        <Field label="E-mail (optional)" name="email" type="email" />
        <Select label="Role" name="role" options={grantable(me.role)} initial="developer" />
      </Form>
      {link && <Secret label="Invitation link" value={link} onDone={() => setLink(undefined)} />}
      <Loading loaded={open}>
        {(list) =>
          list.length > 0 && (
            <Table caption="Open invitations" columns={['E-mail', 'Role', 'Expires', 'Actions']}>
              {list.map((i) => (
                <tr key={i.id}>
                  <td>{i.email ?? 'anyone with the link'}</td>
                  <td>{i.role}</td>
                  <td>{when(i.expires_at)}</td>
                  <RowAction label={`Revoke the invitation of ${i.email ?? i.role}`} act={() => account.revokeInvitation(i.id).then(open.reload)}>
                    Revoke
                  </RowAction>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
    </>
  );
}

function PlatformKeys() {
  const me = useSession();
  const keys = useLoad(account.keys, []);
  const [created, setCreated] = useState<string>();
  const create = async (d: FormData) => {
    setCreated((await account.createKey(text(d, 'name') ?? 'default', (text(d, 'role') ?? me.role) as Role)).key);
    await keys.reload();
  };
  return (
    <>
      <h2>Platform keys</h2>
      <Form label="Create a platform key" button="Create platform key" inline submit={create}>
        <Field label="Platform key name" name="name" required maxLength={100} />
        <Select label="Key role" name="role" options={grantable(me.role)} initial={me.role} />
      </Form>
      {created && <Secret label="New platform key" value={created} onDone={() => setCreated(undefined)} />}
      <Loading loaded={keys}>
        {(list) => (
          <Table caption="Platform keys" columns={['Name', 'Key', 'Role', 'Created', 'Actions']}>
            {list.map((k) => (
              <tr key={k.id}>
                <td>{k.name}</td>
                <td>
                  <code>{k.hint}…</code>
                </td>
                <td>{k.role}</td>
                <td>{when(k.created_at)}</td>
                {/* A key above the person's role (an owner key for an admin) is the API's to refuse: no button. */}
                {roleAtLeast(me.role, k.role) ? (
                  <RowAction label={`Revoke ${k.name}`} confirm={`Revoke the platform key ${k.name}?`} act={() => account.revokeKey(k.id).then(keys.reload)}>
                    Revoke
                  </RowAction>
                ) : (
                  <td />
                )}
              </tr>
            ))}
          </Table>
        )}
      </Loading>
    </>
  );
}

/** The audit log, newest first, a page at a time: older pages are appended with the API's cursor. */
function AuditLog() {
  const [pages, setPages] = useState<AuditEntry[][]>([]);
  const first = useLoad(account.audit, []);
  const [cursor, setCursor] = useState<string | null>();
  const next = cursor === undefined ? first.data?.next_cursor : cursor;
  const older = async () => {
    const page = await account.audit(next ?? undefined);
    setPages([...pages, page.entries]);
    setCursor(page.next_cursor);
  };
  return (
    <>
      <h2>Audit log</h2>
      <Loading loaded={first}>
        {(page) => (
          <>
            <Table caption="Audit log" columns={['When', 'Action', 'Resource', 'By']}>
              {[page.entries, ...pages].flat().map((e) => (
                <tr key={e.id}>
                  <td>{when(e.created_at)}</td>
                  <td>{e.action}</td>
                  <td>
                    {e.resource_type} {e.resource_id ?? ''}
                  </td>
                  <td>
                    {e.actor_kind} {e.actor_id ?? ''}
                  </td>
                </tr>
              ))}
            </Table>
            {next && <Action act={older}>Older entries</Action>}
          </>
        )}
      </Loading>
    </>
  );
}
