// Serverless functions: deploy (validated in the sandbox), manage, invoke through the process pool, log, and
// dispatch cron and websocket triggers. See README "Functions".
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import { AppError, errors } from '../core/errors.ts';
import type { AnyTool, Caller } from '../core/define.ts';
import { invoke as invokeTool } from '../core/invoke.ts';
import type { Services } from '../core/services.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppPurger, AppRecord } from '../apps/types.ts';
import { cronNext, cronSlots, parseCron } from './cron.ts';
import { functionErrors } from './errors.ts';
import { InitError, type InstanceSpec, type ResponseSink, type RunOutcome } from './instance.ts';
import { InvocationLog, trimLogs, type InvocationRecord } from './logs.ts';
import { ClientGone, FunctionPool, type PoolTarget } from './pool.ts';
import type { DataOp, EndUser, PlatformCall, PlatformCallResult } from './protocol.ts';
import { buildDenyList, ensureDir, resolveDenoBinary } from './sandbox.ts';
import {
  LIMITS,
  type ConsoleLine,
  type FunctionMeta,
  type FunctionTables,
  type FunctionView,
  type LogEntryView,
  type Trigger,
  type TriggerType,
} from './types.ts';

type Db = Kysely<ControlDatabase & FunctionTables>;

export interface FunctionsServiceDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  config: Config;
  log: Logger;
}

export interface DeployInput {
  name: string;
  code: string;
  description?: string | undefined;
  envVars?: Record<string, string> | undefined;
  timeoutMs?: number | undefined;
  memoryLimitMb?: number | undefined;
  trigger?: Trigger | undefined;
}

export interface InvocationInput {
  trigger: InvocationRecord['trigger'];
  method: string;
  /** The path after the function name ('/' when empty), still percent-encoded. */
  path: string;
  /** '' or '?...' */
  search: string;
  /** Scheme and host of request.url as the function sees it. */
  origin: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
  user: EndUser | null;
  token: string | null;
  signal?: AbortSignal;
}

export interface TestInvokeInput {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  user: EndUser | null;
  token: string | null;
}

export interface TestInvokeResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  body_encoding: 'json' | 'text' | 'base64' | 'none';
  truncated: boolean;
  error: string | null;
  console: ConsoleLine[];
  duration_ms: number;
}

export interface FunctionDetail extends FunctionView {
  code: string;
  metrics: { total_invocations: number; error_count: number; error_rate: number; avg_duration_ms: number; last_invocation: string | null };
}

export interface WebsocketResult {
  function: string;
  status: number;
  data: unknown;
}

/** Public and websocket invocations: the cached lookup is reused for this long (a deploy here clears it at once). */
const META_TTL_MS = 2000;
/** Responses buffered for test-invoke, cron and websocket replies are cut at this size. */
const BUFFERED_RESPONSE_MAX = 6 * 1024 * 1024;
const WEBSOCKET_REPLY_MAX = 1024 * 1024;
/** A cron function dispatches at most this many missed slots per tick, from at most this far back. */
const CRON_CATCH_UP_SLOTS = 60;
const CRON_CATCH_UP_MS = 60 * 60_000;
/** How often this instance checks that the versions it keeps processes for are still current. */
const VERSION_SWEEP_MS = 30_000;
/**
 * Deno keeps the JavaScript it emitted for every module it loaded (one file per distinct code version, keyed by a
 * hash of the source) under DENO_DIR/gen/data; files older than this are removed hourly (a later cold start of
 * that code simply emits it again).
 */
const EMIT_CACHE_MAX_AGE_MS = 7 * 24 * 3600_000;
const EMIT_CACHE_PRUNE_MS = 3600_000;

class StaleVersion extends Error {}

/** The data tools behind ctx.data, by operation (run through invoke(), as REST and MCP run them). */
const DATA_TOOLS: Record<DataOp, string> = { select: 'data_select', insert: 'data_insert', update: 'data_update', delete: 'data_delete' };

/** What ctx.data and fetch() to the platform's own URL need, wired once the platform is built (src/platform.ts). */
export interface PlatformAccess {
  services: Services;
  tools: readonly AnyTool[];
  /** This process's HTTP listener (http://127.0.0.1:port) when it serves HTTP; else calls go to config.baseUrl. */
  listenUrl?: string | undefined;
}

interface FunctionRow {
  id: string;
  app_id: string;
  name: string;
  description: string;
  env_names: string[];
  timeout_ms: number;
  memory_limit_mb: number;
  trigger_type: TriggerType;
  trigger_config: Record<string, unknown>;
  version: string;
  code_bytes: number;
  created_at: Date;
  updated_at: Date;
}

const ROW_COLUMNS = [
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

export class FunctionsService implements AppPurger {
  readonly pool: FunctionPool;
  readonly #db: Db;
  readonly #box: SecretBox;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #logs: InvocationLog;
  readonly #meta = new Map<string, { meta: FunctionMeta | undefined; expiresMs: number }>();
  readonly #wsTargets = new Map<string, { metas: FunctionMeta[]; expiresMs: number }>();
  readonly #versionSweep: NodeJS.Timeout;
  readonly #cachePrune: NodeJS.Timeout;
  readonly #denoDir: string;
  #platform: PlatformAccess | undefined;

  /** Resolves the Deno binary and the network deny list (DNS of the database hosts) before anything runs. */
  static async create(deps: FunctionsServiceDeps): Promise<FunctionsService> {
    const f = deps.config.functions;
    const denyNet = await buildDenyList({
      databaseUrls: [deps.config.databaseUrl, deps.config.appDatabaseUrl],
      allowPrivateNet: f.allowPrivateNet,
      extra: f.denyNet,
    });
    const deno = resolveDenoBinary(f.denoPath);
    const denoDir = ensureDir(path.join(deps.config.dataDir, 'deno'));
    return new FunctionsService(deps, { deno, denoDir, denyNet });
  }

  private constructor(deps: FunctionsServiceDeps, sandbox: { deno: string; denoDir: string; denyNet: string[] }) {
    this.#db = deps.db.withTables<FunctionTables>();
    this.#box = deps.box;
    this.#config = deps.config;
    this.#log = deps.log.child({ area: 'functions' });
    this.#logs = new InvocationLog(this.#db, this.#log);
    const f = deps.config.functions;
    this.pool = new FunctionPool({
      sandbox,
      rssHeadroomMb: f.rssHeadroomMb,
      maxPerFunction: f.maxWarmPerFunction,
      maxProcesses: f.maxProcesses,
      maxPerApp: f.maxProcessesPerApp,
      maxWaitingPerApp: f.maxWaitingPerApp,
      concurrency: f.concurrencyPerProcess,
      cpuCores: f.cpuCores,
      cpuGraceMs: f.cpuGraceMs,
      onStopped: (spec, reason) => this.#logStop(spec, reason),
      idleMs: f.idleMs,
      startTimeoutMs: f.startTimeoutMs,
      queueTimeoutMs: f.queueTimeoutMs,
      log: this.#log,
    });
    this.#versionSweep = setInterval(() => void this.#sweepVersions().catch(() => {}), VERSION_SWEEP_MS);
    this.#versionSweep.unref();
    this.#denoDir = sandbox.denoDir;
    this.#cachePrune = setInterval(() => void this.pruneEmitCache().catch(() => {}), EMIT_CACHE_PRUNE_MS);
    this.#cachePrune.unref();
  }

  /**
   * Wires ctx.data and fetch() to the platform's own URL (called by src/platform.ts once services exist, and again
   * with the listener once the HTTP server listens). Before this, such calls are refused with 501.
   */
  attach(access: PlatformAccess): void {
    this.#platform = { ...this.#platform, ...access };
  }

  // ---- management ----------------------------------------------------------------------------------------

  /**
   * Deploy or update by name. The new code is loaded in a fresh sandboxed process first: a module that does not
   * parse, throws at load or lacks a default-exported function is refused (FUNCTION_INVALID) and the stored
   * version keeps serving. On success that process becomes the new version's first warm instance.
   * Omitted fields keep their current values on an update (defaults on a create); envVars, when given,
   * replaces the whole set (functions_env_update merges).
   */
  async deploy(app: AppRecord, input: DeployInput): Promise<{ fn: FunctionView; created: boolean }> {
    if (Buffer.byteLength(input.code, 'utf8') > LIMITS.codeMaxBytes) {
      throw errors.validation(`Invalid 'code': at most ${LIMITS.codeMaxBytes} bytes (1 MB).`);
    }
    const existing = await this.#db.selectFrom('functions').selectAll().where('app_id', '=', app.id).where('name', '=', input.name).executeTakeFirst();
    const env = input.envVars ?? (existing ? this.#openEnv(existing.env_sealed) : {});
    checkEnvSize(env);
    const memoryLimitMb = input.memoryLimitMb ?? existing?.memory_limit_mb ?? LIMITS.memoryDefault;
    const timeoutMs = input.timeoutMs ?? existing?.timeout_ms ?? LIMITS.timeoutDefault;
    const trigger: Trigger = input.trigger ?? (existing ? triggerOf(existing.trigger_type, existing.trigger_config) : { type: 'http', config: {} });
    const description = input.description ?? existing?.description ?? '';
    const id = existing?.id ?? randomUUID();
    const version = randomUUID();
    const spec = this.#spec({ id, appId: app.id, name: input.name, version, memoryLimitMb }, input.code, env);

    let instance;
    try {
      instance = await this.pool.validate(spec);
    } catch (err) {
      if (err instanceof InitError) {
        throw functionErrors.invalid(err.message, err.console.length ? { console: err.console } : undefined);
      }
      throw err;
    }

    const sealed = Object.keys(env).length ? this.#box.seal(JSON.stringify(env)) : null;
    const names = Object.keys(env).sort();
    const schedule = trigger.type === 'cron' ? trigger.config.schedule : undefined;
    const oldSchedule = existing?.trigger_type === 'cron' ? String(existing.trigger_config.schedule) : undefined;
    let row: FunctionRow;
    let created = false;
    try {
      // What every deploy writes, new or updated.
      const fields = {
        code: input.code,
        description,
        env_sealed: sealed,
        env_names: names,
        timeout_ms: timeoutMs,
        memory_limit_mb: memoryLimitMb,
        trigger_type: trigger.type,
        trigger_config: JSON.stringify(trigger.config),
        version,
      };
      if (existing) {
        row = await this.#db
          .updateTable('functions')
          .set({
            ...fields,
            // A new or changed schedule starts from now: no slot before the deploy fires.
            cron_cursor: schedule === undefined ? null : schedule === oldSchedule && existing.cron_cursor ? existing.cron_cursor : new Date(),
            updated_at: new Date(),
          })
          .where('id', '=', existing.id)
          .returning([...ROW_COLUMNS, sql<number>`octet_length(code)`.as('code_bytes')])
          .executeTakeFirstOrThrow();
      } else {
        row = await this.#db
          .insertInto('functions')
          .values({ ...fields, id, app_id: app.id, name: input.name, cron_cursor: schedule === undefined ? null : new Date() })
          .returning([...ROW_COLUMNS, sql<number>`octet_length(code)`.as('code_bytes')])
          .executeTakeFirstOrThrow();
        created = true;
      }
    } catch (err) {
      instance.kill('evicted');
      if ((err as { code?: string }).code === '23505') {
        throw errors.conflict(`Function '${input.name}' was created by a concurrent deploy.`, 'Deploy again: it now updates that function.');
      }
      throw err;
    }
    this.#forget(app.id);
    const target = this.#target(metaOf(row));
    this.pool.adopt(target, instance);
    this.pool.retire(row.id, target.key);
    this.#log.info({ app_id: app.id, function: row.name, version: row.version, created }, 'function deployed');
    return { fn: this.view(row), created };
  }

  async list(appId: string): Promise<FunctionView[]> {
    const rows = await this.#db
      .selectFrom('functions')
      .select([...ROW_COLUMNS, sql<number>`octet_length(code)`.as('code_bytes')])
      .where('app_id', '=', appId)
      .orderBy('name')
      .execute();
    return rows.map((r) => this.view(r));
  }

  async get(appId: string, name: string): Promise<FunctionDetail> {
    await this.#logs.flush();
    const row = await this.#db
      .selectFrom('functions')
      .select([...ROW_COLUMNS, 'code', 'invocations', 'error_count', 'total_duration_ms', 'last_invocation_at', sql<number>`octet_length(code)`.as('code_bytes')])
      .where('app_id', '=', appId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw functionErrors.notFound(name);
    const total = Number(row.invocations);
    const errorCount = Number(row.error_count);
    const round2 = (n: number) => Math.round(n * 100) / 100;
    return {
      ...this.view(row),
      code: row.code,
      metrics: {
        total_invocations: total,
        error_count: errorCount,
        error_rate: total ? round2((errorCount / total) * 100) : 0,
        avg_duration_ms: total ? round2(Number(row.total_duration_ms) / total) : 0,
        last_invocation: row.last_invocation_at ? new Date(row.last_invocation_at).toISOString() : null,
      },
    };
  }

  async delete(appId: string, name: string): Promise<void> {
    const row = await this.#db.deleteFrom('functions').where('app_id', '=', appId).where('name', '=', name).returning(['id']).executeTakeFirst();
    if (!row) throw functionErrors.notFound(name);
    this.#forget(appId);
    this.pool.killFunction(row.id, name);
  }

  /** Merges variables (a null value removes one) into a new version; running processes of the old one retire. */
  async updateEnv(appId: string, name: string, patch: Record<string, string | null>): Promise<{ name: string; env_var_names: string[]; version: string }> {
    const result = await this.#db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('functions').select(['id', 'env_sealed']).where('app_id', '=', appId).where('name', '=', name).forUpdate().executeTakeFirst();
      if (!row) throw functionErrors.notFound(name);
      const env = this.#openEnv(row.env_sealed);
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete env[key];
        else env[key] = value;
      }
      if (Object.keys(env).length > LIMITS.envMaxVars) throw errors.validation(`Invalid 'env': at most ${LIMITS.envMaxVars} variables.`);
      checkEnvSize(env);
      const names = Object.keys(env).sort();
      const version = randomUUID();
      await tx
        .updateTable('functions')
        .set({ env_sealed: names.length ? this.#box.seal(JSON.stringify(env)) : null, env_names: names, version, updated_at: new Date() })
        .where('id', '=', row.id)
        .execute();
      return { id: row.id, names, version };
    });
    this.#forget(appId);
    this.pool.retire(result.id, `${result.id}:${result.version}`);
    return { name, env_var_names: result.names, version: result.version };
  }

  async logs(appId: string, name: string, q: { limit: number; since?: Date | undefined; level?: 'error' | 'info' | undefined }): Promise<LogEntryView[]> {
    await this.#logs.flush();
    const fn = await this.#db.selectFrom('functions').select('id').where('app_id', '=', appId).where('name', '=', name).executeTakeFirst();
    if (!fn) throw functionErrors.notFound(name);
    let query = this.#db
      .selectFrom('function_logs')
      .select(['id', 'trigger', 'method', 'path', 'status_code', 'duration_ms', 'memory_mb', 'error', 'level', 'console', 'created_at'])
      .where('function_id', '=', fn.id);
    if (q.since) query = query.where('created_at', '>=', q.since);
    if (q.level) query = query.where('level', '=', q.level);
    const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map((r) => ({
      id: String(r.id),
      trigger: r.trigger,
      method: r.method,
      path: r.path,
      status_code: r.status_code,
      duration_ms: r.duration_ms,
      memory_mb: r.memory_mb,
      error: r.error,
      level: r.level,
      console: r.console,
      created_at: r.created_at.toISOString(),
    }));
  }

  /** Writes pending log rows and counters (tests and readers on other connections call this). */
  flushLogs(): Promise<void> {
    return this.#logs.flush();
  }

  view(row: FunctionRow): FunctionView {
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
      url: trigger.type === 'http' ? `${this.#config.baseUrl}/v1/${row.app_id}/fn/${row.name}` : null,
      next_run_at: next,
      created_at: new Date(row.created_at).toISOString(),
      updated_at: new Date(row.updated_at).toISOString(),
    };
  }

  // ---- invocation ----------------------------------------------------------------------------------------

  /** The function behind the public route: 404 unless it exists and has an http trigger. */
  async publicFunction(appId: string, name: string): Promise<FunctionMeta> {
    const meta = await this.#lookup(appId, name);
    if (!meta) throw functionErrors.notFound(name);
    if (meta.trigger.type !== 'http') throw functionErrors.notPublic(name, meta.trigger.type);
    return meta;
  }

  /**
   * Runs one invocation and records it (log row, counters, meter). Resolves with the outcome (a function's
   * failure is an outcome); rejects when no process could run it (busy, failed to start, gone, client gone).
   */
  async invoke(meta: FunctionMeta, input: InvocationInput, sink: ResponseSink, retried = false): Promise<RunOutcome> {
    const at = new Date();
    const started = performance.now();
    const record = (statusCode: number, error: string | null, extra: Partial<InvocationRecord> = {}) =>
      this.#logs.add({
        functionId: meta.id,
        appId: meta.appId,
        trigger: input.trigger,
        method: input.method,
        path: input.path + input.search,
        statusCode,
        durationMs: Math.round(performance.now() - started),
        memoryMb: null,
        error,
        console: [],
        at,
        ...extra,
      });
    let outcome: RunOutcome;
    try {
      outcome = await this.pool.run(
        this.#target(meta),
        {
          method: input.method,
          url: input.origin + (input.path || '/') + input.search,
          headers: input.headers,
          body: input.body,
          user: input.user,
          token: input.token,
          timeoutMs: meta.timeoutMs,
          ...(this.#platform ? { calls: (call: PlatformCall) => this.#platformCall(meta, input.user, call) } : {}),
        },
        sink,
        input.signal,
      );
    } catch (err) {
      if (err instanceof StaleVersion && !retried) {
        this.#forget(meta.appId);
        const fresh = await this.#lookup(meta.appId, meta.name);
        if (!fresh || fresh.id !== meta.id) throw functionErrors.gone(meta.name);
        return this.invoke(fresh, input, sink, true);
      }
      if (err instanceof ClientGone) throw err;
      const appErr = err instanceof AppError ? err : functionErrors.failed('The function could not be started.');
      if (!(err instanceof AppError)) this.#log.error({ err, function_id: meta.id }, 'function invocation failed before it ran');
      if (appErr.status >= 500) record(appErr.status, appErr.message);
      throw appErr;
    }
    record(outcome.status, outcome.failure?.message ?? null, { durationMs: outcome.durationMs, memoryMb: outcome.memoryMb, console: outcome.console });
    return outcome;
  }

  /** functions_invoke: any function (any trigger) with a buffered response, for testing and debugging. */
  async testInvoke(appId: string, name: string, input: TestInvokeInput): Promise<TestInvokeResult> {
    const meta = await this.#lookup(appId, name, true);
    if (!meta) throw functionErrors.notFound(name);
    const url = new URL(input.path.startsWith('/') ? input.path : `/${input.path}`, 'http://function.invalid');
    for (const [k, v] of Object.entries(input.query)) url.searchParams.append(k, v);
    const headers = Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v] as [string, string]);
    let body: Buffer | null = null;
    if (input.body !== undefined && input.body !== null && input.method !== 'GET' && input.method !== 'HEAD') {
      if (typeof input.body === 'string') {
        body = Buffer.from(input.body, 'utf8');
      } else {
        body = Buffer.from(JSON.stringify(input.body), 'utf8');
        if (!headers.some(([k]) => k === 'content-type')) headers.push(['content-type', 'application/json']);
      }
    }
    if (input.user && !headers.some(([k]) => k === 'authorization')) headers.push(['authorization', `Bearer ${input.token}`]);
    const sink = new BufferSink(BUFFERED_RESPONSE_MAX);
    const outcome = await this.invoke(
      meta,
      {
        trigger: 'test',
        method: input.method,
        path: url.pathname,
        search: url.search,
        origin: new URL(this.#config.baseUrl).origin,
        headers,
        body,
        user: input.user,
        token: input.token,
      },
      sink,
    );
    const failure = outcome.failure && !outcome.headSent ? failureError(outcome, meta) : undefined;
    const decoded = failure ? { body: envelopeOf(failure), body_encoding: 'json' as const } : decodeBody(sink.body(), sink.headers['content-type']);
    return {
      status: failure ? failure.status : outcome.status,
      headers: failure ? { 'content-type': 'application/json' } : sink.headers,
      ...decoded,
      truncated: sink.truncated,
      error: outcome.failure?.message ?? null,
      console: outcome.console,
      duration_ms: outcome.durationMs,
    };
  }

  // ---- triggers ------------------------------------------------------------------------------------------

  /**
   * The cron dispatcher (every minute, and callable with any `now` by tests): for each cron function, the slots
   * after its cursor up to `now` (at most the last hour) are enqueued as functions_run_cron jobs with the job key
   * `fncron:<function id>:<slot>` and the cursor advances, in one transaction. Rows are claimed with SKIP LOCKED,
   * so concurrent ticks on several workers never dispatch the same slot twice.
   */
  async cronTick(now: Date = new Date()): Promise<{ functions: number; enqueued: number }> {
    return this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ id: string; trigger_config: { schedule?: string }; cron_cursor: Date | null; created_at: Date }>`
        select id, trigger_config, cron_cursor, created_at from functions
        where trigger_type = 'cron' and (cron_cursor is null or cron_cursor < ${now})
        for update skip locked`.execute(tx);
      let enqueued = 0;
      for (const row of rows) {
        const cursor = row.cron_cursor ?? row.created_at;
        const after = new Date(Math.max(cursor.getTime(), now.getTime() - CRON_CATCH_UP_MS));
        let slots: Date[] = [];
        try {
          slots = cronSlots(parseCron(String(row.trigger_config.schedule)), after, now, CRON_CATCH_UP_SLOTS);
        } catch (err) {
          this.#log.error({ err, function_id: row.id }, 'stored cron schedule does not parse');
        }
        for (const slot of slots) {
          const at = slot.toISOString();
          await sql`select graphile_worker.add_job('functions_run_cron', json_build_object('function_id', ${row.id}::text, 'scheduled_at', ${at}::text),
            job_key => ${`fncron:${row.id}:${at}`}::text, job_key_mode => 'preserve_run_at', max_attempts => 3)`.execute(tx);
          enqueued++;
        }
        await sql`update functions set cron_cursor = ${now} where id = ${row.id}`.execute(tx);
      }
      return { functions: rows.length, enqueued };
    });
  }

  /** One scheduled slot: a POST with JSON { scheduled_at }. Skipped when the function is gone or no longer cron. */
  async runCron(functionId: string, scheduledAt: string): Promise<RunOutcome | undefined> {
    const row = await this.#db.selectFrom('functions').select(['id', 'app_id', 'name', 'version', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config']).where('id', '=', functionId).executeTakeFirst();
    if (!row || row.trigger_type !== 'cron') return undefined;
    const body = Buffer.from(JSON.stringify({ scheduled_at: scheduledAt }));
    return this.invoke(
      metaOf(row),
      {
        trigger: 'cron',
        method: 'POST',
        path: '/',
        search: '',
        origin: new URL(this.#config.baseUrl).origin,
        headers: [
          ['content-type', 'application/json'],
          ['x-svc-trigger', 'cron'],
          ['x-svc-scheduled-at', scheduledAt],
        ],
        body,
        user: null,
        token: null,
      },
      new BufferSink(0),
    );
  }

  /** Websocket functions of the app listening to `event` (briefly cached). */
  async websocketTargets(appId: string, event: string): Promise<FunctionMeta[]> {
    const key = `${appId}\0${event}`;
    const hit = this.#wsTargets.get(key);
    if (hit && hit.expiresMs > Date.now()) return hit.metas;
    const rows = await this.#db
      .selectFrom('functions')
      .select(['id', 'app_id', 'name', 'version', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config'])
      .where('app_id', '=', appId)
      .where('trigger_type', '=', 'websocket')
      .where(sql<string>`trigger_config ->> 'event'`, '=', event)
      .orderBy('name')
      .execute();
    const metas = rows.map(metaOf);
    if (this.#wsTargets.size > 10_000) this.#wsTargets.clear();
    this.#wsTargets.set(key, { metas, expiresMs: Date.now() + META_TTL_MS });
    return metas;
  }

  /** One websocket message for one function: POST { event, data }; the reply's body is parsed as JSON when it is JSON. */
  async runWebsocket(meta: FunctionMeta, event: string, data: unknown, user: EndUser | null, token: string | null, signal?: AbortSignal): Promise<WebsocketResult> {
    const sink = new BufferSink(WEBSOCKET_REPLY_MAX);
    try {
      const outcome = await this.invoke(
        meta,
        {
          trigger: 'websocket',
          method: 'POST',
          path: '/',
          search: '',
          origin: new URL(this.#config.baseUrl).origin,
          headers: [
            ['content-type', 'application/json'],
            ['x-svc-trigger', 'websocket'],
            ['x-svc-event', event],
            ...(token ? [['authorization', `Bearer ${token}`] as [string, string]] : []),
          ],
          body: Buffer.from(JSON.stringify({ event, data: data ?? null })),
          user,
          token,
          ...(signal ? { signal } : {}),
        },
        sink,
      );
      const failure = outcome.failure && !outcome.headSent ? failureError(outcome, meta) : undefined;
      if (failure) return { function: meta.name, status: failure.status, data: envelopeOf(failure) };
      return { function: meta.name, status: outcome.status, data: decodeBody(sink.body(), sink.headers['content-type']).body };
    } catch (err) {
      const appErr = err instanceof AppError ? err : functionErrors.failed();
      return { function: meta.name, status: appErr.status, data: envelopeOf(appErr) };
    }
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /** App deleted: its processes end at once here (rows go with the app row's cascade). */
  async purgeApp(appId: string): Promise<void> {
    this.#forget(appId);
    this.pool.killApp(appId);
  }

  /** The retention cron: keep the newest SVC_FUNCTIONS_LOG_RETENTION rows per function. */
  async trimLogs(): Promise<number> {
    await this.#logs.flush();
    return trimLogs(this.#db, this.#config.functions.logRetention);
  }

  /** Removes Deno's emitted JavaScript of modules not loaded for EMIT_CACHE_MAX_AGE_MS. Returns the files removed. */
  async pruneEmitCache(maxAgeMs = EMIT_CACHE_MAX_AGE_MS): Promise<number> {
    const dir = path.join(this.#denoDir, 'gen', 'data');
    let removed = 0;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const file = path.join(dir, name);
      const info = await stat(file).catch(() => undefined);
      if (!info || Date.now() - Math.max(info.mtimeMs, info.atimeMs) < maxAgeMs) continue;
      await rm(file, { force: true });
      removed++;
    }
    return removed;
  }

  async stop(): Promise<void> {
    clearInterval(this.#versionSweep);
    clearInterval(this.#cachePrune);
    await this.pool.stop();
    await this.#logs.close();
  }

  // ---- internals -----------------------------------------------------------------------------------------

  async #lookup(appId: string, name: string, fresh = false): Promise<FunctionMeta | undefined> {
    const key = `${appId}\0${name}`;
    const hit = this.#meta.get(key);
    if (!fresh && hit && hit.expiresMs > Date.now()) return hit.meta;
    const row = await this.#db
      .selectFrom('functions')
      .select(['id', 'app_id', 'name', 'version', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config'])
      .where('app_id', '=', appId)
      .where('name', '=', name)
      .executeTakeFirst();
    const meta = row ? metaOf(row) : undefined;
    if (this.#meta.size > 10_000) this.#meta.clear();
    this.#meta.set(key, { meta, expiresMs: Date.now() + META_TTL_MS });
    return meta;
  }

  #forget(appId: string): void {
    for (const key of this.#meta.keys()) if (key.startsWith(`${appId}\0`)) this.#meta.delete(key);
    for (const key of this.#wsTargets.keys()) if (key.startsWith(`${appId}\0`)) this.#wsTargets.delete(key);
  }

  #target(meta: FunctionMeta): PoolTarget {
    return {
      key: `${meta.id}:${meta.version}`,
      functionId: meta.id,
      appId: meta.appId,
      name: meta.name,
      load: async () => {
        const row = await this.#db.selectFrom('functions').select(['code', 'env_sealed', 'version', 'memory_limit_mb']).where('id', '=', meta.id).executeTakeFirst();
        if (!row) throw functionErrors.gone(meta.name);
        if (row.version !== meta.version) throw new StaleVersion(meta.name);
        return this.#spec({ id: meta.id, appId: meta.appId, name: meta.name, version: meta.version, memoryLimitMb: row.memory_limit_mb }, row.code, this.#openEnv(row.env_sealed));
      },
    };
  }

  #spec(f: { id: string; appId: string; name: string; version: string; memoryLimitMb: number }, code: string, env: Record<string, string>): InstanceSpec {
    return {
      key: `${f.id}:${f.version}`,
      functionId: f.id,
      appId: f.appId,
      name: f.name,
      code,
      env: { ...env, SVC_APP_ID: f.appId, SVC_API_URL: `${this.#config.baseUrl}/v1/${f.appId}` },
      memoryLimitMb: f.memoryLimitMb,
      platformOrigins: this.#platformOrigins(),
      allowPrivateNet: this.#config.functions.allowPrivateNet,
    };
  }

  /**
   * The origins whose fetch() a function hands to the platform: the base URL's, the one SVC_API_URL is under. Not the
   * listener's own address: functions are given SVC_API_URL, and other loopback URLs stay closed like any other.
   */
  #platformOrigins(): string[] {
    return [new URL(this.#config.baseUrl).origin];
  }

  /**
   * One call of a running invocation to its own platform. The app is always the function's own (the runner names
   * none), and the caller is the invocation's: the verified end user whose token reached the function, else the app
   * itself as a service caller (all rows of this app, like a service key of it; never another app).
   */
  async #platformCall(meta: FunctionMeta, user: EndUser | null, call: PlatformCall): Promise<PlatformCallResult> {
    const access = this.#platform;
    if (!access) throw new Error('platform access is not wired');
    try {
      if (call.kind === 'fetch') return await this.#platformFetch(access, call);
      const tool = access.tools.find((t) => t.name === DATA_TOOLS[call.op]);
      if (!tool) throw new Error(`tool ${DATA_TOOLS[call.op]} is not registered`);
      let caller: Caller;
      if (user) {
        caller = { kind: 'user', appId: meta.appId, userId: user.id, claims: user.claims };
      } else {
        const app = await access.services.apps.get(meta.appId);
        if (!app) throw functionErrors.gone(meta.name);
        caller = { kind: 'service', accountId: app.account_id, appId: meta.appId, keyId: `function:${meta.id}` };
      }
      const input: Record<string, unknown> = { app_id: meta.appId, table: call.table, query: call.query };
      if (call.prefer !== undefined) input.prefer = call.prefer;
      if ((call.op === 'insert' || call.op === 'update') && call.body !== undefined) input.body = call.body;
      const out = (await invokeTool(tool, input, {
        services: access.services,
        caller,
        requestId: randomUUID(),
        clientId: `function:${meta.id}`,
        log: this.#log,
      })) as { status: number; data?: unknown; content_range?: string };
      return { status: out.status, data: out.data ?? null, ...(out.content_range ? { contentRange: out.content_range } : {}) };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { status: err.status, error: { code: err.code, message: err.message, remediation: err.remediation } };
    }
  }

  /**
   * fetch() to a URL under the platform's own origin, sent to this process's HTTP listener (or to config.baseUrl
   * when it serves none) with the function's headers as given: the route then authenticates whatever credential the
   * function holds, exactly as for any client. Redirects are not followed; request and response bodies are capped.
   */
  async #platformFetch(access: PlatformAccess, call: Extract<PlatformCall, { kind: 'fetch' }>): Promise<PlatformCallResult> {
    let url: URL;
    try {
      url = new URL(call.url);
    } catch {
      throw errors.validation(`Invalid URL '${call.url.slice(0, 200)}'.`);
    }
    // Never trust the runner: only the platform's own origins are forwarded, and only to the platform.
    if (!this.#platformOrigins().includes(url.origin)) throw errors.validation(`'${url.origin}' is not this platform's address.`);
    const body = call.body ? Buffer.from(call.body, 'base64') : null;
    const maxBody = this.#config.functions.maxBodyBytes;
    if (body && body.length > maxBody) throw errors.payloadTooLarge(`${Math.round(maxBody / 1024 / 1024)} MB`);
    const target = new URL(url.pathname + url.search, access.listenUrl ?? this.#config.baseUrl);
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of call.headers) {
      const lower = key.toLowerCase();
      // Forwarding headers are the platform's to set: a function could otherwise pose as any client address.
      if (['host', 'content-length', 'connection', 'transfer-encoding', 'forwarded'].includes(lower) || lower.startsWith('x-forwarded-')) continue;
      const prev = headers[lower];
      headers[lower] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
    headers.host = url.host;
    if (body) headers['content-length'] = String(body.length);
    const max = this.#config.dataMaxResponseBytes;
    return new Promise<PlatformCallResult>((resolve, reject) => {
      const req = (target.protocol === 'https:' ? https : http).request(target, { method: call.method, headers, timeout: 60_000 }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > max) {
            res.destroy();
            resolve({ status: 502, error: { code: 'RESPONSE_TOO_LARGE', message: `The platform's response exceeds ${max} bytes (SVC_DATA_MAX_RESPONSE_BYTES).`, remediation: 'Ask for fewer rows or columns per request.' } });
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const out: Array<[string, string]> = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const key = res.rawHeaders[i]!.toLowerCase();
            if (key === 'connection' || key === 'keep-alive' || key === 'transfer-encoding') continue;
            out.push([key, res.rawHeaders[i + 1]!]);
          }
          resolve({ status: res.statusCode ?? 502, headers: out, body: size ? Buffer.concat(chunks).toString('base64') : null });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('the platform did not answer within 60 s')));
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  }

  #openEnv(sealed: string | null): Record<string, string> {
    return sealed ? (JSON.parse(this.#box.open(sealed)) as Record<string, string>) : {};
  }

  /** A process stopped outside any invocation (its CPU use) gets a log row of its own, so the developer sees why. */
  #logStop(spec: InstanceSpec, reason: string): void {
    this.#logs.add({
      functionId: spec.functionId,
      appId: spec.appId,
      trigger: 'runtime',
      method: '-',
      path: '-',
      statusCode: 0,
      durationMs: 0,
      memoryMb: null,
      error: reason,
      console: [],
      at: new Date(),
    });
  }

  /** Versions kept warm here that another instance replaced or deleted retire within VERSION_SWEEP_MS. */
  async #sweepVersions(): Promise<void> {
    const live = this.pool.liveVersions();
    if (!live.length) return;
    const ids = [...new Set(live.map((l) => l.functionId))];
    const rows = await this.#db.selectFrom('functions').select(['id', 'version', 'name']).where('id', 'in', ids).execute();
    const current = new Map(rows.map((r) => [r.id, r]));
    for (const l of live) {
      const row = current.get(l.functionId);
      if (!row) this.pool.killFunction(l.functionId, l.name);
      else if (`${row.id}:${row.version}` !== l.key) this.pool.retire(row.id, `${row.id}:${row.version}`);
    }
  }
}

/** Collects a response in memory up to a cap (the rest is read and dropped). */
export class BufferSink implements ResponseSink {
  status = 0;
  headers: Record<string, string> = {};
  truncated = false;
  readonly #max: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;

  constructor(max: number) {
    this.#max = max;
  }

  head(status: number, headers: Array<[string, string]>): void {
    this.status = status;
    for (const [k, v] of headers) {
      const name = k.toLowerCase();
      this.headers[name] = name in this.headers ? `${this.headers[name]}, ${v}` : v;
    }
  }

  chunk(data: Buffer): boolean {
    if (this.#size + data.length > this.#max) {
      this.truncated = this.truncated || this.#max > 0;
      const room = this.#max - this.#size;
      if (room > 0) this.#chunks.push(data.subarray(0, room));
      this.#size = this.#max;
      return true;
    }
    this.#chunks.push(data);
    this.#size += data.length;
    return true;
  }

  body(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

function metaOf(row: { id: string; app_id: string; name: string; version: string; timeout_ms: number; memory_limit_mb: number; trigger_type: TriggerType; trigger_config: Record<string, unknown> }): FunctionMeta {
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

function triggerOf(type: TriggerType, config: Record<string, unknown>): Trigger {
  if (type === 'cron') return { type, config: { schedule: String(config.schedule) } };
  if (type === 'websocket') return { type, config: { event: String(config.event) } };
  return { type: 'http', config: {} };
}

function checkEnvSize(env: Record<string, string>): void {
  const total = Object.entries(env).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v, 'utf8'), 0);
  if (total > LIMITS.envMaxTotalBytes) throw errors.validation(`Invalid 'envVars': names and values together are at most ${LIMITS.envMaxTotalBytes / 1024} KB.`);
}

/** The error a caller gets for a failed invocation whose response had not started. */
export function failureError(outcome: RunOutcome, meta: FunctionMeta): AppError {
  const kind = outcome.failure?.kind;
  if (kind === 'timeout') return functionErrors.timeout(meta.timeoutMs);
  if (kind === 'memory') return functionErrors.outOfMemory(meta.memoryLimitMb);
  if (kind === 'aborted') return functionErrors.aborted();
  if (kind === 'cpu') return functionErrors.cpuExceeded();
  return functionErrors.failed();
}

function envelopeOf(err: AppError): { error: { code: string; message: string; remediation: string } } {
  return { error: { code: err.code, message: err.message, remediation: err.remediation } };
}

const TEXTUAL = /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

function decodeBody(body: Buffer, contentType: string | undefined): { body: unknown; body_encoding: 'json' | 'text' | 'base64' | 'none' } {
  if (!body.length) return { body: null, body_encoding: 'none' };
  const type = contentType ?? '';
  if (/json/i.test(type)) {
    try {
      return { body: JSON.parse(body.toString('utf8')), body_encoding: 'json' };
    } catch {
      // not valid JSON after all: fall through to text
    }
  }
  if (!type || TEXTUAL.test(type)) {
    const text = body.toString('utf8');
    if (!text.includes('\uFFFD')) return { body: text, body_encoding: 'text' };
  }
  return { body: body.toString('base64'), body_encoding: 'base64' };
}
