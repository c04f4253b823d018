// The shell: sign-in until there is a session, then the workspace switcher, the navigation and the current page.
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { acceptInvite, createWorkspace, listWorkspaces } from './api/workspaces.ts';
import { CurrentContext } from './context.ts';
import { go, useRoute } from './router.ts';
import { onSession, session, signOut, type Session } from './session.ts';
import { Field, Form, Notices, Show, Action, useLoad, value } from './ui.tsx';
import type { Workspace } from './types.ts';
import { SignIn } from './pages/signin.tsx';
import { Home } from './pages/home.tsx';
import { Contacts } from './pages/contacts.tsx';
import { Companies } from './pages/companies.tsx';
import { Deals } from './pages/deals.tsx';
import { Timeline } from './pages/timeline.tsx';
import { Meetings } from './pages/meetings.tsx';
import { Campaigns } from './pages/campaigns.tsx';
import { Leads } from './pages/leads.tsx';
import { Social } from './pages/social.tsx';
import { Chat } from './pages/chat.tsx';
import { Approvals } from './pages/approvals.tsx';
import { Settings } from './pages/settings.tsx';

const PAGES: Array<[string, string, ComponentType]> = [
  ['home', 'Home', Home],
  ['contacts', 'Contacts', Contacts],
  ['companies', 'Companies', Companies],
  ['deals', 'Deals', Deals],
  ['timeline', 'Timeline', Timeline],
  ['meetings', 'Meetings', Meetings],
  ['campaigns', 'Campaigns', Campaigns],
  ['leads', 'Lead search', Leads],
  ['social', 'Social', Social],
  ['chat', 'Agent', Chat],
  ['approvals', 'Approvals', Approvals],
  ['settings', 'Workspace', Settings],
];

const WORKSPACE_KEY = 'crm.workspace';

export function App() {
  const [current, setCurrent] = useState<Session | null>(session);
  useEffect(() => onSession(setCurrent), []);
  return (
    <>
      {current ? <SignedIn session={current} /> : <SignIn />}
      <Notices />
    </>
  );
}

function SignedIn({ session: s }: { session: Session }) {
  const route = useRoute();
  const [chosen, setChosen] = useState(() => localStorage.getItem(WORKSPACE_KEY));
  const spaces = useLoad(() => listWorkspaces(s.user.id), [s.user.id]);
  const choose = (id: string) => {
    localStorage.setItem(WORKSPACE_KEY, id);
    setChosen(id);
  };
  const joined = async (id: string) => {
    await spaces.reload();
    choose(id);
    go('home');
  };
  if (route.page === 'invite' && route.param) return <AcceptInvite token={route.param} onJoined={joined} />;
  return (
    <Show loaded={spaces}>
      {(list) => {
        const workspace = list.find((w) => w.id === chosen) ?? list[0];
        if (!workspace || route.page === 'new-workspace') return <NewWorkspace first={!workspace} onMade={joined} />;
        return (
          <CurrentContext.Provider value={{ user: s.user, workspace }}>
            <Shell workspaces={list} workspace={workspace} email={s.user.email} onChoose={choose} page={route.page} />
          </CurrentContext.Provider>
        );
      }}
    </Show>
  );
}

function Shell({ workspaces, workspace, email, onChoose, page }: { workspaces: Workspace[]; workspace: Workspace; email: string; onChoose: (id: string) => void; page: string }) {
  const [, , Page] = PAGES.find(([name]) => name === page) ?? PAGES[0]!;
  useEffect(() => document.getElementById('page-title')?.focus(), [page]);
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('page-title')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">CRM</span>
        <label class="switcher">
          <span class="visually-hidden">Workspace</span>
          <select value={workspace.id} onChange={(e) => onChoose(e.currentTarget.value)}>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        </label>
        <a href="#/new-workspace">New workspace</a>
        <span class="who">{email}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav class="side" aria-label="Sections">
        <ul>
          {PAGES.map(([name, label]) => (
            <li key={name}>
              <a href={`#/${name}`} aria-current={name === page || (page === '' && name === 'home') ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" key={workspace.id}>
        <Page />
      </main>
    </div>
  );
}

function NewWorkspace({ first, onMade }: { first: boolean; onMade: (id: string) => Promise<void> }) {
  return (
    <main class="center">
      <h1>{first ? 'Create your first workspace' : 'New workspace'}</h1>
      {first && <p class="muted">Or open the invitation link a colleague sent you to join theirs.</p>}
      <Form label="New workspace" class="stack" onSubmit={async (d) => onMade(await createWorkspace(value(d, 'name') ?? ''))}>
        <Field label="Name" name="name" required maxLength={200} autoFocus />
        <button>Create workspace</button>
      </Form>
      {!first && <a href="#/home">Back</a>}
    </main>
  );
}

function AcceptInvite({ token, onJoined }: { token: string; onJoined: (id: string) => Promise<void> }) {
  return (
    <main class="center">
      <h1>Join a workspace</h1>
      <p>You were invited to a workspace of this CRM.</p>
      <Action class="primary" done="You joined the workspace." onAction={async () => onJoined(await acceptInvite(token))}>
        Accept the invitation
      </Action>
      <a href="#/home">Not now</a>
    </main>
  );
}
