import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ControlDatabase } from '../db/types.ts';
import type { KeysService, CreatedKey } from '../auth/keys.ts';
import type { EndUserTokens } from '../auth/end-user-tokens.ts';
import type { AppDatabases } from './app-databases.ts';
import { appHostUrl } from './hosts.ts';
import { APP_COLUMNS, type AppDetails, type AppRecord, type AppView, type RegionView } from './types.ts';
import { errors } from '../core/errors.ts';
import { enqueue } from '../core/jobs.ts';
import { prepared } from '../db/prepared.ts';
import { appsDropDatabase, appsPurgeFiles } from './jobs.ts';
import { guardProtected, isProtected } from './protection.ts';
import type { Caller } from '../core/caller.ts';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/**
 * App records are read on every app-scoped call; a short-lived cache saves that round trip. A delete in this
 * process evicts at once; another instance's delete is seen within the TTL (and the dropped database answers 404).
 */
const APP_CACHE_TTL_MS = 5000;
const APP_CACHE_MAX = 5000;
/** Provisioning rows older than this belong to a crashed create and are reaped. */
export const STALE_PROVISIONING_MINUTES = 15;

export function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  // 252 is the largest multiple of 36 below 256: rejection keeps the distribution uniform.
  for (let i = 0; out.length < length; i++) {
    const b = i < bytes.length ? bytes[i]! : randomBytes(1)[0]!;
    if (b < 252) out += ID_ALPHABET[b % 36];
  }
  return out;
}

/** DNS-label-safe slug of the name plus a random suffix, so subdomains are unique and never guessable from another app. */
export function deriveSubdomain(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|(?<!-)-+$/g, '')
    .slice(0, 40)
    .replace(/(?<!-)-+$/g, '');
  return `${slug || 'app'}-${randomId(6)}`;
}

export interface CreatedApp extends AppView {
  service_key: CreatedKey;
  /** The app's publishable key (its row's trigger made it with the app): for browsers and supabase-js. */
  publishable_key: string;
}

export interface AppsServiceDeps {
  db: Kysely<ControlDatabase>;
  databases: AppDatabases;
  keys: KeysService;
  tokens: EndUserTokens;
  baseUrl: string;
  baseDomain: string | undefined;
  log: Logger;
}

export class AppsService {
  readonly #d: AppsServiceDeps;
  readonly #cache = new Map<string, { app: AppRecord; expiresMs: number }>();
  /** An account's ready apps, compiled once: `GET /apps` and `apps_list` are what an agent calls first and often. */
  readonly #listReady: (accountId: string) => Promise<AppRecord[]>;

  constructor(deps: AppsServiceDeps) {
    this.#d = deps;
    this.#listReady = prepared(deps.db, (accountId) => this.#readyApps().where('account_id', '=', accountId).orderBy('created_at').orderBy('id'));
  }

  view(app: AppRecord): AppView {
    return {
      app_id: app.id,
      name: app.name,
      subdomain: app.subdomain,
      url: this.url(app.subdomain),
      region: app.region ?? this.#d.databases.defaultRegion,
      created_at: app.created_at.toISOString(),
      paused_at: app.paused_at?.toISOString() ?? null,
    };
  }

  /** The base URL of the app with this subdomain: its own host when subdomain routing is on, otherwise the platform's. */
  url(subdomain: string): string {
    return appHostUrl(this.#d, subdomain) ?? this.#d.baseUrl;
  }

  /** The view and the app database's migration version (which brings the database up to date first, once per process). */
  async details(app: AppRecord): Promise<AppDetails> {
    return { ...this.view(app), migration_version: await this.#d.databases.migrationVersion(app.id) };
  }

  async list(accountId: string): Promise<AppRecord[]> {
    return this.#listReady(accountId);
  }

  async get(appId: string): Promise<AppRecord | undefined> {
    const hit = this.#cache.get(appId);
    if (hit && hit.expiresMs > Date.now()) return hit.app;
    const app = await this.#readyApps().where('id', '=', appId).executeTakeFirst();
    if (app) {
      if (this.#cache.size >= APP_CACHE_MAX) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(appId, { app, expiresMs: Date.now() + APP_CACHE_TTL_MS });
    } else {
      this.#cache.delete(appId);
    }
    return app;
  }

  /**
   * An app background work may act on: a ready one, or one a clone is still making (its steps start jobs for it, such
   * as RAG ingestion, before it is ready). Not cached: jobs are few and must see a clone's app at once.
   */
  async getForJob(appId: string): Promise<AppRecord | undefined> {
    return this.#d.db.selectFrom('apps').select(APP_COLUMNS).where('id', '=', appId).where('status', 'in', ['ready', 'cloning']).executeTakeFirst();
  }

  /** Ends the app's pause (and restarts its idle clock); undefined when there is no such app. */
  async restore(appId: string): Promise<AppRecord | undefined> {
    this.#cache.delete(appId);
    await this.#d.db.updateTable('apps').set({ paused_at: null, last_request_at: new Date() }).where('id', '=', appId).execute();
    return this.get(appId);
  }

  /** Whether the app is protected, read from its row (protection.ts). */
  isProtected(appId: string): Promise<boolean> {
    return isProtected(this.#d.db, appId);
  }

  /** Refuses `what` (e.g. "a schema apply") on a protected app unless a person with the role does it (protection.ts). */
  guardProtected(appId: string, caller: Caller, what: string): Promise<void> {
    return guardProtected(this.#d.db, appId, caller, what);
  }

  async bySubdomain(subdomain: string): Promise<AppRecord | undefined> {
    return this.#readyApps().where('subdomain', '=', subdomain).executeTakeFirst();
  }

  /** Apps still provisioning are invisible to every caller. */
  #readyApps() {
    return this.#d.db
      .selectFrom('apps')
      .select(APP_COLUMNS)
      .where('status', '=', 'ready');
  }

  /** The region asked for, or the default one; an unknown name is a 400 naming the valid ones. */
  region(asked: string | undefined): string {
    const { databases } = this.#d;
    if (asked === undefined) return databases.defaultRegion;
    if (!databases.hasRegion(asked)) {
      throw errors.validation(`Unknown region '${asked}'. Regions: ${databases.regions.join(', ')} (omit region for ${databases.defaultRegion}).`, [
        { path: 'region', message: `one of ${databases.regions.join(', ')}` },
      ]);
    }
    return asked;
  }

  /** The regions apps can be placed in, the default first. */
  regions(): RegionView[] {
    const { databases } = this.#d;
    return databases.regions.map((name) => ({ name, default: name === databases.defaultRegion }));
  }

  /**
   * The row is written first as `provisioning`, then the database is made, then keys and the `ready` flip
   * commit together. Any failure removes both; a crash leaves a provisioning row for the reaper. The first service
   * key answers to `createdBy`, the person behind the caller (null: the platform's, e.g. a shipped template).
   */
  async create(accountId: string, name: string, askedRegion?: string, createdBy: string | null = null): Promise<CreatedApp> {
    const { db, databases, keys, tokens } = this.#d;
    const region = this.region(askedRegion);
    const id = randomId(16);
    await db
      .insertInto('apps')
      .values({ id, account_id: accountId, name, subdomain: deriveSubdomain(name), db_name: databases.dbName(id), status: 'provisioning', region })
      .execute();
    try {
      await databases.create(id, region);
      const serviceKey = await db.transaction().execute(async (tx) => {
        await tokens.createSigningKey(id, tx);
        const key = await keys.createService(id, 'default', createdBy, tx);
        await tx.updateTable('apps').set({ status: 'ready' }).where('id', '=', id).execute();
        return key;
      });
      const app = await this.get(id);
      if (!app) throw new Error(`app ${id} vanished while being created`);
      const [publishable] = await keys.listPublishable(id);
      this.#d.log.info({ app_id: id }, 'app created');
      return { ...this.view(app), service_key: serviceKey, publishable_key: publishable!.key };
    } catch (err) {
      await this.#remove(id, region).catch((cleanupErr: unknown) =>
        this.#d.log.error({ err: cleanupErr, app_id: id }, 'cleanup of a failed app create failed; the reaper will retry'),
      );
      throw err;
    }
  }

  /**
   * Deleting the row revokes every key at once (cascade; answered once this process heard so, KeysService.settled);
   * the drop job and the file purge job are enqueued in the same transaction, so the database and the app's files go
   * even if this process dies right after.
   */
  async delete(appId: string): Promise<void> {
    const { db, databases } = this.#d;
    // Its branches (src/branches) are copies of it, its end users' rows perhaps among them: they go with it.
    const branches = await db.selectFrom('app_branches').select('app_id').where('parent_app_id', '=', appId).execute();
    for (const branch of branches) await this.delete(branch.app_id);
    let region: string | null = null;
    await db.transaction().execute(async (tx) => {
      const deleted = await tx.deleteFrom('apps').where('id', '=', appId).returning('region').executeTakeFirst();
      region = deleted?.region ?? null;
      await enqueue(tx, appsDropDatabase, { db_name: databases.dbName(appId), region: region ?? undefined }, { jobKey: 'drop:' + appId });
      await enqueue(tx, appsPurgeFiles, { app_id: appId }, { jobKey: 'purge:' + appId });
    });
    this.#cache.delete(appId);
    this.#d.tokens.forget(appId);
    await this.#d.keys.settled();
    await databases.drop(appId, region);
    this.#d.log.info({ app_id: appId }, 'app deleted');
  }

  /** Removes provisioning rows of crashed creates and databases that no app row claims. */
  async reap(): Promise<{ rows: number; databases: number }> {
    const { db, databases } = this.#d;
    const stale = await db
      .selectFrom('apps')
      .select(['id', 'region'])
      .where('status', '=', 'provisioning')
      .where('created_at', '<', sql<Date>`now() - make_interval(mins => ${STALE_PROVISIONING_MINUTES})`)
      .execute();
    for (const { id, region } of stale) await this.#remove(id, region);
    // A database is claimed by the app row of its name in its own region (an app moved nowhere else).
    const rows = await db.selectFrom('apps').select(['db_name', 'region']).execute();
    const claimed = new Set(rows.map((r) => `${r.region ?? databases.defaultRegion}/${r.db_name}`));
    const orphans = (await databases.listAppDatabases()).filter((d) => !claimed.has(`${d.region}/${d.name}`));
    for (const orphan of orphans) await databases.dropByName(orphan.name, orphan.region);
    return { rows: stale.length, databases: orphans.length };
  }

  async #remove(appId: string, region: string | null): Promise<void> {
    await this.#d.databases.drop(appId, region);
    await this.#d.db.deleteFrom('apps').where('id', '=', appId).execute();
  }
}
