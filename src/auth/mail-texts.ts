// The e-mails end users are sent (supabase-js's auth flows), in plain text: each carries a link and the same one-time
// code, so a page can take either (auth-js verifyOtp takes the code; the link signs in on its own).
import type { EndUserMail } from './mail-port.ts';

export type EndUserMailKind = 'confirmation' | 'magiclink' | 'recovery' | 'email_change';

const TEXTS: Record<EndUserMailKind, { subject: string; lead: string }> = {
  confirmation: { subject: 'Confirm your sign-up', lead: 'Confirm your e-mail address to finish signing up.' },
  magiclink: { subject: 'Your sign-in link', lead: 'Sign in with this link.' },
  recovery: { subject: 'Reset your password', lead: 'Follow this link to sign in and choose a new password.' },
  email_change: { subject: 'Confirm your new e-mail address', lead: 'Confirm this address to make it the one you sign in with.' },
};

export function endUserMail(kind: EndUserMailKind, to: string, link: string, code: string, minutes: number): EndUserMail {
  const { subject, lead } = TEXTS[kind];
  const text = [
    lead,
    '',
    link,
    '',
    `Or enter this code: ${code}`,
    '',
    `The link and the code work once, for ${minutes} minutes. If you did not ask for this, ignore this e-mail.`,
  ].join('\n');
  return { to, subject, text };
}
