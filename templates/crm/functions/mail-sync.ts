// Every 15 minutes: each syncing member's new mail logged on their contacts' timelines (lib/mail.ts), which also
// stops the campaign sequences of contacts who replied.
import { handler } from '../lib/http.ts';
import { syncMail } from '../lib/mail.ts';
import { syncEveryone } from '../lib/sync.ts';

export default handler(async (_request, ctx) => syncEveryone(ctx, 'mail', syncMail));
