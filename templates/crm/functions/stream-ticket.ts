// POST {workspace_id}: a single-use, 60-second ticket for the substrate's change stream, so the site's approvals inbox
// refreshes when a proposal is decided anywhere. Members only: the stream is the app owner's, and a ticket is minted
// for the app (ctx.substrate.wsTicket), never handed to someone outside the CRM's workspaces.
import { substrateOf } from '../lib/entities.ts';
import { body, handler, json, uuid } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  await requireMember(ctx, uuid(await body(request), 'workspace_id'));
  const { ticket, expires_in } = await substrateOf(ctx).wsTicket();
  // The stream lives on the platform's origin: ws(s)://<origin>/v1/me/substrate/stream?ticket=...
  const origin = new URL(ctx.env.SVC_API_URL);
  const url = `${origin.protocol === 'https:' ? 'wss:' : 'ws:'}//${origin.host}/v1/me/substrate/stream?ticket=${encodeURIComponent(ticket)}`;
  return json({ ticket, expires_in, url });
});
