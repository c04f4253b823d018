// POST {deal_id}: the AI gateway reads the deal and its latest timeline and suggests one next step, proposed as an
// update of the deal's substrate entity (attrs.next_step) that a person approves; 202 with the proposal. The deal's
// next_step changes only when it is applied (lib/proposals.ts).
import type { Ctx } from '../lib/ctx.ts';
import { stageOf, type Deal } from '../lib/deals.ts';
import { dealAttrs, dealEntity } from '../lib/entities.ts';
import { sha256Hex } from '../lib/hash.ts';
import { HttpError, body, eq, handler, json, rows, uuid } from '../lib/http.ts';
import { propose } from '../lib/proposals.ts';
import { rowOf } from '../lib/workspace.ts';

const TIMELINE_ENTRIES = 15;
const ENTRY_CHARS = 600;
const STEP_CHARS = 500;

/** The deal's latest timeline as prompt lines, newest first. */
async function timeline(ctx: Ctx, deal: Deal): Promise<string> {
  const entries = rows(
    await ctx.asApp.data.from('activities').select<{ kind: string; subject: string | null; body: string; occurred_at: string }>('kind,subject,body,occurred_at', {
      query: `deal_id=${eq(deal.id)}&workspace_id=${eq(deal.workspace_id)}&order=occurred_at.desc&limit=${TIMELINE_ENTRIES}`,
    }),
    'activities',
  );
  if (!entries.length) return '(no timeline entries yet)';
  return entries.map((e) => `- ${e.occurred_at.slice(0, 10)} ${e.kind}${e.subject ? ` "${e.subject}"` : ''}: ${e.body.replace(/\s+/g, ' ').slice(0, ENTRY_CHARS)}`).join('\n');
}

export default handler(async (request, ctx) => {
  const { row: deal, member } = await rowOf<Deal>(ctx, 'deals', uuid(await body(request), 'deal_id'));
  const stage = await stageOf(ctx, deal.workspace_id, deal.stage_id);
  if (stage.kind !== 'open') throw new HttpError(409, 'deal_closed', `The deal is ${stage.kind}; closed deals have no next step.`);
  const answer = await ctx.asApp.ai.chat({
    model: ctx.env.AI_MODEL ?? 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a sales assistant in a CRM. From the deal and its timeline, suggest the single most useful next step, as one short imperative sentence. Answer with the sentence only.' },
      {
        role: 'user',
        content: `Deal: ${deal.title} (${stage.name}, ${deal.amount} ${deal.currency}${deal.close_date ? `, closing ${deal.close_date}` : ''})\nCurrent next step: ${deal.next_step ?? 'none'}\nTimeline:\n${await timeline(ctx, deal)}`,
      },
    ],
  });
  const nextStep = String(answer?.choices?.[0]?.message?.content ?? '').replace(/\s+/g, ' ').trim().slice(0, STEP_CHARS);
  if (!nextStep) throw new HttpError(502, 'empty_answer', 'The AI gateway answered without a next step.');
  const entityId = await dealEntity(ctx, deal, stage);
  const { proposal, verdict } = await propose(ctx, 'update_entity', { id: entityId, attrs: dealAttrs(deal, stage, { next_step: nextStep }) }, `deal-next-step:${deal.id}:${(await sha256Hex(nextStep)).slice(0, 24)}`, {
    workspace_id: deal.workspace_id,
    user_id: member.user_id,
    kind: 'next_step',
    deal_id: deal.id,
    summary: `Next step for ${deal.title}: ${nextStep}`,
    payload: { next_step: nextStep, previous: deal.next_step },
  });
  return json({ proposal, verdict }, 202);
});
