// The errors people meet signing up, signing in and joining accounts.
import { AppError } from '../core/errors.ts';

export const identityErrors = {
  invalidCredentials: () =>
    new AppError(401, 'INVALID_CREDENTIALS', 'The e-mail or password is wrong.', 'Check both and try again.'),
  emailTaken: () =>
    new AppError(409, 'EMAIL_TAKEN', 'A person with this e-mail already exists.', 'Sign in with POST /dashboard/signin instead.'),
  signupInvitationRequired: () =>
    new AppError(
      403,
      'SIGNUP_INVITATION_REQUIRED',
      'Sign-up on this platform needs an invitation.',
      'Ask a member of an account for an invitation and send its token as invitation_token; the operator sets who may sign up with SVC_SIGNUP.',
    ),
  signupClosed: () =>
    new AppError(403, 'SIGNUP_CLOSED', 'Sign-up on this platform is closed.', 'Ask the operator: SVC_SIGNUP decides who may sign up.'),
  invitationInvalid: () =>
    new AppError(400, 'INVITATION_INVALID', 'The invitation is unknown, used, revoked or expired.', 'Ask the account for a new invitation.'),
  invitationOtherEmail: () =>
    new AppError(403, 'INVITATION_OTHER_EMAIL', 'The invitation was sent to another e-mail address.', 'Sign up or sign in with the address the invitation names.'),
  noAccount: () =>
    new AppError(
      403,
      'NO_ACCOUNT',
      'This person is not a member of any account.',
      'Ask a member of an account for an invitation, then sign in and accept it.',
    ),
  crossSiteRequest: () =>
    new AppError(
      403,
      'CROSS_SITE_REQUEST',
      'A request authenticated by the session cookie must come from the platform\'s own pages.',
      'Send it from a page of this platform (same origin), or authenticate with Authorization: Bearer <platform key> instead of the cookie.',
    ),
};
