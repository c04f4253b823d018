// The e-mails a person gets from the platform: short plain text around one link. The link's token is the only
// secret in them, and it exists nowhere else.
import { CONSOLE_PATH } from '../console/path.ts';
import type { PersonMail } from './mail-port.ts';
import { TOKEN_LIFETIME_MINUTES, type PersonTokenPurpose } from './person-tokens.ts';
import { SIGNUP_LINK_HOURS } from './signup-requests.ts';

/**
 * Where each link lands: a page of the console at the platform's base URL, which posts the token to
 * POST /dashboard/verify-email or POST /dashboard/password-reset/confirm. The token rides in the fragment, which a
 * browser never sends: it reaches no server log and no Referer.
 */
const LINK_PAGES: Record<PersonTokenPurpose, string> = { verify_email: 'verify-email', reset_password: 'reset-password' };

function personTokenLink(baseUrl: string, purpose: PersonTokenPurpose, token: string): string {
  return consoleLink(baseUrl, LINK_PAGES[purpose], token);
}

/** A page of the console carrying a token: {base}/console/#/<page>/<token>. */
export function consoleLink(baseUrl: string, page: string, token: string): string {
  return `${baseUrl}${CONSOLE_PATH}#/${page}/${encodeURIComponent(token)}`;
}

/** "24 hours", "1 hour": how long the link works, as the mail says it. */
function lifetime(purpose: PersonTokenPurpose): string {
  const hours = TOKEN_LIFETIME_MINUTES[purpose] / 60;
  return hours === 1 ? '1 hour' : `${hours} hours`;
}

export function personTokenMail(purpose: PersonTokenPurpose, to: string, baseUrl: string, token: string): PersonMail {
  const link = personTokenLink(baseUrl, purpose, token);
  const [subject, ask, after] =
    purpose === 'verify_email'
      ? ['Confirm your e-mail address', `To confirm that this address is yours on ${baseUrl}, open this link`, 'If you did not sign up there, ignore this e-mail.']
      : [
          'Reset your password',
          `To choose a new password for ${to} on ${baseUrl}, open this link`,
          'Setting it signs you out everywhere. If you did not ask for this, ignore this e-mail: your password stays as it is.',
        ];
  return { to, subject, text: `${ask} within ${lifetime(purpose)}; it works once:\n\n${link}\n\n${after}\n` };
}

/** The link that finishes an open sign-up (src/identity/signup-requests.ts), asking for the password chosen. */
export function signupLinkMail(to: string, baseUrl: string, token: string): PersonMail {
  const link = consoleLink(baseUrl, 'confirm-signup', token);
  const ask = `To finish signing up on ${baseUrl} with this address, open this link within ${SIGNUP_LINK_HOURS} hours and enter the password you chose; it works once`;
  return { to, subject: 'Finish signing up', text: `${ask}:\n\n${link}\n\nIf you did not sign up there, ignore this e-mail: no account is made.\n` };
}

/** To the person who has the address a sign-up named: they have an account already. It carries no link to act on. */
export function signupTakenMail(to: string, baseUrl: string): PersonMail {
  return {
    to,
    subject: 'You already have an account',
    text:
      `Someone, probably you, tried to sign up on ${baseUrl} with this address, which has an account there already. ` +
      `Sign in at ${baseUrl}${CONSOLE_PATH} instead; if you forgot your password, choose "Forgot your password?" there.\n\n` +
      'If it was not you, ignore this e-mail: nothing changed.\n',
  };
}
