// Deals and the pipeline they move through: the rows the deal functions read, and the rule that turns a deal's
// stage probability and close date into a forecast category.
import type { Ctx } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';

export interface Stage {
  id: string;
  workspace_id: string;
  name: string;
  position: number;
  probability: number;
  kind: 'open' | 'won' | 'lost';
}

export type Forecast = 'pipeline' | 'best_case' | 'commit' | 'closed' | 'omitted';

export interface Deal {
  id: string;
  workspace_id: string;
  user_id: string | null;
  title: string;
  company_id: string | null;
  contact_id: string | null;
  stage_id: string;
  amount: string | number;
  currency: string;
  close_date: string | null;
  next_step: string | null;
  forecast: Forecast;
  owner_id: string | null;
  entity_id: string | null;
  updated_at: string;
}

/** The workspace's stages in pipeline order. */
export async function stagesOf(ctx: Ctx, workspaceId: string): Promise<Stage[]> {
  return rows(await ctx.asApp.data.from('pipeline_stages').select<Stage>('*', { query: `workspace_id=${eq(workspaceId)}&order=position` }), 'pipeline_stages');
}

/** A stage of the workspace, or 400 naming the field (a stage of another workspace is no stage here). */
export async function stageOf(ctx: Ctx, workspaceId: string, stageId: string, field = 'stage_id'): Promise<Stage> {
  const [stage] = rows(await ctx.asApp.data.from('pipeline_stages').select<Stage>('*', { query: `id=${eq(stageId)}&workspace_id=${eq(workspaceId)}` }), 'pipeline_stages');
  if (!stage) throw new HttpError(400, 'invalid_field', `${field} is not a stage of this workspace.`);
  return stage;
}

const DAY_MS = 86_400_000;

/**
 * The forecast category the rule gives a deal: won deals are closed, lost ones omitted; an open deal is commit at 75 %
 * or more closing within 30 days, best case at 50 % or more closing within 90 days (or undated), else pipeline.
 * A deal whose close date has passed stays in pipeline until someone re-dates it: it is not forecast to close.
 */
export function forecastOf(stage: Pick<Stage, 'kind' | 'probability'>, closeDate: string | null, now = Date.now()): Forecast {
  if (stage.kind === 'won') return 'closed';
  if (stage.kind === 'lost') return 'omitted';
  const days = closeDate ? (Date.parse(`${closeDate}T23:59:59Z`) - now) / DAY_MS : null;
  if (days !== null && days < 0) return 'pipeline';
  if (stage.probability >= 75 && days !== null && days <= 30) return 'commit';
  if (stage.probability >= 50 && (days === null || days <= 90)) return 'best_case';
  return 'pipeline';
}

/** An amount field: a finite number of at least 0 with at most 2 decimals (numeric(14,2)). */
export function amountOf(input: Record<string, unknown>, key: string): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value >= 1e12 || Math.round(value * 100) !== value * 100) {
    throw new HttpError(400, 'invalid_field', `${key} must be a number of at least 0 with at most 2 decimals.`);
  }
  return value;
}

/** A date field (YYYY-MM-DD). */
export function dateOf(input: Record<string, unknown>, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new HttpError(400, 'invalid_field', `${key} must be a date (YYYY-MM-DD).`);
  }
  return value;
}
