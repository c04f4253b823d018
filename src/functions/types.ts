import { z } from 'zod';
import { CronError, parseCron, cronNext } from '../core/cron.ts';
import type { EndUser, PlatformCall, PlatformCallAnswer } from './protocol.ts';

export const TRIGGER_TYPES = ['http', 'cron', 'websocket'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** Spec limits (Limits table) and our own documented caps. */
export const LIMITS = {
  nameMax: 100,
  codeMaxBytes: 1024 * 1024,
  descriptionMax: 2000,
  timeoutDefault: 30_000,
  timeoutMin: 100,
  timeoutMax: 300_000,
  memoryDefault: 128,
  memoryMin: 64,
  memoryMax: 1024,
  envMaxVars: 100,
  envMaxValueBytes: 32 * 1024,
  envMaxTotalBytes: 256 * 1024,
  logsLimitDefault: 100,
  logsLimitMax: 1000,
  /** Functions per page of functions_list (besides its byte bound). */
  listMax: 1000,
  /** Console output kept per invocation. */
  consoleMaxBytes: 64 * 1024,
  eventMax: 100,
} as const;

/** Injected into ctx.env by the runtime; a function may not define them itself. */
export const RESERVED_ENV = ['SVC_APP_ID', 'SVC_API_URL'] as const;

export const FunctionNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,100}$/, 'a function name is 1-100 characters: letters, digits, "_" and "-" (it is a URL path segment)')
  .describe('Unique per app: /v1/{app_id}/fn/{name}');

export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name is letters, digits and "_", not starting with a digit')
  .max(200)
  .refine((n) => !(RESERVED_ENV as readonly string[]).includes(n), { message: `SVC_APP_ID and SVC_API_URL are injected by the runtime and cannot be set` });

export const EnvMapSchema = z
  .record(EnvNameSchema, z.string().max(LIMITS.envMaxValueBytes, `a variable's value is at most ${LIMITS.envMaxValueBytes} characters`))
  .refine((m) => Object.keys(m).length <= LIMITS.envMaxVars, { message: `at most ${LIMITS.envMaxVars} variables` });

export const CronScheduleSchema = z
  .string()
  .max(200)
  .superRefine((value, ctx) => {
    try {
      const schedule = parseCron(value);
      if (!cronNext(schedule, new Date())) ctx.addIssue({ code: 'custom', message: `cron schedule '${value}' never fires` });
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof CronError ? `invalid cron schedule: ${err.message}` : 'invalid cron schedule' });
    }
  })
  .describe('5-field cron in UTC, e.g. "*/5 * * * *", "0 9 * * MON-FRI"');

export const TriggerSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('http'), config: z.object({}).strict().default({}) }),
    z.object({ type: z.literal('cron'), config: z.object({ schedule: CronScheduleSchema }).strict() }),
    z.object({
      type: z.literal('websocket'),
      config: z
        .object({
          event: z
            .string()
            .min(1)
            .max(LIMITS.eventMax)
            .describe('Clients send { "event": <name>, "data" } on /v1/{app_id}/ws'),
        })
        .strict(),
    }),
  ])
  .describe('http (default: public at /v1/{app_id}/fn/{name}), cron or websocket');
export type Trigger = z.output<typeof TriggerSchema>;

export interface ConsoleLine {
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  message: string;
}

/** What an invocation needs without the code: read per request (briefly cached). */
export interface FunctionMeta {
  id: string;
  appId: string;
  name: string;
  version: string;
  timeoutMs: number;
  memoryLimitMb: number;
  trigger: Trigger;
}

export const TriggerViewSchema = z.object({ type: z.enum(TRIGGER_TYPES), config: z.record(z.string(), z.unknown()) });

export const MetricsSchema = z.object({
  total_invocations: z.number().int(),
  error_count: z.number().int().describe('Invocations that ended with status >= 500 or an error (timeout, out of memory, thrown)'),
  error_rate: z.number().describe('error_count / total_invocations as a percentage (0-100, two decimals); 0 when there are none'),
  avg_duration_ms: z.number().describe('Mean wall-clock duration in ms (two decimals); 0 when there are none'),
  last_invocation: z.string().nullable().describe('ISO timestamp of the latest invocation, or null'),
});

export const FunctionSchema = z.object({
  id: z.string(),
  app_id: z.string(),
  name: z.string(),
  description: z.string(),
  trigger: TriggerViewSchema,
  timeoutMs: z.number().int(),
  memoryLimitMb: z.number().int(),
  env_var_names: z.array(z.string()).describe('Names of the encrypted variables; values are never returned'),
  version: z.string().describe('Changes on every deploy and variable update'),
  code_bytes: z.number().int(),
  url: z.string().nullable().describe('Public invocation URL (any method) for http functions; null for cron and websocket functions'),
  next_run_at: z.string().nullable().describe('Cron functions: the next scheduled slot (UTC); null otherwise'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FunctionView = z.infer<typeof FunctionSchema>;

export const LogEntrySchema = z.object({
  id: z.string(),
  trigger: z.string().describe('http (public route), test (functions_invoke), cron, websocket, or runtime: a process the platform stopped outside any invocation (error says why; not counted as an invocation)'),
  method: z.string(),
  path: z.string(),
  status_code: z.number().int(),
  duration_ms: z.number().int(),
  memory_mb: z.number().int().nullable().describe("Peak resident memory of the function's process seen during the invocation, in MB"),
  error: z.string().nullable(),
  level: z.enum(['info', 'error']),
  console: z.array(z.object({ level: z.string(), message: z.string() })).describe('console.* output of the invocation (at most 64 KB)'),
  created_at: z.string(),
});
export type LogEntryView = z.infer<typeof LogEntrySchema>;

/**
 * How a running function reaches its platform (ctx.data, ctx.substrate, ctx.billing, ctx.integrations and fetch() to
 * the platform's own URL): a transport (src/transports/platform-channel.ts) that the composition root attaches.
 */
export interface PlatformChannel {
  /** Whether the app is linked to a substrate user (ctx.substrate is then present); at once when it is known. */
  substrateLinked(appId: string): boolean | Promise<boolean>;
  /** The platform as one invocation reaches it, until end(). */
  open(meta: FunctionMeta, user: EndUser | null): InvocationChannel;
}

export interface InvocationChannel {
  /** One call of the running invocation; a platform error is its result (the function sees a response). */
  call(call: PlatformCall): Promise<PlatformCallAnswer>;
  /**
   * The invocation ended (however): what it left open (a ctx.data.transaction) is rolled back. Never rejects;
   * undefined when the invocation made no call, so there is nothing to wait for.
   */
  end(): Promise<void> | undefined;
}

/**
 * The origins whose fetch() a function hands to the platform: the base URL's, the one SVC_API_URL is under. Not the
 * listener's own address: functions are given SVC_API_URL, and other loopback URLs stay closed like any other.
 */
export function platformOrigins(baseUrl: string): string[] {
  return [new URL(baseUrl).origin];
}
