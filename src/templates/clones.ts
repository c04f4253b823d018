// Clones: a template copied into a new app by one job per step (steps.ts). The request writes the new app's row
// (status 'cloning', invisible to callers), the clone row with the template pinned (source.ts) and the first step's
// job in one transaction; each step's job records its end and enqueues the next in another. A failure records the
// step and the reason; retry runs the failed step again, delete removes the app and everything the steps made.
import { sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import { AppError } from '../core/errors.ts';
import { enqueue } from '../core/jobs.ts';
import { isUuid } from '../core/uuid.ts';
import type { Caller } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject, type JsonValue } from '../db/json.ts';
import { deriveSubdomain, randomId, type AppsService } from '../apps/service.ts';
import { templateErrors } from './errors.ts';
import { templatesCloneStep } from './jobs.ts';
import { todoOf } from './source.ts';
import { holdSeedSnapshot, pruneSeedSnapshots } from './seed.ts';
import { CloneStepError, STEPS, type CloneDeps, type CloneProgress } from './steps.ts';
import { CLONE_STEPS, type CloneStatus, type CloneStep, type CloneView, type TemplateSource } from './types.ts';

export interface ClonesDeps extends CloneDeps {
  apps: AppsService;
  baseUrl: string;
  /** Clones in progress one account may have (SVC_CLONES_PER_ACCOUNT). */
  perAccount: number;
  log: Logger;
}

const CLONE_COLUMNS = ['id', 'account_id', 'template_app_id', 'template_version', 'app_id', 'name', 'region', 'status', 'failed_step', 'error', 'source', 'progress', 'todo', 'created_at', 'finished_at'] as const;

interface CloneRow {
  id: string;
  account_id: string;
  template_app_id: string;
  template_version: string;
  app_id: string;
  name: string;
  region: string;
  status: CloneStatus;
  failed_step: CloneStep | null;
  error: string | null;
  source: unknown;
  progress: JsonValue;
  todo: unknown;
  created_at: Date;
  finished_at: Date | null;
}

const IN_PROGRESS: readonly CloneStatus[] = ['queued', ...CLONE_STEPS];
const ERROR_MAX = 1000;

export class Clones {
  readonly #d: ClonesDeps;

  constructor(deps: ClonesDeps) {
    this.#d = deps;
  }

  /**
   * Writes the new app's row, the clone and its first step's job together; answers the clone to poll. `within` writes
   * what else must exist with the clone (a branch's row), in its transaction.
   */
  async request(
    accountId: string,
    source: TemplateSource,
    name: string,
    region: string,
    within?: (tx: Transaction<ControlDatabase>, made: { appId: string; cloneId: string }) => Promise<void>,
  ): Promise<CloneView> {
    const { db, databases } = this.#d;
    const appId = randomId(16);
    const inserted = await db.transaction().execute(async (tx) => {
      // Clone requests of one account serialize here, so the cap holds under concurrency.
      await sql`select pg_advisory_xact_lock(hashtextextended(${'svc_clones:' + accountId}, 0))`.execute(tx);
      const busy = await tx
        .selectFrom('template_clones')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('account_id', '=', accountId)
        .where('status', 'in', IN_PROGRESS)
        .executeTakeFirstOrThrow();
      if (Number(busy.n) >= this.#d.perAccount) throw templateErrors.tooManyClones(this.#d.perAccount);
      if (source.seed_snapshot_id) await holdSeedSnapshot(tx, source.template_app_id, source.seed_snapshot_id);
      await tx
        .insertInto('apps')
        .values({ id: appId, account_id: accountId, name, subdomain: deriveSubdomain(name), db_name: databases.dbName(appId), status: 'cloning', region })
        .execute();
      const row = await tx
        .insertInto('template_clones')
        .values({
          account_id: accountId,
          template_app_id: source.template_app_id,
          template_version: source.version,
          app_id: appId,
          name,
          region,
          source: JSON.stringify(source),
          todo: JSON.stringify(todoOf(source, source.plans.length + source.products.length > 0)),
        })
        .returning(CLONE_COLUMNS)
        .executeTakeFirstOrThrow();
      await within?.(tx, { appId, cloneId: row.id });
      await this.#enqueueStep(tx, row.id, 'database');
      return row as CloneRow;
    });
    this.#d.log.info({ clone_id: inserted.id, app_id: appId, template_app_id: source.template_app_id, region }, 'clone requested');
    // The row as inserted: a re-read after commit could already show the worker's first step.
    return this.#view(inserted);
  }

  async get(accountId: string, id: string): Promise<CloneView> {
    const row = await this.#row(id);
    if (!row || row.account_id !== accountId) throw templateErrors.cloneNotFound(id);
    return this.#view(row);
  }

  async list(accountId: string): Promise<CloneView[]> {
    const rows = (await this.#select().where('account_id', '=', accountId).orderBy('created_at', 'desc').limit(100).execute()) as CloneRow[];
    return rows.map((r) => this.#view(r));
  }

  /** A failed clone runs its failed step again; a ready one whose billing waited on Stripe Connect runs billing. */
  async retry(accountId: string, id: string, caller: Caller): Promise<CloneView> {
    const row = await this.#row(id);
    if (!row || row.account_id !== accountId) throw templateErrors.cloneNotFound(id);
    // A ready clone's retry makes its plans at Stripe: a change of the app, a person's on a protected one.
    await this.#d.apps.guardProtected(row.app_id, caller, 'templates_clone_retry (billing of the app)');
    const progress = jsonObject(row.progress) as CloneProgress;
    const step: CloneStep | null = row.status === 'failed' ? row.failed_step : row.status === 'ready' && progress.billing_deferred ? 'billing' : null;
    if (!step) throw templateErrors.notRetryable(row.status);
    await this.#d.db.transaction().execute(async (tx) => {
      const moved = await tx
        .updateTable('template_clones')
        .set({ status: step, failed_step: null, error: null, finished_at: null, updated_at: sql`now()` })
        .where('id', '=', id)
        .where('status', '=', row.status)
        .executeTakeFirst();
      if (moved.numUpdatedRows === 0n) throw templateErrors.notRetryable('changing');
      await this.#enqueueStep(tx, id, step);
    });
    return this.get(accountId, id);
  }

  /** Removes an unfinished clone and what it made: the app's row (the clone goes with it), database and files. */
  async delete(accountId: string, id: string, caller: Caller): Promise<void> {
    const row = await this.#row(id);
    if (!row || row.account_id !== accountId) throw templateErrors.cloneNotFound(id);
    await this.#d.apps.guardProtected(row.app_id, caller, 'templates_clone_delete (deleting the app)');
    if (row.status === 'ready') throw templateErrors.finished();
    await this.#d.apps.delete(row.app_id);
    // The snapshot it held (a republished template's earlier one) may now be no one's.
    await this.#d.db.transaction().execute((tx) => pruneSeedSnapshots(tx, row.template_app_id));
  }

  /**
   * One step's job. A duplicate (the clone moved on, or was deleted) does nothing. A step that fails in a way a
   * retry cannot fix (a refused input, CloneStepError) fails the clone at once; anything else is retried by the job
   * until its last attempt, then fails the clone. A kill -9 mid-step leaves the job to run the step again.
   */
  async runStep(id: string, step: CloneStep, attempt: { number: number; max: number }): Promise<void> {
    const row = await this.#row(id);
    if (row?.status === 'queued' && step === CLONE_STEPS[0]) {
      // The first step's start is what moves a clone out of the queue.
      await this.#d.db.updateTable('template_clones').set({ status: step, updated_at: sql`now()` }).where('id', '=', id).where('status', '=', 'queued').execute();
      row.status = step;
    }
    if (!row || row.status !== step) return;
    const app = await this.#d.apps.getForJob(row.app_id);
    if (!app) return;
    const source = row.source as TemplateSource;
    let made: CloneProgress;
    try {
      made = await STEPS[step]({ deps: this.#d, cloneId: id, app, region: row.region, source });
    } catch (err) {
      const lasting = err instanceof CloneStepError || (err instanceof AppError && err.status < 500);
      if (!lasting && attempt.number < attempt.max) throw err;
      this.#d.log.warn({ err, clone_id: id, step }, 'clone step failed');
      await this.#fail(id, step, err instanceof Error ? err.message : String(err));
      return;
    }
    await this.#finishStep(row, step, made);
  }

  async #finishStep(row: CloneRow, step: CloneStep, made: CloneProgress): Promise<void> {
    const progress = { ...(jsonObject(row.progress) as CloneProgress & { finished?: boolean }), ...made };
    // A ready clone's billing retry ends where it started: ready.
    const next = progress.finished ? undefined : CLONE_STEPS[CLONE_STEPS.indexOf(step) + 1];
    await this.#d.db.transaction().execute(async (tx) => {
      const status: CloneStatus = next ?? 'ready';
      const done = next === undefined;
      const moved = await tx
        .updateTable('template_clones')
        .set({
          status,
          progress: JSON.stringify(done ? { ...progress, finished: true } : progress),
          updated_at: sql`now()`,
          ...(done ? { todo: JSON.stringify(todoOf(row.source as TemplateSource, progress.billing_deferred === true)), finished_at: sql`now()` } : {}),
        })
        .where('id', '=', row.id)
        .where('status', '=', step)
        .executeTakeFirst();
      if (moved.numUpdatedRows === 0n) return;
      if (next) await this.#enqueueStep(tx, row.id, next);
      else {
        await tx.updateTable('apps').set({ status: 'ready' }).where('id', '=', row.app_id).where('status', '=', 'cloning').execute();
        // The seed rows this clone held may be the template's last need of an older snapshot.
        await pruneSeedSnapshots(tx, row.template_app_id);
      }
    });
    if (!next) this.#d.log.info({ clone_id: row.id, app_id: row.app_id }, 'clone ready');
  }

  async #fail(id: string, step: CloneStep, message: string): Promise<void> {
    await this.#d.db
      .updateTable('template_clones')
      .set({ status: 'failed', failed_step: step, error: message.slice(0, ERROR_MAX), finished_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', '=', step)
      .execute();
  }

  #enqueueStep(tx: Transaction<ControlDatabase>, id: string, step: CloneStep): Promise<void> {
    return enqueue(tx, templatesCloneStep, { clone_id: id, step }, { jobKey: `clone:${id}:${step}` });
  }

  #select() {
    return this.#d.db
      .selectFrom('template_clones')
      .select(CLONE_COLUMNS);
  }

  async #row(id: string): Promise<CloneRow | undefined> {
    if (!isUuid(id)) return undefined;
    return (await this.#select().where('id', '=', id).executeTakeFirst()) as CloneRow | undefined;
  }

  #view(row: CloneRow): CloneView {
    return {
      clone_id: row.id,
      app_id: row.app_id,
      name: row.name,
      region: row.region,
      template: { app_id: row.template_app_id, version: row.template_version },
      status: row.status,
      failed_step: row.failed_step,
      error: row.error,
      todo: row.todo as CloneView['todo'],
      poll_url: `${this.#d.baseUrl}/v1/clones/${row.id}`,
      created_at: row.created_at.toISOString(),
      finished_at: row.finished_at?.toISOString() ?? null,
    };
  }
}

