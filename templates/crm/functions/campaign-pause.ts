// POST {campaign_id, paused}: pauses an active campaign (campaign-send skips it; recipients keep their place) or
// resumes a paused one (recipients added while paused are scheduled: lib/campaigns.ts activateCampaign).
import { activateCampaign, requireStatus, type Campaign } from '../lib/campaigns.ts';
import { HttpError, body, eq, handler, json, one, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const { row: campaign } = await rowOf<Campaign>(ctx, 'campaigns', uuid(input, 'campaign_id'));
  if (typeof input.paused !== 'boolean') throw new HttpError(400, 'invalid_field', 'paused must be true or false.');
  if (!input.paused) {
    requireStatus(campaign, ['paused'], 'resume');
    return json((await activateCampaign(ctx, campaign.id)));
  }
  requireStatus(campaign, ['active'], 'pause');
  const paused = one(await ctx.asApp.data.from('campaigns').update<Campaign>({ status: 'paused' }, `id=${eq(campaign.id)}&status=eq.active`, { prefer: 'return=representation' }), 'campaign');
  return json({ campaign: paused, scheduled: 0 });
});
