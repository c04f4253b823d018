// POST {workspace_id, kind: mail|calendar, enabled?}: turns the caller's mail or calendar sync on (default) or off.
// The cron syncs every member with a sync_state row; the row is the app's to write (write: service), so it goes
// through ctx.asApp once membership is checked. Turning it on needs the toolkit connected (409 otherwise), so the
// cron does not fail every 15 minutes for someone who never connected their mailbox.
import { body, handler, json, oneOf, uuid, HttpError } from '../lib/http.ts';
import { isConnected } from '../lib/integrations.ts';
import { SYNC_TOOLKIT, setSync } from '../lib/sync.ts';
import { requireMember } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const kind = oneOf(input, 'kind', ['mail', 'calendar'] as const);
  const enabled = input.enabled ?? true;
  if (typeof enabled !== 'boolean') throw new HttpError(400, 'invalid_field', 'enabled must be true or false.');
  const member = await requireMember(ctx, workspaceId);
  if (enabled && !(await isConnected(ctx, SYNC_TOOLKIT[kind]))) {
    throw new HttpError(409, 'not_connected', `Connect your ${kind === 'mail' ? 'Gmail' : 'Google Calendar'} first (integration-connect ${SYNC_TOOLKIT[kind]}).`);
  }
  const state = await setSync(ctx, workspaceId, member.user_id, kind, enabled);
  return json({ enabled, state });
});
