// Branches and governed change (docs/branches.md). A branch is a clone of an app (the templates
// area's clone job, the parent standing in for the template) with data by choice, listed under its parent; its row
// keeps the parent's state it started from (state.ts), the base of a merge's three-way diff (three-way.ts). A merge
// plans the branch's changes against production as they are now; conflicts block it. On an unprotected app, or for a
// person with the role, the merge job is queued at once; on a protected one an agent's merge is a proposal in the
// substrate ledger (capability merge_branch) that a person approves, which queues the job. The job resumes where a
// kill left it, so production ends either untouched (refused before the first step) or fully merged.
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { AppError, errors } from '../core/errors.ts';
import { enqueue } from '../core/jobs.ts';
import { isUuid } from '../core/uuid.ts';
import type { Caller } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject } from '../db/json.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import type { AppChanges } from '../apps/changes.ts';
import type { AppsService } from '../apps/service.ts';
import { actsAsPerson } from '../apps/protection.ts';
import type { AppRecord } from '../apps/types.ts';
import type { AiSettingsStore } from '../ai/settings.ts';
import { PLANS, isPlanId } from '../billing/plans.ts';
import type { CatalogCache } from '../schema/catalog-cache.ts';
import { applySchema } from '../schema/service.ts';
import type { FunctionsService } from '../functions/service.ts';
import type { Trigger } from '../functions/types.ts';
import type { FrontendService } from '../frontend/service.ts';
import type { Framework } from '../frontend/types.ts';
import type { SubstrateService } from '../substrate/service.ts';
import type { MergeBranchPayload } from '../substrate/capabilities/merge-branch.ts';
import { readSource } from '../templates/source.ts';
import { takeSeedSnapshot, type SampleOptions, type SeedSnapshot } from '../templates/seed.ts';
import { listFiles } from '../templates/files.ts';
import type { TemplatesService } from '../templates/service.ts';
import type { CloneStatus } from '../templates/types.ts';
import { branchesMerge } from './jobs.ts';
import { filesDigest, readState, siteDigestOf, stateDigest, type Units } from './state.ts';
import { describeKey, mergeChanges, threeWay, type MergeChanges, type UnitDiff } from './three-way.ts';
import { branchErrors } from './errors.ts';
import type { BranchData, BranchView, DiffView, MergeStatus, MergeView, UnitChangeView } from './types.ts';

export interface BranchesDeps {
  db: Kysely<ControlDatabase>;
  apps: AppsService;
  databases: AppDatabases;
  catalogs: CatalogCache;
  appChanges: AppChanges;
  functions: FunctionsService;
  frontend: FrontendService;
  aiSettings: AiSettingsStore;
  substrate: SubstrateService;
  templates: TemplatesService;
  /** How long a branch lives without a request, unless it asks for another (SVC_BRANCH_IDLE_DAYS). */
  idleDays: number;
  log: Logger;
}

/** What the merge job needs beyond the changes: the branch's live site when it is carried over, and its digest. */
interface StoredChanges extends MergeChanges {
  site_deployment: string | null;
  site_digest?: string | null;
}

/** Steps of a merge that have run, so a resumed job skips them (branch_merges.plan.progress is not used: see progress). */
interface Progress {
  schema?: true;
  functions?: true;
  site_deployment?: string;
  site?: true;
  ai?: true;
}

interface MergeRow {
  id: string;
  account_id: string;
  parent_app_id: string;
  branch_app_id: string | null;
  status: MergeStatus;
  changes: StoredChanges;
  plan: MergePlan;
  production: string;
  branch_state: Units;
  action_id: string | null;
  proposed_by: string;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

/** What a person reads of a merge: each change in words, the SQL, what destroys data, what cannot be merged. */
interface MergePlan {
  changes: string[];
  statements: string[];
  destructive: string[];
  notes: string[];
  progress?: Progress;
}

/**
 * A merge `m` (joined to its substrate action `a`) still under way: queued, running, or proposed and undecided. A
 * rejected proposal keeps status 'proposed' on the merge; its action says it is over.
 */
const MERGE_UNDER_WAY = sql`(m.status in ('queued', 'running') or (m.status = 'proposed' and a.status = 'proposed'))`;

/** A statement that destroys data: a person is told before approving it. */
const DESTRUCTIVE = /^\s*(drop\s|truncate\s|alter\s+table\s+\S+\s+drop\s)/i;

export class BranchesService {
  readonly #d: BranchesDeps;

  constructor(deps: BranchesDeps) {
    this.#d = deps;
  }

  #stateDeps() {
    return { db: this.#d.db, appSql: (id: string) => this.#d.databases.sql(id), siteDir: (app: string, id: string) => this.#d.frontend.siteDir(app, id) };
  }

  /**
   * Makes a branch of `parent`: the clone is requested with the parent's state recorded as the branch's base, in one
   * transaction that also holds the plan's limit of branches per app. A branch of a branch is refused (a merge goes
   * into the app a branch was made from, and one level keeps that plain).
   */
  async create(parent: AppRecord, input: BranchData & { name?: string | undefined; secrets: string[]; idle_days?: number | undefined }): Promise<BranchView> {
    const { db, databases } = this.#d;
    if (await this.#branchRow(parent.id)) throw branchErrors.branchOfBranch(parent.id);
    checkData(input);
    // Refused before any row is copied (and again under the lock, for concurrent requests).
    await this.#holdLimit(db, parent);
    const base = await readState(this.#stateDeps(), parent.id);
    const seed = await this.#seed(parent, input);
    try {
      return await this.#request(parent, input, base.units, seed);
    } catch (err) {
      // The copied rows are no one's once the branch is refused.
      if (seed) await db.deleteFrom('template_seed_snapshots').where('id', '=', seed.id).execute();
      throw err;
    }
  }

  async #request(parent: AppRecord, input: BranchData & { name?: string | undefined; secrets: string[]; idle_days?: number | undefined }, base: Units, seed: SeedSnapshot | null): Promise<BranchView> {
    const { db, databases } = this.#d;
    const pinned = await readSource({ db, appSql: (id) => databases.sql(id) }, parent.id, { env: Object.fromEntries(input.secrets.map((n) => [n, 'copy' as const])) }, seed ?? undefined);
    // A branch is a working copy: no Stripe products of its own, no substrate link, no owner's to-do from the parent.
    const source = { ...pinned, plans: [], products: [], substrate_link: false, setup: [] };
    const idleDays = input.idle_days ?? this.#d.idleDays;
    const name = input.name ?? `${parent.name} (branch)`.slice(0, 100);
    const clone = await this.#d.templates.clones.request(parent.account_id, source, name, parent.region ?? databases.defaultRegion, async (tx, made) => {
      await this.#holdLimit(tx, parent);
      await tx
        .insertInto('app_branches')
        .values({ app_id: made.appId, parent_app_id: parent.id, account_id: parent.account_id, clone_id: made.cloneId, base: JSON.stringify(base), data: JSON.stringify({ data: input.data, tables: input.tables, mask: input.mask, rows: input.rows ?? null }), idle_days: idleDays })
        .execute();
    });
    this.#d.log.info({ app_id: clone.app_id, parent_app_id: parent.id }, 'branch requested');
    return this.get(parent.account_id, clone.app_id);
  }

  /** The rows a branch starts with: none, the named tables' rows no end user owns (seed), or a masked sample. */
  async #seed(parent: AppRecord, data: BranchData) {
    if (data.data === 'none') return null;
    const app = this.#d.databases.sql(parent.id);
    return this.#d.db.transaction().execute(async (tx) => {
      if (data.data === 'seed') return takeSeedSnapshot(tx, app, parent.id, { seed_tables: data.tables });
      const sample: SampleOptions = { keepUserId: true, mask: data.mask, limit: data.rows, maskKey: randomBytes(32).toString('hex') };
      return takeSeedSnapshot(tx, app, parent.id, { seed_tables: data.tables, seed_end_user_rows: data.tables }, sample);
    });
  }

  /** The plan's branches per app, counted under a lock on the parent so that concurrent requests cannot pass it together. */
  async #holdLimit(tx: Kysely<ControlDatabase>, parent: AppRecord): Promise<void> {
    if (tx.isTransaction) await sql`select pg_advisory_xact_lock(hashtextextended(${'svc_branches:' + parent.id}, 0))`.execute(tx);
    const { rows } = await sql<{ plan: string; n: string }>`select a.plan, (select count(*) from app_branches where parent_app_id = ${parent.id})::text as n
      from accounts a where a.id = ${parent.account_id}`.execute(tx);
    const plan = rows[0] && isPlanId(rows[0].plan) ? rows[0].plan : 'free';
    const limit = PLANS[plan].branchesPerApp;
    if (limit !== undefined && Number(rows[0]?.n ?? 0) >= limit) throw branchErrors.tooMany(parent.id, limit, plan);
  }

  /** A branch of the account, with its clone's progress. */
  async get(accountId: string, branchAppId: string): Promise<BranchView> {
    const [view] = await this.#views(sql`b.app_id = ${branchAppId} and b.account_id = ${accountId}`);
    if (!view) throw branchErrors.notFound(branchAppId);
    return view;
  }

  /** An app's branches, its merges (the latest 20), whether it is protected and, for a branch, its parent. */
  async list(app: AppRecord): Promise<{ protected: boolean; parent_app_id: string | null; branches: BranchView[]; merges: MergeView[] }> {
    const [branches, merges, isProtected, self] = await Promise.all([
      this.#views(sql`b.parent_app_id = ${app.id}`),
      this.#mergeRows(sql`m.parent_app_id = ${app.id}`),
      this.#d.apps.isProtected(app.id),
      this.#branchRow(app.id),
    ]);
    return { protected: isProtected, parent_app_id: self?.parent_app_id ?? null, branches, merges: merges.map((m) => this.#mergeView(m)) };
  }

  async #views(where: ReturnType<typeof sql>): Promise<BranchView[]> {
    const { rows } = await sql<{
      app_id: string; parent_app_id: string; name: string; subdomain: string; status: CloneStatus | null; error: string | null; data: { data: BranchData['data'] };
      idle_days: number; created_at: Date; merged_at: Date | null; last_request_at: Date | null;
    }>`select b.app_id, b.parent_app_id, a.name, a.subdomain, c.status, c.error, b.data, b.idle_days, b.created_at, b.merged_at, a.last_request_at
       from app_branches b join apps a on a.id = b.app_id left join template_clones c on c.id = b.clone_id
       where ${where} order by b.created_at desc limit 100`.execute(this.#d.db);
    return rows.map((r) => {
      const lastActive = Math.max(r.created_at.getTime(), r.merged_at?.getTime() ?? 0, r.last_request_at?.getTime() ?? 0);
      return {
        app_id: r.app_id,
        parent_app_id: r.parent_app_id,
        name: r.name,
        status: r.status === 'ready' || r.status === null ? 'ready' : r.status === 'failed' ? 'failed' : 'copying',
        error: r.error,
        url: this.#d.apps.url(r.subdomain),
        data: r.data.data,
        expires_at: new Date(lastActive + r.idle_days * 86_400_000).toISOString(),
        created_at: r.created_at.toISOString(),
        merged_at: r.merged_at?.toISOString() ?? null,
      };
    });
  }

  /** The branch's three-way diff against its parent: changes to carry over, conflicts, and the SQL they would run. */
  async diff(branch: AppRecord): Promise<DiffView> {
    const { row, parent, base, ours, theirs } = await this.#compare(branch);
    const { changes, conflicts } = threeWay(base, ours.units, theirs.units);
    const merged = mergeChanges(changes);
    const statements = conflicts.length || !merged.schema ? [] : await this.#plan(parent.id, merged);
    return {
      app_id: row.parent_app_id,
      branch_app_id: branch.id,
      changes: changes.map(changeView),
      conflicts: conflicts.map(conflictView),
      statements,
      destructive: statements.filter((s) => DESTRUCTIVE.test(s)),
      notes: merged.notes,
      mergeable: conflicts.length === 0 && changes.length > 0,
    };
  }

  async #compare(branch: AppRecord) {
    const row = await this.#branchRow(branch.id);
    if (!row) throw branchErrors.notABranch(branch.id);
    const parent = await this.#d.apps.get(row.parent_app_id);
    if (!parent) throw branchErrors.parentGone(branch.id);
    const [ours, theirs] = await Promise.all([readState(this.#stateDeps(), branch.id), readState(this.#stateDeps(), parent.id)]);
    return { row, parent, base: row.base, ours, theirs };
  }

  /** The SQL the changes' definition runs on production (schema_apply's dry run): a refusal there refuses the merge. */
  async #plan(parentId: string, merged: MergeChanges): Promise<string[]> {
    return (await applySchema(parentId, this.#d.databases.sql(parentId), { schema: merged.schema!, dry_run: true, name: 'merge plan' })).statements;
  }

  /**
   * Merges the branch into its parent: 409 MERGE_CONFLICT naming each unit both changed, 409 NOTHING_TO_MERGE when
   * the branch changed nothing production lacks. On a protected parent an agent's merge is proposed for a person's
   * approval; otherwise it is queued at once.
   */
  async merge(caller: Caller, branch: AppRecord, proposedBy: string): Promise<MergeView> {
    const { parent, base, ours, theirs } = await this.#compare(branch);
    const { changes, conflicts } = threeWay(base, ours.units, theirs.units);
    if (conflicts.length) throw branchErrors.conflict(parent.id, conflicts.map(conflictView));
    if (!changes.length) throw branchErrors.nothing(branch.id);
    const merged = mergeChanges(changes);
    const statements = merged.schema ? await this.#plan(parent.id, merged) : [];
    const plan: MergePlan = { changes: changes.map((c) => changeView(c).summary), statements, destructive: statements.filter((s) => DESTRUCTIVE.test(s)), notes: merged.notes };
    const stored: StoredChanges = { ...merged, site_deployment: merged.site ? ours.siteDeployment : null, site_digest: merged.site ? siteDigestOf(ours.units) : null };
    // What production keeps of the branch's changes (a dropped index...) stays production's in the branch's next base.
    const nextBase: Units = { ...ours.units };
    for (const key of merged.skipped) {
      if (theirs.units[key] === undefined) delete nextBase[key];
      else nextBase[key] = theirs.units[key]!;
    }
    const direct = actsAsPerson(caller) || !(await this.#d.apps.isProtected(parent.id));
    const id = await this.#d.db.transaction().execute(async (tx) => {
      const { id } = await tx
        .insertInto('branch_merges')
        .values({
          account_id: parent.account_id,
          parent_app_id: parent.id,
          branch_app_id: branch.id,
          status: direct ? 'queued' : 'proposed',
          changes: JSON.stringify(stored),
          plan: JSON.stringify(plan),
          production: stateDigest(theirs.units),
          branch_state: JSON.stringify(nextBase),
          proposed_by: proposedBy,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (direct) await enqueue(tx, branchesMerge, { merge_id: id }, { jobKey: `merge:${id}` });
      return id;
    });
    if (!direct) {
      // A merge whose proposal could not be made is no one's to approve: it fails, saying why.
      await this.#propose(caller, id, parent, branch, plan, stored).catch(async (err: unknown) => {
        await this.#failMerge(id, `its proposal could not be made: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      });
    }
    return this.getMerge(parent.account_id, id);
  }

  /** The merge's proposal, in the ledger of the person behind the agent (or the account's own user): they approve it. */
  async #propose(caller: Caller, id: string, parent: AppRecord, branch: AppRecord, plan: MergePlan, stored: StoredChanges): Promise<void> {
    const actor = await this.#d.substrate.actor(caller);
    // Everything the job will apply, as it will apply it: the approver sees the code, not only its name.
    const payload: MergeBranchPayload = {
      merge_id: id,
      app_id: parent.id,
      branch_app_id: branch.id,
      changes: plan.changes,
      statements: plan.statements,
      destructive: plan.destructive,
      notes: plan.notes,
      functions: Object.entries(stored.functions.deploy).map(([name, f]) => ({ name, code: f.code, sha256: createHash('sha256').update(f.code).digest('hex') })),
      deleted_functions: stored.functions.delete,
      site_digest: stored.site_digest ?? null,
      ai: stored.ai,
    };
    const proposed = await this.#d.substrate.proposeForPlatform(actor, 'merge_branch', payload as unknown as Record<string, unknown>);
    await this.#d.db.updateTable('branch_merges').set({ action_id: proposed.action_id }).where('id', '=', id).execute();
  }

  async getMerge(accountId: string, id: string): Promise<MergeView> {
    const [row] = isUuid(id) ? await this.#mergeRows(sql`m.id = ${id} and m.account_id = ${accountId}`) : [];
    if (!row) throw branchErrors.mergeNotFound(id);
    return this.#mergeView(row);
  }

  async #mergeRows(where: ReturnType<typeof sql>): Promise<Array<MergeRow & { action_status: string | null }>> {
    const { rows } = await sql<MergeRow & { action_status: string | null }>`select m.*, a.status as action_status
      from branch_merges m left join substrate_actions a on a.id = m.action_id where ${where} order by m.created_at desc limit 20`.execute(this.#d.db);
    return rows;
  }

  #mergeView(row: MergeRow & { action_status: string | null }): MergeView {
    // A proposal a person rejected ends the merge: the ledger holds the decision, the merge shows it.
    const status: MergeView['status'] = row.status === 'proposed' && row.action_status === 'rejected' ? 'rejected' : row.status;
    const { progress: _progress, ...plan } = row.plan;
    return {
      merge_id: row.id,
      app_id: row.parent_app_id,
      branch_app_id: row.branch_app_id,
      status,
      action_id: row.action_id,
      ...plan,
      error: row.error,
      created_at: row.created_at.toISOString(),
      finished_at: row.finished_at?.toISOString() ?? null,
    };
  }

  async #branchRow(appId: string): Promise<{ parent_app_id: string; base: Units } | undefined> {
    const row = await this.#d.db.selectFrom('app_branches').select(['parent_app_id', 'base']).where('app_id', '=', appId).executeTakeFirst();
    return row && { parent_app_id: row.parent_app_id, base: jsonObject(row.base) as Units };
  }

  /**
   * The merge job. A duplicate (merged, failed, still proposed) does nothing. Before its first step it checks that
   * production is still the state the plan was made against (else it fails, changing nothing); each step then runs
   * once, recorded in the plan's progress (the schema's by its migration, named after the merge), so a resumed job
   * finishes what a killed one started. A step's refusal fails the merge with its reason.
   */
  async runMerge(id: string, attempt: { number: number; max: number }): Promise<void> {
    const found = await this.#d.db.selectFrom('branch_merges').select('parent_app_id').where('id', '=', id).executeTakeFirst();
    if (!found) return;
    // One merge into an app at a time, on a session lock that a killed process gives back with its connection.
    await this.#d.db.connection().execute(async (conn) => {
      const key = sql`hashtextextended(${'svc_merge:' + found.parent_app_id}, 0)`;
      await sql`select pg_advisory_lock(${key})`.execute(conn);
      try {
        await this.#runLocked(id, attempt);
      } finally {
        await sql`select pg_advisory_unlock(${key})`.execute(conn);
      }
    });
  }

  async #runLocked(id: string, attempt: { number: number; max: number }): Promise<void> {
    const claimed = await sql<MergeRow>`update branch_merges set status = 'running' where id = ${id} and status in ('queued', 'running') returning *`.execute(this.#d.db);
    const row = claimed.rows[0];
    if (!row) return;
    const parent = await this.#d.apps.getForJob(row.parent_app_id);
    if (!parent) return this.#failMerge(id, 'the app is gone');
    const progress: Progress = { ...(row.plan.progress ?? {}) };
    try {
      await this.#applySteps(row, parent, progress);
    } catch (err) {
      const lasting = err instanceof AppError && err.status < 500;
      if (!lasting && attempt.number < attempt.max) throw err;
      this.#d.log.warn({ err, merge_id: id }, 'merge failed');
      const why = err instanceof Error ? err.message : String(err);
      // Said plainly when a step had run: production then holds part of the merge, which a person must see.
      const done = (['schema', 'functions', 'site', 'ai'] as const).filter((step) => progress[step]);
      return this.#failMerge(id, done.length ? `Production is partly merged (done: ${done.join(', ')}); the rest failed: ${why}` : why);
    }
    await this.#d.db.transaction().execute(async (tx) => {
      await tx.updateTable('branch_merges').set({ status: 'merged', finished_at: sql`now()` }).where('id', '=', id).execute();
      // The branch now stands on what it merged: its next merge diffs from here.
      if (row.branch_app_id) {
        await tx.updateTable('app_branches').set({ base: JSON.stringify(row.branch_state), merged_at: sql`now()` }).where('app_id', '=', row.branch_app_id).execute();
      }
    });
    this.#d.log.info({ merge_id: id, app_id: parent.id }, 'merge applied');
  }

  /**
   * The steps, each once (`progress`, kept in the plan). Before the first: the branch's site files, read and checked
   * against the digest the person approved, so that nothing that can vanish is needed after production started to
   * change; and production's state, checked under the schema apply's lock (no other apply can land in between).
   */
  async #applySteps(row: MergeRow, parent: AppRecord, progress: Progress): Promise<void> {
    const mark = async (step: Partial<Progress>) => {
      Object.assign(progress, step);
      await sql`update branch_merges set plan = jsonb_set(plan, '{progress}', ${JSON.stringify(progress)}::jsonb) where id = ${row.id}`.execute(this.#d.db);
    };
    const changes = row.changes;
    const site = !progress.site && changes.site_deployment ? await this.#siteFiles(row) : undefined;
    const migration = `merge ${row.id}`;
    const db = this.#d.databases.sql(parent.id);
    if (!progress.schema) {
      const applied = (await db.query('select 1 from svc_meta.migrations where name = $1', [migration])).rowCount! > 0;
      const unchanged = async () => {
        if (applied || Object.keys(progress).length > 0) return;
        const now = await readState(this.#stateDeps(), parent.id);
        if (stateDigest(now.units) !== row.production) throw branchErrors.productionMoved();
      };
      if (!applied && changes.schema) {
        await applySchema(parent.id, db, { schema: changes.schema, dry_run: false, name: migration, before: unchanged });
        this.#d.catalogs.invalidate(parent.id);
        await this.#d.appChanges.announce(parent.id);
      } else await unchanged();
      await mark({ schema: true });
    }
    if (!progress.functions) {
      for (const [name, f] of Object.entries(changes.functions.deploy)) {
        await this.#d.functions.deploy(parent, { name, code: f.code, description: f.description ?? undefined, timeoutMs: f.timeout_ms, memoryLimitMb: f.memory_limit_mb, trigger: f.trigger as Trigger });
      }
      for (const name of changes.functions.delete) await this.#d.functions.delete(parent.id, name).catch((err: unknown) => (err instanceof AppError && err.status === 404 ? undefined : Promise.reject(err)));
      await mark({ functions: true });
    }
    if (site) await this.#promoteSite(parent, site, progress, mark);
    if (!progress.ai && changes.ai) {
      const ai = changes.ai as { default_model: string | null; max_tokens_per_request: number | null; allowed_models: string[] | null; end_user_daily_token_limit: number | null };
      await this.#d.aiSettings.update(parent.id, { defaultModel: ai.default_model, maxTokensPerRequest: ai.max_tokens_per_request, allowedModels: ai.allowed_models, endUserDailyTokenLimit: ai.end_user_daily_token_limit });
      await mark({ ai: true });
    }
  }

  /** The branch deployment's files the merge carries over, refused unless they are the ones the plan's digest names. */
  async #siteFiles(row: MergeRow): Promise<{ framework: Framework; files: Array<{ path: string; bytes: Buffer }> }> {
    const deploymentId = row.changes.site_deployment!;
    const source = row.branch_app_id ? await this.#d.db.selectFrom('frontend_deployments').select(['framework']).where('id', '=', deploymentId).executeTakeFirst() : undefined;
    const files = source ? await listFiles(this.#d.frontend.siteDir(row.branch_app_id!, deploymentId)).catch(() => undefined) : undefined;
    if (!source || !files?.length) throw branchErrors.siteGone();
    if (filesDigest(files) !== row.changes.site_digest) throw branchErrors.siteGone();
    return { framework: source.framework as Framework, files };
  }

  /** The branch's site as a new deployment of production, built (and so live) before the step ends. */
  async #promoteSite(parent: AppRecord, site: { framework: Framework; files: Array<{ path: string; bytes: Buffer }> }, progress: Progress, mark: (step: Partial<Progress>) => Promise<void>): Promise<void> {
    const { frontend } = this.#d;
    let deploymentId = progress.site_deployment;
    if (!deploymentId) {
      deploymentId = (await frontend.deployFiles(parent.id, site.framework, site.files)).id;
      await mark({ site_deployment: deploymentId });
    }
    if ((await frontend.get(parent.id, deploymentId)).status !== 'READY') await frontend.build(deploymentId, { finalAttempt: true });
    const built = await frontend.get(parent.id, deploymentId);
    if (built.status !== 'READY') throw branchErrors.siteBuild(built.error ?? built.status);
    await mark({ site: true });
  }

  async #failMerge(id: string, message: string): Promise<void> {
    await this.#d.db.updateTable('branch_merges').set({ status: 'failed', error: message.slice(0, 1000), finished_at: sql`now()` }).where('id', '=', id).execute();
  }

  /**
   * Deletes a branch (its app, database, files); its merges stay in the parent's history. Refused while a merge of
   * it waits for a decision or is applying: what it carries over must stay as the person saw it.
   */
  async delete(accountId: string, branchAppId: string, caller: Caller): Promise<void> {
    await this.get(accountId, branchAppId);
    // A branch someone protected is governed like any app.
    await this.#d.apps.guardProtected(branchAppId, caller, 'branches_delete (deleting the app)');
    const { rows } = await sql<{ id: string }>`select m.id from branch_merges m left join substrate_actions a on a.id = m.action_id
      where m.branch_app_id = ${branchAppId} and ${MERGE_UNDER_WAY}`.execute(this.#d.db);
    if (rows[0]) throw branchErrors.merging(branchAppId, rows[0].id);
    await this.#d.apps.delete(branchAppId);
  }

  /**
   * Marks an app protected, or not. Anyone who may change the app may protect it; only a person signed in with the
   * admin role may lift it (an agent must not free itself).
   */
  async protect(caller: Caller, app: AppRecord, value: boolean): Promise<{ app_id: string; protected: boolean }> {
    if (!value && !(caller.kind === 'platform' && caller.via === 'session' && (caller.role === 'owner' || caller.role === 'admin'))) {
      throw branchErrors.unprotectByPerson(app.id);
    }
    await this.#d.db.updateTable('apps').set({ protected: value }).where('id', '=', app.id).execute();
    return { app_id: app.id, protected: value };
  }

  /** Deletes the branches idle past their idle_days (no request, creation or merge since) with no merge under way. */
  async expireIdle(now: Date): Promise<number> {
    const { rows } = await sql<{ app_id: string }>`select b.app_id from app_branches b join apps a on a.id = b.app_id
      where greatest(b.created_at, coalesce(b.merged_at, b.created_at), coalesce(a.last_request_at, b.created_at)) < ${now}::timestamptz - make_interval(days => b.idle_days)
        and not exists (select 1 from branch_merges m left join substrate_actions a on a.id = m.action_id
                         where m.branch_app_id = b.app_id and ${MERGE_UNDER_WAY})`.execute(this.#d.db);
    for (const { app_id } of rows) {
      await this.#d.apps.delete(app_id);
      this.#d.log.info({ app_id }, 'idle branch deleted');
    }
    return rows.length;
  }
}

/** The data options together: tables for seed and sample, a mask only on a sample's own tables. */
function checkData(d: BranchData): void {
  if (d.data === 'none' && (d.tables.length || Object.keys(d.mask).length || d.rows !== undefined)) {
    throw errors.validation("tables, mask and rows copy rows: set data to 'seed' or 'sample' too.", [{ path: 'data', message: "'none' copies no rows" }]);
  }
  if (d.data !== 'none' && !d.tables.length) throw errors.validation(`data '${d.data}' copies the rows of tables: name them in tables, parents first.`, [{ path: 'tables', message: 'required' }]);
  if (d.data === 'seed' && (Object.keys(d.mask).length || d.rows !== undefined)) {
    throw errors.validation("mask and rows apply to a sample (seed rows are no end user's).", [{ path: 'data', message: "set 'sample'" }]);
  }
  const stray = Object.keys(d.mask).find((t) => !d.tables.includes(t));
  if (stray) throw errors.validation(`mask names table '${stray}', which tables does not list.`, [{ path: `mask.${stray}`, message: 'not in tables' }]);
}

function changeView(c: UnitDiff): UnitChangeView {
  const kind = c.base === undefined ? 'added' : c.branch === undefined ? 'removed' : 'changed';
  return { unit: c.key, kind, summary: `${describeKey(c.key)}: ${kind}`, ...(c.branch !== undefined ? { branch: JSON.parse(c.branch) as unknown } : {}) };
}

function conflictView(c: UnitDiff) {
  const value = (v: string | undefined) => (v === undefined ? null : (JSON.parse(v) as unknown));
  return { unit: c.key, summary: `${describeKey(c.key)}: changed on the branch and in production`, base: value(c.base), branch: value(c.branch), production: value(c.production) };
}
