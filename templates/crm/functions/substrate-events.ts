// The substrate outbox's webhook: the owner registers this function's URL as the outbox target of update_entity and
// send_email_draft (signing secret = OUTBOX_SECRET), and every executed action of theirs is POSTed here, signed
// x-svc-signature: sha256=<hex HMAC-SHA256 of the raw body>. An executed action that is one of the CRM's proposals
// is applied to the CRM (a decision made elsewhere, e.g. by the owner on the platform's approval page); anything else
// is acknowledged with a 2xx so the outbox does not retry what will never match.
import { fail, handler, json, rows, eq } from '../lib/http.ts';
import { settle, type Proposal } from '../lib/proposals.ts';
import { verifiedJson } from '../lib/signature.ts';

interface Delivery {
  delivery_id?: string;
  action_id?: string;
  capability?: string;
  source_app_id?: string | null;
}

export default handler(async (request, ctx) => {
  const delivery = await verifiedJson<Delivery>(request, 'outbox', ctx.env.OUTBOX_SECRET, 'OUTBOX_SECRET');
  if (typeof delivery?.action_id !== 'string') return fail(400, 'missing_field', 'action_id is required.');
  const [proposal] = rows(await ctx.asApp.data.from('proposals').select<Proposal>('*', { query: `action_id=${eq(delivery.action_id)}` }), 'proposals');
  if (!proposal) return json({ ignored: delivery.action_id });
  // The outbox delivers executed actions only; who decided is read from the ledger when the app can.
  const action = await ctx.substrate?.action(delivery.action_id).catch(() => null);
  const settled = await settle(ctx, proposal, { ...(action ?? {}), status: 'executed' });
  return json({ delivery_id: delivery.delivery_id ?? null, proposal: settled });
});
