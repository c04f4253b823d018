// The shell: the sign-in page until GET /dashboard/session answers a person, then the navigation and the page the
// hash names.
import { useEffect, useState } from 'preact/hooks';
import { call, session, type SessionInfo } from './api.ts';
import { href, useRoute, type Route } from './router.ts';
import { currentSession, SessionContext } from './session.ts';
import { Loading, messageOf, useLoad } from './ui.tsx';
import { SignIn } from './pages/signin.tsx';
import { AppsPage } from './pages/apps.tsx';
import { AppPage } from './pages/app.tsx';
import { AccountPage } from './pages/account.tsx';
import { TemplatePage, TemplatesPage } from './pages/templates.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { SubstratePage } from './pages/substrate.tsx';
import { BillingPage } from './pages/billing.tsx';
import { AcceptInvitationPage, ConfirmSignupPage, ResetPasswordPage, VerifyEmailPage } from './pages/links.tsx';

const SECTIONS = [
  ['apps', 'Apps'],
  ['templates', 'Templates'],
  ['approvals', 'Approvals'],
  ['substrate', 'Substrate'],
  ['billing', 'Billing'],
  ['account', 'Account'],
] as const;

/** The routes that carry an invitation's token: a person signed out signs up with it. */
const INVITED = new Set(['signup', 'invitation']);

export function App() {
  const route = useRoute();
  // The e-mails' links work signed in or not: each posts its token.
  if (route[0] === 'verify-email' && route[1]) return <VerifyEmailPage token={route[1]} />;
  if (route[0] === 'reset-password' && route[1]) return <ResetPasswordPage token={route[1]} />;
  if (route[0] === 'confirm-signup' && route[1]) return <ConfirmSignupPage token={route[1]} />;
  return <Signed route={route} />;
}

function Signed({ route }: { route: Route }) {
  const signedIn = useLoad(currentSession, []);
  // The invitation is spent once signed up: its link leads on to the apps, and a later sign-out to sign-in.
  const onSignedIn = async () => {
    if (INVITED.has(route[0] ?? '')) location.hash = href('apps');
    await signedIn.reload();
  };
  return (
    <Loading loaded={signedIn}>
      {(s) =>
        s ? (
          <SessionContext.Provider value={s}>
            <Shell route={route} session={s} onSignOut={() => session.signOut().then(signedIn.reload)} onSwitched={signedIn.reload} />
          </SessionContext.Provider>
        ) : (
          <SignIn token={INVITED.has(route[0] ?? '') ? route[1] : undefined} onSignedIn={onSignedIn} />
        )
      }
    </Loading>
  );
}

function Page({ route }: { route: Route }) {
  const [section, id, ...rest] = route;
  if (section === 'account') return <AccountPage />;
  if (section === 'billing') return <BillingPage />;
  if (section === 'invitation' && id) return <AcceptInvitationPage token={id} />;
  if (section === 'approvals') return <ApprovalsPage />;
  if (section === 'substrate') return <SubstratePage rest={route.slice(1)} />;
  if (section === 'templates') return id ? <TemplatePage appId={id} /> : <TemplatesPage />;
  if (section === 'apps' && id) return <AppPage appId={id} rest={rest} />;
  return <AppsPage />;
}

function Shell({ route, session: s, onSignOut, onSwitched }: { route: Route; session: SessionInfo; onSignOut: () => Promise<void>; onSwitched: () => Promise<void> }) {
  const section = SECTIONS.find(([name]) => name === route[0])?.[0] ?? 'apps';
  // A new page moves the focus to its heading, so a screen reader announces where the person is.
  useEffect(() => document.querySelector<HTMLElement>('main h1')?.focus(), [route.join('/')]);
  return (
    <div class="shell">
      <header class="top">
        <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.querySelector<HTMLElement>('main h1')?.focus())}>
          Skip to content
        </a>
        <span class="brand">Console</span>
        <nav aria-label="Sections">
          {SECTIONS.map(([name, label]) => (
            <a key={name} href={href(name)} aria-current={section === name ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who">
          {s.person.email} <span class="badge">{s.role}</span>
        </span>
        <AccountChoice session={s} onSwitched={onSwitched} />
        <button type="button" onClick={() => void onSignOut()}>
          Sign out
        </button>
      </header>
      <main id="main">
        <Page route={route} />
      </main>
    </div>
  );
}

/**
 * The account the session acts in, for a person in more than one (POST /dashboard/session/account): the apps and
 * every page are that account's, with the person's role there.
 */
function AccountChoice({ session: s, onSwitched }: { session: SessionInfo; onSwitched: () => Promise<void> }) {
  const [failed, setFailed] = useState<string>();
  if (s.accounts.length < 2) return null;
  const choose = async (accountId: string) => {
    setFailed(undefined);
    try {
      await call('POST', '/dashboard/session/account', { account_id: accountId });
      location.hash = href('apps');
      await onSwitched();
    } catch (err) {
      setFailed(messageOf(err));
    }
  };
  return (
    <>
      <select aria-label="Account" value={s.account_id} onChange={(e) => void choose(e.currentTarget.value)}>
        {s.accounts.map((a) => (
          <option key={a.account_id} value={a.account_id}>
            {a.account_name} ({a.role})
          </option>
        ))}
      </select>
      {failed && (
        <span role="alert" class="error">
          {failed}
        </span>
      )}
    </>
  );
}
