// POST {workspace_id}: the caller's mail sync, now (the site's "sync" button); the same run the cron makes.
import { body, handler, uuid } from '../lib/http.ts';
import { syncMail } from '../lib/mail.ts';
import { syncCaller } from '../lib/sync.ts';

export default handler(async (request, ctx) => syncCaller(ctx, uuid(await body(request), 'workspace_id'), 'mail', syncMail));
