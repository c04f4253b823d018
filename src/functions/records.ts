// The function row as stored and as shown: the columns a view needs, the view itself, the cached invocation
// metadata (FunctionMeta), and the env-size rule deploy and env updates share.
import type { Selectable } from 'kysely';
import { errors } from '../core/errors.ts';
import { cronNext, parseCron } from '../core/cron.ts';
import { jsonObject, type JsonValue } from '../db/json.ts';
import type { ControlDatabase } from '../db/types.ts';
import { LIMITS, type FunctionMeta, type FunctionView, type Trigger, type TriggerType } from './types.ts';

type Functions = Selectable<ControlDatabase['functions']>;
export type FunctionRow = Pick<Functions, (typeof ROW_COLUMNS)[number]> & { code_bytes: number };

/** Selected with `octet_length(code) as code_bytes` so a view never loads the code itself. */
export const ROW_COLUMNS = [
  'id',
  'app_id',
  'name',
  'description',
  'env_names',
  'timeout_ms',
  'memory_limit_mb',
  'trigger_type',
  'trigger_config',
  'version',
  'created_at',
  'updated_at',
] as const;

/** The columns metaOf reads: what an invocation needs, without the code. */
export const META_COLUMNS = ['id', 'app_id', 'name', 'version', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config'] as const;

export type MetaRow = Pick<Functions, (typeof META_COLUMNS)[number]>;

/** Counter columns of the function row (written in batches by logs.ts). */
export type CounterRow = Pick<Functions, 'invocations' | 'error_count' | 'total_duration_ms' | 'last_invocation_at'>;

export type FunctionMetrics = { total_invocations: number; error_count: number; error_rate: number; avg_duration_ms: number; last_invocation: string | null };

export function functionView(row: FunctionRow, baseUrl: string): FunctionView {
  const trigger = triggerOf(row.trigger_type, row.trigger_config);
  let next: string | null = null;
  if (trigger.type === 'cron') next = cronNext(parseCron(trigger.config.schedule), new Date())?.toISOString() ?? null;
  return {
    id: row.id,
    app_id: row.app_id,
    name: row.name,
    description: row.description,
    trigger,
    timeoutMs: row.timeout_ms,
    memoryLimitMb: row.memory_limit_mb,
    env_var_names: row.env_names,
    version: row.version,
    code_bytes: Number(row.code_bytes),
    url: trigger.type === 'http' ? `${baseUrl}/v1/${row.app_id}/fn/${row.name}` : null,
    next_run_at: next,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Counters as shown: the error rate in percent and the mean duration, both to two decimals. */
export function metricsView(row: CounterRow): FunctionMetrics {
  const total = Number(row.invocations);
  const errorCount = Number(row.error_count);
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return {
    total_invocations: total,
    error_count: errorCount,
    error_rate: total ? round2((errorCount / total) * 100) : 0,
    avg_duration_ms: total ? round2(Number(row.total_duration_ms) / total) : 0,
    last_invocation: row.last_invocation_at?.toISOString() ?? null,
  };
}

export function metaOf(row: MetaRow): FunctionMeta {
  return {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    version: row.version,
    timeoutMs: row.timeout_ms,
    memoryLimitMb: row.memory_limit_mb,
    trigger: triggerOf(row.trigger_type, row.trigger_config),
  };
}

/** The stored trigger config is JSON: only the field its type uses is kept, as a string. */
export function triggerOf(type: TriggerType, stored: JsonValue): Trigger {
  const config = jsonObject(stored);
  if (type === 'cron') return { type, config: { schedule: String(config.schedule) } };
  if (type === 'websocket') return { type, config: { event: String(config.event) } };
  return { type: 'http', config: {} };
}

export function checkEnvSize(env: Record<string, string>): void {
  const total = Object.entries(env).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v, 'utf8'), 0);
  if (total > LIMITS.envMaxTotalBytes) throw errors.validation(`Invalid 'envVars': names and values together are at most ${LIMITS.envMaxTotalBytes / 1024} KB.`);
}
