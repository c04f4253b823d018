// POST {token}: the caller joins the invitation's workspace with its role. The invitation is bound to the address it
// was sent to: the caller's account must carry that e-mail (their token's email claim), so a forwarded or leaked link
// lets nobody else in. Single use; an expired link is refused and the inviter sends a new one.
import { handler, json, body, text, rows, eq, requireUser, HttpError } from '../lib/http.ts';
import { tokenHash } from '../lib/invites.ts';

interface Invitation {
  id: string;
  workspace_id: string;
  email: string;
  role: 'admin' | 'member';
  accepted_by: string | null;
  accepted_at: string | null;
  expires_at: string;
}

export default handler(async (request, ctx) => {
  const userId = requireUser(ctx);
  const token = text(await body(request), 'token', { max: 200 });
  const db = ctx.asApp.data;
  const [invitation] = rows(await db.from('invitations').select<Invitation>('*', { query: `token_hash=${eq(await tokenHash(token))}` }), 'invitation');
  if (!invitation) throw new HttpError(404, 'invitation_not_found', 'This invitation link is not valid.');
  const email = typeof ctx.user!.claims.email === 'string' ? ctx.user!.claims.email.toLowerCase() : null;
  if (email !== invitation.email.toLowerCase()) {
    throw new HttpError(403, 'email_mismatch', `This invitation is for ${invitation.email}: sign in with that address to accept it.`);
  }
  const existing = async () =>
    rows(await db.from('workspace_members').select('*', { query: `workspace_id=${eq(invitation.workspace_id)}&user_id=${eq(userId)}` }), 'member')[0];
  if (invitation.accepted_at) {
    // Clicking the link twice is not an error for the person who accepted it.
    if (invitation.accepted_by === userId) return json({ workspace_id: invitation.workspace_id, member: await existing(), already: true });
    throw new HttpError(409, 'invitation_used', 'This invitation was already accepted.');
  }
  if (new Date(invitation.expires_at).getTime() <= Date.now()) throw new HttpError(409, 'invitation_expired', 'This invitation has expired: ask for a new one.');

  // Claimed first, with the pending state in the filter: of two accepts at once only one updates the row.
  const claimed = rows(
    await db.from('invitations').update({ accepted_by: userId, accepted_at: new Date().toISOString() }, `id=${eq(invitation.id)}&accepted_at=is.null`),
    'invitation',
  );
  if (!claimed.length) throw new HttpError(409, 'invitation_used', 'This invitation was already accepted.');

  // Someone already in the workspace keeps their role (an invitation never demotes an owner).
  const member = await existing();
  if (member) return json({ workspace_id: invitation.workspace_id, member, already: true });
  const [joined] = rows(
    await db.from('workspace_members').insert({
      workspace_id: invitation.workspace_id,
      user_id: userId,
      email: invitation.email,
      display_name: typeof ctx.user!.claims.name === 'string' ? ctx.user!.claims.name : invitation.email.split('@')[0],
      role: invitation.role,
    }),
    'membership',
  );
  return json({ workspace_id: invitation.workspace_id, member: joined, already: false });
});
