// POST {connection_id}: removes one of the caller's connected accounts (revoked at the vendor). Another person's
// connection is not found, as the platform answers for it.
import { handler, json, body, uuid, requireUser } from '../lib/http.ts';
import { asUser } from '../lib/rest.ts';

export default handler(async (request, ctx) => {
  requireUser(ctx);
  const connectionId = uuid(await body(request), 'connection_id');
  await asUser(ctx, 'DELETE', `/integrations/connections/${connectionId}`);
  return json({ connection_id: connectionId, disconnected: true });
});
