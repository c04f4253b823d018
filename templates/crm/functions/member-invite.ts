// POST {workspace_id, email, role?}: an owner or admin invites someone. The link carries a random token whose hash
// alone is stored; it is e-mailed from the inviter's own Gmail when they connected it and the site's address is known
// (SITE_URL), and otherwise returned for the inviter to pass on. A new invitation replaces a pending one to the same
// address. Expires after INVITE_DAYS.
import { handler, json, body, text, oneOf, uuid, rows, eq, HttpError } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';
import { assertGrants } from '../lib/members.ts';
import { INVITE_DAYS, emailAddress, inviteLink, newToken, tokenHash } from '../lib/invites.ts';
import { isConnected } from '../lib/integrations.ts';
import { sendMail } from '../lib/mail.ts';
import { errorText } from '../lib/tools.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const email = emailAddress(text(input, 'email', { max: 254 }));
  if (!email) throw new HttpError(400, 'invalid_field', 'email must be an e-mail address.');
  const role = oneOf(input, 'role', ['admin', 'member'] as const, 'member');
  const inviter = await requireMember(ctx, workspaceId, ['owner', 'admin']);
  assertGrants(inviter, role);

  const db = ctx.asApp.data;
  const members = rows(await db.from('workspace_members').select<{ email: string | null }>('email', { query: `workspace_id=${eq(workspaceId)}` }), 'members');
  if (members.some((m) => m.email?.toLowerCase() === email)) throw new HttpError(409, 'already_member', `${email} is already a member of this workspace.`);

  const token = newToken();
  const expiresAt = new Date(Date.now() + INVITE_DAYS * 86_400_000).toISOString();
  rows(await db.from('invitations').delete(`workspace_id=${eq(workspaceId)}&email=${eq(email)}&accepted_at=is.null`), 'invitations');
  const [invitation] = rows(
    await db
      .from('invitations')
      .insert<Record<string, unknown>>({ workspace_id: workspaceId, email, role, token_hash: await tokenHash(token), invited_by: inviter.user_id, expires_at: expiresAt }),
    'invitation',
  );
  const { token_hash: _hash, ...shown } = invitation!;

  const siteUrl = ctx.env.SITE_URL?.trim();
  const link = inviteLink(siteUrl, token);
  // A relative link means nothing in an e-mail: mail only with the site's address, and only from a connected Gmail.
  let emailed = false;
  let emailError: string | null = null;
  if (siteUrl && (await isConnected(ctx, 'gmail'))) {
    const [workspace] = rows(await db.from('workspaces').select<{ name: string }>('name', { query: `id=${eq(workspaceId)}` }), 'workspace');
    const who = inviter.display_name ?? inviter.email ?? 'A teammate';
    try {
      await sendMail(ctx, inviter.user_id, {
        to: email,
        subject: `${who} invited you to ${workspace?.name ?? 'a workspace'} on the CRM`,
        body: `${who} invited you to join ${workspace?.name ?? 'their workspace'} as ${role === 'admin' ? 'an admin' : 'a member'}.\n\nAccept within ${INVITE_DAYS} days: ${link}\n\nSign in or sign up with ${email} to accept.`,
      });
      emailed = true;
    } catch (err) {
      // The invitation stands: the inviter still has the link to pass on.
      emailError = errorText(err);
    }
  }
  return json({ invitation: shown, link, emailed, ...(emailError ? { email_error: emailError } : {}), ...(siteUrl ? {} : { token }) }, 201);
});
