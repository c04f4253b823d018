// An app's AI gateway: its settings (GET/PUT /v1/{app_id}/ai/config) and its usage between two dates, by day.
import { call, query, seg } from '../api.ts';

export interface AiConfig {
  defaultModel: string | null;
  byokKeySet: boolean;
  byokKeyHint: string | null;
  maxTokensPerRequest: number | null;
  allowedModels: string[] | null;
  endUserDailyTokenLimit: number | null;
  updatedAt: string | null;
}

/** What ai_config_set takes: an omitted field keeps its value, null clears it. */
export type AiConfigChange = Partial<Pick<AiConfig, 'defaultModel' | 'maxTokensPerRequest' | 'allowedModels' | 'endUserDailyTokenLimit'>> & { byokKey?: string | null };

export interface Totals {
  tokens: number;
  cost: number;
  requests: number;
}

export interface AiUsage {
  startDate: string;
  endDate: string;
  totalTokens: number;
  totalCost: number;
  creditsUsed: number;
  byModel: Record<string, Totals>;
  byUser: Record<string, Totals>;
  otherUsers: (Totals & { users: number }) | null;
  byDay: Array<Totals & { date: string }>;
}

const base = (appId: string) => `/v1/${seg(appId)}/ai`;

export const ai = {
  config: (appId: string) => call<AiConfig>('GET', `${base(appId)}/config`),
  setConfig: (appId: string, change: AiConfigChange) => call<AiConfig>('PUT', `${base(appId)}/config`, change),
  usage: (appId: string, startDate: string, endDate: string) => call<AiUsage>('GET', `${base(appId)}/usage${query({ startDate, endDate })}`),
};
