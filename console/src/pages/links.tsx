// The pages the platform's e-mails link to (#/verify-email/<token>, #/reset-password/<token>, #/invitation/<token>,
// #/confirm-signup/<token>): each posts its token to the route that takes it. The token rides in the fragment, so it
// reaches no server log.
import { useState } from 'preact/hooks';
import { call } from '../api.ts';
import { Action, Field, Form, messageOf } from '../ui.tsx';

const toConsole = () => (location.hash = '#/apps');

/** The e-mail address confirmed by POST /dashboard/verify-email, signed in or not. */
export function VerifyEmailPage({ token }: { token: string }) {
  const [done, setDone] = useState<string>();
  const [failed, setFailed] = useState<string>();
  const verify = () =>
    call<{ email: string }>('POST', '/dashboard/verify-email', { token }).then(
      (r) => setDone(r.email),
      (err: unknown) => setFailed(messageOf(err)),
    );
  return (
    <main class="center">
      <h1 tabIndex={-1}>Confirm your e-mail address</h1>
      {done ? (
        <p role="status">{done} is confirmed.</p>
      ) : (
        <Action act={verify}>Confirm my address</Action>
      )}
      {failed && (
        <p role="alert" class="error">
          {failed}
        </p>
      )}
      <p>
        <a href="#/apps">Go to the console</a>
      </p>
    </main>
  );
}

/** A new password set with the mailed token (POST /dashboard/password-reset/confirm); it signs every browser out. */
export function ResetPasswordPage({ token }: { token: string }) {
  const [email, setEmail] = useState<string>();
  const submit = async (d: FormData) => {
    const password = String(d.get('password') ?? '');
    if (password !== String(d.get('repeat') ?? '')) throw new Error('The two passwords differ.');
    setEmail((await call<{ email: string }>('POST', '/dashboard/password-reset/confirm', { token, password })).email);
  };
  return (
    <main class="center">
      <h1 tabIndex={-1}>Choose a new password</h1>
      {email ? (
        <>
          <p role="status">The password of {email} is set; every browser signed in with the old one is signed out.</p>
          <p>
            <a href="#/apps" onClick={toConsole}>
              Sign in
            </a>
          </p>
        </>
      ) : (
        <Form label="Set a new password" button="Set the password" submit={submit}>
          <Field label="New password" name="password" type="password" autoComplete="new-password" minLength={8} required />
          <Field label="Repeat it" name="repeat" type="password" autoComplete="new-password" minLength={8} required />
        </Form>
      )}
    </main>
  );
}

/** Finishes an open sign-up (POST /dashboard/signup/confirm) with the password chosen at sign-up, then opens the console signed in. */
export function ConfirmSignupPage({ token }: { token: string }) {
  const submit = async (d: FormData) => {
    await call('POST', '/dashboard/signup/confirm', { token, password: String(d.get('password') ?? '') });
    toConsole();
  };
  return (
    <main class="center">
      <h1 tabIndex={-1}>Finish signing up</h1>
      <Form label="Finish signing up" button="Finish signing up" submit={submit}>
        <Field label="The password you chose" name="password" type="password" autoComplete="current-password" required />
      </Form>
    </main>
  );
}

/**
 * Asks for a reset link (POST /dashboard/password-reset): the same answer whether the address has an account or not.
 * The form appears when asked for, beside the sign-in form's own address field.
 */
export function ForgotPassword() {
  const [state, setState] = useState<'closed' | 'open' | 'sent'>('closed');
  if (state === 'sent') return <p role="status">If an account has this address, a link to choose a new password is on its way (it works for an hour).</p>;
  if (state === 'closed')
    return (
      <p>
        <button type="button" class="link" onClick={() => setState('open')}>
          Forgot your password?
        </button>
      </p>
    );
  const send = async (d: FormData) => {
    await call('POST', '/dashboard/password-reset', { email: String(d.get('email') ?? '') });
    setState('sent');
  };
  return (
    <Form label="Reset the password" button="Send me a link" submit={send}>
      <Field label="Your e-mail" name="email" type="email" autoComplete="email" required />
    </Form>
  );
}

/** A signed-in person joins the invitation's account (POST /dashboard/invitations/accept). */
export function AcceptInvitationPage({ token }: { token: string }) {
  const [joined, setJoined] = useState<string>();
  const accept = async () => setJoined((await call<{ role: string }>('POST', '/dashboard/invitations/accept', { token })).role);
  return (
    <section aria-labelledby="invitation-title">
      <h1 id="invitation-title" tabIndex={-1}>
        Invitation
      </h1>
      {joined ? (
        <p role="status">You joined the account as {joined}. This session stays in the account it acts in.</p>
      ) : (
        <Action act={accept}>Accept the invitation</Action>
      )}
    </section>
  );
}
