// Sign in with a password, sign up (with an invitation, or where the operator opened sign-up), or sign in with the
// OpenID Connect provider the operator configured (GET /dashboard/oidc lists it; no provider, no button).
import { useState } from 'preact/hooks';
import { session } from '../api.ts';
import { Field, Form, text, useLoad } from '../ui.tsx';
import { ForgotPassword } from './links.tsx';

/** The OpenID Connect sign-in lands on /?signin_error=<code> when it fails; / leads here with the query. */
const signinError = new URLSearchParams(location.search).get('signin_error');

/** The provider's start link, coming back to the console (and joining with the invitation, when there is one). */
function startUrl(start: string, token: string | undefined): string {
  const url = new URL(start, location.origin);
  url.searchParams.set('redirect', location.pathname);
  if (token) url.searchParams.set('invitation_token', token);
  return url.pathname + url.search;
}

export function SignIn({ token, onSignedIn }: { token: string | undefined; onSignedIn: () => Promise<void> }) {
  const [signingUp, setSigningUp] = useState(!!token);
  /** The address a link to finish signing up was mailed to. */
  const [mailedTo, setMailedTo] = useState<string>();
  const providers = useLoad(async () => (await session.providers()).providers, []);
  const submit = async (d: FormData) => {
    const email = text(d, 'email') ?? '';
    const password = String(d.get('password') ?? '');
    if (signingUp) {
      const answer = await session.signUp({ email, password, name: text(d, 'name'), invitation_token: text(d, 'invitation_token') });
      if ('mail_configured' in answer) return setMailedTo(answer.email);
    } else await session.signIn(email, password);
    await onSignedIn();
  };
  const title = signingUp ? 'Create your account' : 'Sign in to the console';
  if (mailedTo)
    return (
      <main class="center">
        <h1 tabIndex={-1}>Check your e-mail</h1>
        <p role="status">
          A link to finish signing up is on its way to {mailedTo} (it works for 24 hours). Open it and enter the password you chose. If that address has an
          account already, the e-mail says so instead.
        </p>
      </main>
    );
  return (
    <main class="center">
      <h1 tabIndex={-1}>{title}</h1>
      {signinError && (
        <p role="alert" class="error">
          The sign-in with your provider failed ({signinError}).
        </p>
      )}
      <Form label={signingUp ? 'Sign up' : 'Sign in'} button={signingUp ? 'Sign up' : 'Sign in'} submit={submit}>
        {signingUp && <Field label="Name" name="name" autoComplete="name" maxLength={200} />}
        <Field label="E-mail" name="email" type="email" autoComplete="email" required />
        <Field label="Password" name="password" type="password" autoComplete={signingUp ? 'new-password' : 'current-password'} minLength={signingUp ? 8 : undefined} required />
        {signingUp && <Field label="Invitation token" name="invitation_token" value={token} autoComplete="off" />}
      </Form>
      {providers.data?.map((p) => (
        <p key={p.name}>
          <a class="button" href={startUrl(p.start_url, signingUp ? token : undefined)}>
            Sign in with {p.name}
          </a>
        </p>
      ))}
      {!signingUp && <ForgotPassword />}
      <p>
        {signingUp ? 'Have an account? ' : 'Invited, or new here? '}
        <button type="button" class="link" onClick={() => setSigningUp(!signingUp)}>
          {signingUp ? 'Sign in' : 'Create an account'}
        </button>
      </p>
    </main>
  );
}
