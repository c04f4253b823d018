// An app's functions: GET/POST /v1/{app_id}/functions, the function's record with code and lifetime metrics, its
// variables (PATCH .../env), a test invocation (POST .../invoke), its logs (GET .../logs) and its invocations per
// hour or day (GET .../metrics).
import { call, query, seg } from '../api.ts';

export const TRIGGERS = ['http', 'cron', 'websocket'] as const;
export type TriggerType = (typeof TRIGGERS)[number];
export type Trigger = { type: 'http'; config: Record<string, never> } | { type: 'cron'; config: { schedule: string } } | { type: 'websocket'; config: { event: string } };

export interface FunctionInfo {
  id: string;
  name: string;
  description: string;
  trigger: { type: TriggerType; config: Record<string, unknown> };
  timeoutMs: number;
  memoryLimitMb: number;
  env_var_names: string[];
  version: string;
  code_bytes: number;
  url: string | null;
  next_run_at: string | null;
  created_at: string;
  updated_at: string;
}
export interface Metrics {
  total_invocations: number;
  error_count: number;
  error_rate: number;
  avg_duration_ms: number;
  last_invocation: string | null;
}
export interface FunctionDetail extends FunctionInfo {
  code: string;
  metrics: Metrics;
}
export interface ConsoleLine {
  level: string;
  message: string;
}
export interface LogEntry {
  id: string;
  trigger: string;
  method: string;
  path: string;
  status_code: number;
  duration_ms: number;
  memory_mb: number | null;
  error: string | null;
  level: 'info' | 'error';
  console: ConsoleLine[];
  created_at: string;
}
export interface LogFilter {
  level?: 'info' | 'error';
  since?: string;
  until?: string;
  before?: string;
}
export const INVOKE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export interface InvokeRequest {
  method: (typeof INVOKE_METHODS)[number];
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
}
export interface InvokeResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  body_encoding: 'json' | 'text' | 'base64' | 'none';
  truncated: boolean;
  error: string | null;
  console: ConsoleLine[];
  duration_ms: number;
}

export type Bucket = 'hour' | 'day';
export interface MetricsBucket {
  start: string;
  invocations: number;
  errors: number;
  avg_duration_ms: number;
  max_duration_ms: number;
}

const LOG_PAGE = 50;
const base = (appId: string) => `/v1/${seg(appId)}/functions`;
const one = (appId: string, name: string) => `${base(appId)}/${seg(name)}`;

export const functions = {
  /** A page of the app's functions by name (at most 1 MB of them); next_before (null at the end) reads on. */
  list: (appId: string, before?: string) => call<{ functions: FunctionInfo[]; next_before: string | null }>('GET', `${base(appId)}${query({ before })}`),
  get: (appId: string, name: string) => call<FunctionDetail>('GET', one(appId, name)),
  deploy: (appId: string, input: { name: string; code: string; description?: string; trigger: Trigger }) => call<FunctionInfo & { created: boolean }>('POST', base(appId), input),
  remove: (appId: string, name: string) => call('DELETE', one(appId, name)),
  /** Merges variables; null removes one. */
  setEnv: (appId: string, name: string, env: Record<string, string | null>) => call<{ env_var_names: string[] }>('PATCH', `${one(appId, name)}/env`, env),
  invoke: (appId: string, name: string, req: InvokeRequest) => call<InvokeResult>('POST', `${one(appId, name)}/invoke`, req),
  /** The API's default window: the last day of hours, or the last 30 days. */
  series: async (appId: string, name: string, bucket: Bucket) => (await call<{ buckets: MetricsBucket[] }>('GET', `${one(appId, name)}/metrics${query({ bucket })}`)).buckets,
  /** A page is cut at LOG_PAGE entries or ~1 MB of their output; next_before (null at the end) reads on. */
  logs: (appId: string, name: string, f: LogFilter) =>
    call<{ logs: LogEntry[]; next_before: string | null }>('GET', `${one(appId, name)}/logs${query({ limit: String(LOG_PAGE), level: f.level, since: f.since, until: f.until, before: f.before })}`),
};
