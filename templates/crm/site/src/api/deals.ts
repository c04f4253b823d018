// The deals board: stages and deals read through the data API; made and moved through functions (a move is a
// proposal a person approves, so the board shows it pending until then).
import type { Deal, Proposal, Stage } from '../types.ts';
import { db, fn, rows } from './core.ts';

export async function stages(workspaceId: string): Promise<Stage[]> {
  return rows<Stage>(await (await db()).from('pipeline_stages').select('id,name,position,probability,kind').eq('workspace_id', workspaceId).order('position'));
}

export async function deals(workspaceId: string): Promise<Deal[]> {
  const q = (await db()).from('deals').select('id,title,stage_id,amount,currency,company_id,contact_id,next_step,forecast,position');
  return rows<Deal>(await q.eq('workspace_id', workspaceId).order('position').order('created_at'));
}

/** The stage each deal waits to move to, by deal id: its newest pending stage-change proposal. */
export async function pendingMoves(workspaceId: string): Promise<Map<string, string>> {
  const q = (await db()).from('proposals').select('deal_id,payload,created_at').eq('workspace_id', workspaceId).eq('kind', 'stage_change').eq('status', 'pending');
  const pending = rows<Pick<Proposal, 'deal_id' | 'payload'>>(await q.order('created_at'));
  return new Map(pending.flatMap((p) => (p.deal_id && stageOf(p.payload) ? [[p.deal_id, stageOf(p.payload)!]] : [])));
}

/** The target stage a proposal's payload names, wherever the function put it. */
export function stageOf(payload: Record<string, unknown>): string | null {
  const attrs = payload.attrs as Record<string, unknown> | undefined;
  const id = payload.stage_id ?? payload.to_stage_id ?? attrs?.stage_id;
  return typeof id === 'string' ? id : null;
}

export interface NewDeal {
  title: string;
  stage_id?: string;
  amount?: number;
  company_id?: string;
  contact_id?: string;
}

export const createDeal = (workspaceId: string, deal: NewDeal) => fn<{ deal: Deal }>('deal-create', { body: { workspace_id: workspaceId, ...deal } });

export const moveDeal = (dealId: string, stageId: string) => fn<{ proposal?: { id: string; status?: string } }>('deal-move', { body: { deal_id: dealId, stage_id: stageId } });

export const proposeNextStep = (dealId: string) => fn('deal-next-step', { body: { deal_id: dealId } });

export const proposeForecast = (workspaceId: string) => fn('deal-forecast', { body: { workspace_id: workspaceId } });
