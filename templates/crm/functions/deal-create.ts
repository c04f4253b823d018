// POST {workspace_id, title, stage_id?, amount?, currency?, close_date?, company_id?, contact_id?}: a deal in the
// workspace's pipeline (its first open stage unless named), written as the caller, then mirrored as a substrate
// entity (type deal) so its later stage changes are actions on that entity. Without a substrate link the deal is
// still made: entities-sync mirrors it once the link exists.
import { amountOf, dateOf, stageOf, stagesOf, type Deal } from '../lib/deals.ts';
import { mirror } from '../lib/entities.ts';
import { HttpError, body, handler, json, one, text, uuid } from '../lib/http.ts';
import { errorText } from '../lib/tools.ts';
import { requireInWorkspace, requireMember } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const title = text(input, 'title', { max: 200 });
  const amount = amountOf(input, 'amount');
  const closeDate = dateOf(input, 'close_date');
  const currency = text(input, 'currency', { optional: true, max: 3 })?.toUpperCase();
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) throw new HttpError(400, 'invalid_field', 'currency must be a three-letter code (ISO 4217).');
  const member = await requireMember(ctx, workspaceId);
  const stageId = uuid(input, 'stage_id', { optional: true });
  const stage = stageId ? await stageOf(ctx, workspaceId, stageId) : (await stagesOf(ctx, workspaceId)).find((s) => s.kind === 'open');
  if (!stage) throw new HttpError(409, 'no_open_stage', 'The workspace has no open pipeline stage.');
  const companyId = uuid(input, 'company_id', { optional: true });
  const contactId = uuid(input, 'contact_id', { optional: true });
  if (companyId) await requireInWorkspace(ctx, 'companies', companyId, workspaceId, 'company_id');
  if (contactId) await requireInWorkspace(ctx, 'contacts', contactId, workspaceId, 'contact_id');

  const row = { workspace_id: workspaceId, user_id: member.user_id, owner_id: member.user_id, title, stage_id: stage.id, company_id: companyId ?? null, contact_id: contactId ?? null, close_date: closeDate ?? null, ...(amount === undefined ? {} : { amount }), ...(currency ? { currency } : {}) };
  const deal = one(await ctx.data.from('deals').insert<Deal>(row), 'deal');
  let entityError: string | null = null;
  if (ctx.substrate) {
    await mirror(ctx, 'deals', deal, stage).then(
      (entityId) => (deal.entity_id = entityId),
      (err: unknown) => void (entityError = errorText(err)),
    );
  }
  return json({ deal, stage, ...(entityError ? { entity_error: entityError } : {}) }, 201);
});
