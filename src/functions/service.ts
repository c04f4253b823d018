// Serverless functions: deploy (validated in the sandbox), manage, invoke through the process pool, log, and
// dispatch cron and websocket triggers. See docs/functions.md. The pieces live beside it: the platform channel
// (src/transports/platform-channel.ts, attached as a port), trigger requests (requests.ts), buffered responses (responses.ts), the function row and its
// view (records.ts), the cron tick (cron-dispatch.ts), log reads (logs.ts) and Deno's emit cache (sandbox.ts).
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import { AppError, envelope, errors, type ErrorEnvelope } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject } from '../db/json.ts';
import type { AppPurger, AppRecord } from '../apps/types.ts';
import { dispatchCron } from './cron-dispatch.ts';
import { functionErrors } from './errors.ts';
import { InitError, type InstanceSpec, type ResponseSink, type RunOutcome } from './instance.ts';
import { InvocationLog, readLogs, trimLogs, type InvocationRecord, type LogPage, type LogQuery } from './logs.ts';
import { budgetColumns, nextCursor, withinBudget } from '../db/byte-pages.ts';
import { readBuckets, type Bucket, type MetricsBucket } from './metrics.ts';
import { ClientGone, FunctionPool, type PoolTarget } from './pool.ts';
import type { EndUser, PlatformCall } from './protocol.ts';
import { checkEnvSize, functionView, META_COLUMNS, metaOf, metricsView, ROW_COLUMNS, triggerOf, type FunctionMetrics, type FunctionRow } from './records.ts';
import { cronRequest, testRequest, websocketRequest, type InvocationInput, type TestInvokeInput } from './requests.ts';
import { BufferSink, decodeBody, failureError, type BodyEncoding } from './responses.ts';
import { buildDenyList, EMIT_CACHE_MAX_AGE_MS, ensureDir, pruneEmitCache, resolveDenoBinary } from './sandbox.ts';
import { LIMITS, platformOrigins, type ConsoleLine, type FunctionMeta, type FunctionView, type PlatformChannel, type Trigger } from './types.ts';


type Db = Kysely<ControlDatabase>;

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

export interface TestInvokeResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  body_encoding: BodyEncoding;
  truncated: boolean;
  error: string | null;
  console: ConsoleLine[];
  duration_ms: number;
}

export interface FunctionDetail extends FunctionView {
  code: string;
  metrics: FunctionMetrics;
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
/** How often this instance checks that the versions it keeps processes for are still current. */
const VERSION_SWEEP_MS = 30_000;
/** How often Deno's emit cache is pruned (sandbox.ts, EMIT_CACHE_MAX_AGE_MS). */
const EMIT_CACHE_PRUNE_MS = 3600_000;
/** What one answer of functions_list carries at most (its views' JSON, estimated in SQL). */
export const LIST_MAX_BYTES = 1024 * 1024;
/** A view's JSON besides its name, description, trigger and variable names: ids, url, numbers, dates, field names. */
const VIEW_BYTES = 600;

class StaleVersion extends Error {}

export class FunctionsService implements AppPurger {
  readonly pool: FunctionPool;
  readonly #db: Db;
  readonly #box: SecretBox;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #logs: InvocationLog;
  readonly #meta = new Map<string, { meta: FunctionMeta | undefined; expiresMs: number }>();
  readonly #wsTargets = new Map<string, { metas: FunctionMeta[]; expiresMs: number }>();
  /** Pool targets of the cached metas: one per meta, not one (and its key string and loader) per invocation. */
  readonly #targets = new WeakMap<FunctionMeta, PoolTarget>();
  readonly #versionSweep: NodeJS.Timeout;
  readonly #cachePrune: NodeJS.Timeout;
  readonly #denoDir: string;
  #platform: PlatformChannel | undefined;

  /** Resolves the Deno binary and the network deny list (DNS of the database hosts) before anything runs. */
  static async create(deps: FunctionsServiceDeps): Promise<FunctionsService> {
    const f = deps.config.functions;
    const denyNet = await buildDenyList({
      databaseUrls: [deps.config.databaseUrl, ...deps.config.regions.clusters.values()],
      allowPrivateNet: f.allowPrivateNet,
      extra: f.denyNet,
    });
    const deno = resolveDenoBinary(f.denoPath);
    const denoDir = ensureDir(path.join(deps.config.dataDir, 'deno'));
    return new FunctionsService(deps, { deno, denoDir, denyNet });
  }

  private constructor(deps: FunctionsServiceDeps, sandbox: { deno: string; denoDir: string; denyNet: string[] }) {
    this.#db = deps.db;
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
   * Wires ctx.data, ctx.substrate and fetch() to the platform's own URL (src/transports/platform-channel.ts, attached
   * by src/composition.ts once services exist). Before this, such calls are refused with 501.
   */
  attach(channel: PlatformChannel): void {
    this.#platform = channel;
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
    const oldSchedule = existing?.trigger_type === 'cron' ? String(jsonObject(existing.trigger_config).schedule) : undefined;
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

  /**
   * The app's functions by name, a page at a time: at most `limit` and about LIST_MAX_BYTES of their views (a function
   * may carry a 2,000-character description and 100 variable names), after the function named `before`.
   */
  async list(appId: string, page: { limit: number; before?: string | undefined }): Promise<{ functions: FunctionView[]; next_before: string | null }> {
    let query = this.#db
      .selectFrom('functions')
      .select([...ROW_COLUMNS, sql<number>`octet_length(code)`.as('code_bytes')])
      .select(budgetColumns(sql`${VIEW_BYTES} + octet_length(name) + octet_length(description) + octet_length(trigger_config::text) + coalesce(octet_length(array_to_string(env_names, '')) + 3 * cardinality(env_names), 0)`, sql`name`))
      .where('app_id', '=', appId);
    if (page.before !== undefined) query = query.where('name', '>', page.before);
    const rows = await this.#db
      .selectFrom(query.orderBy('name').limit(page.limit).as('p'))
      .selectAll()
      .where(withinBudget(LIST_MAX_BYTES))
      .orderBy('name')
      .execute();
    return { functions: rows.map((r) => this.view(r)), next_before: nextCursor(rows, (r) => r.name) };
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
    return { ...this.view(row), code: row.code, metrics: metricsView(row) };
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

  async logs(appId: string, name: string, q: LogQuery): Promise<LogPage> {
    return readLogs(this.#db, await this.#flushedId(appId, name), q);
  }

  /** Invocations per hour or day over [start, end), empty buckets included. */
  async metrics(appId: string, name: string, bucket: Bucket, start: Date, end: Date): Promise<MetricsBucket[]> {
    return readBuckets(this.#db, await this.#flushedId(appId, name), bucket, start, end);
  }

  /** The function's id once the pending log rows (and so the rollup) are written, or 404. */
  async #flushedId(appId: string, name: string): Promise<string> {
    await this.#logs.flush();
    const fn = await this.#db.selectFrom('functions').select('id').where('app_id', '=', appId).where('name', '=', name).executeTakeFirst();
    if (!fn) throw functionErrors.notFound(name);
    return fn.id;
  }

  /** Writes pending log rows and counters (tests and readers on other connections call this). */
  flushLogs(): Promise<void> {
    return this.#logs.flush();
  }

  view(row: FunctionRow): FunctionView {
    return functionView(row, this.#config.baseUrl);
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
    const channel = this.#platform?.open(meta, input.user);
    const linked = this.#platform?.substrateLinked(meta.appId) ?? false;
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
          substrate: typeof linked === 'boolean' ? linked : await linked,
          timeoutMs: meta.timeoutMs,
          ...(channel ? { calls: (call: PlatformCall) => channel.call(call) } : {}),
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
    } finally {
      // Returned, threw, timed out or lost its process: a transaction it left open ends here.
      const ending = channel?.end();
      if (ending) await ending;
    }
    record(outcome.status, outcome.failure?.message ?? null, { durationMs: outcome.durationMs, memoryMb: outcome.memoryMb, console: outcome.console });
    return outcome;
  }

  /** functions_invoke: any function (any trigger) with a buffered response, for testing and debugging. */
  async testInvoke(appId: string, name: string, input: TestInvokeInput): Promise<TestInvokeResult> {
    const meta = await this.#lookup(appId, name, true);
    if (!meta) throw functionErrors.notFound(name);
    const sink = new BufferSink(BUFFERED_RESPONSE_MAX);
    const outcome = await this.invoke(meta, testRequest(input, this.#origin()), sink);
    const failure = outcome.failure && !outcome.headSent ? failureError(outcome, meta) : undefined;
    const decoded = failure ? { body: this.#envelope(failure), body_encoding: 'json' as const } : decodeBody(sink.body(), sink.headers['content-type']);
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
    return dispatchCron(this.#db, this.#log, now);
  }

  /** One scheduled slot: a POST with JSON { scheduled_at }. Skipped when the function is gone or no longer cron. */
  async runCron(functionId: string, scheduledAt: string): Promise<RunOutcome | undefined> {
    const row = await this.#db.selectFrom('functions').select(META_COLUMNS).where('id', '=', functionId).executeTakeFirst();
    if (!row || row.trigger_type !== 'cron') return undefined;
    return this.invoke(metaOf(row), cronRequest(scheduledAt, this.#origin()), new BufferSink(0));
  }

  /** Websocket functions of the app listening to `event` (briefly cached). */
  async websocketTargets(appId: string, event: string): Promise<FunctionMeta[]> {
    const key = `${appId}\0${event}`;
    const hit = this.#wsTargets.get(key);
    if (hit && hit.expiresMs > Date.now()) return hit.metas;
    const rows = await this.#db
      .selectFrom('functions')
      .select(META_COLUMNS)
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
      const outcome = await this.invoke(meta, websocketRequest(event, data, user, token, this.#origin(), signal), sink);
      const failure = outcome.failure && !outcome.headSent ? failureError(outcome, meta) : undefined;
      if (failure) return { function: meta.name, status: failure.status, data: this.#envelope(failure) };
      return { function: meta.name, status: outcome.status, data: decodeBody(sink.body(), sink.headers['content-type']).body };
    } catch (err) {
      const appErr = err instanceof AppError ? err : functionErrors.failed();
      return { function: meta.name, status: appErr.status, data: this.#envelope(appErr) };
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
    return pruneEmitCache(this.#denoDir, maxAgeMs);
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
      .select(META_COLUMNS)
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
    let target = this.#targets.get(meta);
    if (!target) this.#targets.set(meta, (target = this.#newTarget(meta)));
    return target;
  }

  #newTarget(meta: FunctionMeta): PoolTarget {
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
      platformOrigins: platformOrigins(this.#config.baseUrl),
      allowPrivateNet: this.#config.functions.allowPrivateNet,
    };
  }

  /** Scheme and host of request.url for invocations that arrive through no HTTP request (test, cron, websocket). */
  /** An invocation's failure as the /fn route answers it (the standard envelope, linking the functions section). */
  #envelope(err: AppError): ErrorEnvelope {
    return envelope(err.inArea('functions'), this.#config.baseUrl);
  }

  #origin(): string {
    return new URL(this.#config.baseUrl).origin;
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
