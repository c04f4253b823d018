import { useState } from 'preact/hooks';
import { signIn } from '../session.ts';
import { Field, Form, value } from '../ui.tsx';

export function SignIn() {
  const [mode, setMode] = useState<'login' | 'signup'>('login');
  const other = mode === 'login' ? 'signup' : 'login';
  return (
    <main class="center">
      <h1>{mode === 'login' ? 'Sign in to the CRM' : 'Create your account'}</h1>
      <Form label={mode === 'login' ? 'Sign in' : 'Sign up'} class="stack" onSubmit={(d) => signIn(mode, value(d, 'email') ?? '', String(d.get('password') ?? ''))}>
        <Field label="E-mail" name="email" type="email" autoComplete="email" required autoFocus />
        <Field label="Password" name="password" type="password" autoComplete={mode === 'login' ? 'current-password' : 'new-password'} minLength={8} required />
        <button class="primary">{mode === 'login' ? 'Sign in' : 'Sign up'}</button>
      </Form>
      <p>
        {mode === 'login' ? 'New here? ' : 'Have an account? '}
        <button type="button" class="link" onClick={() => setMode(other)}>
          {other === 'signup' ? 'Create an account' : 'Sign in'}
        </button>
      </p>
    </main>
  );
}
