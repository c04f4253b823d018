// The frontend environment of an app: variables sealed at rest with the master key, shipped decrypted to
// browsers by /__env.js together with the platform's own SVC_ values (platformEnv: where the app's API is).
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import { errors } from '../core/errors.ts';
import type { FrontendDb } from './records.ts';
import { ENV_RESERVED_PREFIX, type PlatformEnv } from './types.ts';

/**
 * The app's API as a browser client needs it: the same SVC_API_URL functions get, the data API (postgrest-js and
 * supabase-js take the app's base, and supabase-js's /rest/v1/{table} is served there too) and the end-user auth
 * routes of tools/auth/auth.ts, so that a page reads them instead of composing paths from the guide; and the app's
 * publishable key, which supabase-js is made with (none when every one was revoked).
 */
export function platformEnv(baseUrl: string, appId: string, publishableKey: string | undefined): PlatformEnv {
  const api = `${baseUrl}/v1/${appId}`;
  return {
    SVC_APP_ID: appId,
    SVC_API_URL: api,
    SVC_DATA_URL: api,
    SVC_AUTH_SIGNUP_URL: `${api}/auth/signup`,
    SVC_AUTH_LOGIN_URL: `${api}/auth/login`,
    SVC_AUTH_REFRESH_URL: `${api}/auth/refresh`,
    ...(publishableKey ? { SVC_PUBLISHABLE_KEY: publishableKey } : {}),
  };
}

export interface FrontendEnvDeps {
  db: FrontendDb;
  box: SecretBox;
  config: Config;
}

export class FrontendEnv {
  readonly #deps: FrontendEnvDeps;

  constructor(deps: FrontendEnvDeps) {
    this.#deps = deps;
  }

  /** Replaces the whole frontend environment of an app (PUT semantics); values are sealed with the master key. */
  async set(appId: string, env: Record<string, string>): Promise<{ keys: string[]; updated_at: string }> {
    const reserved = Object.keys(env).filter((k) => k.startsWith(ENV_RESERVED_PREFIX));
    if (reserved.length) {
      throw errors.validation(`Variable names starting with ${ENV_RESERVED_PREFIX} are reserved for the platform: ${reserved.join(', ')}.`, [
        { path: reserved[0]!, message: 'reserved prefix' },
      ]);
    }
    const { db, box } = this.#deps;
    const updatedAt = new Date();
    await db.transaction().execute(async (tx) => {
      await tx.deleteFrom('frontend_env').where('app_id', '=', appId).execute();
      const rows = Object.entries(env).map(([name, value]) => ({ app_id: appId, name, value_sealed: box.seal(value), updated_at: updatedAt as never }));
      if (rows.length) await tx.insertInto('frontend_env').values(rows).execute();
    });
    return { keys: Object.keys(env).sort(), updated_at: updatedAt.toISOString() };
  }

  async keys(appId: string): Promise<string[]> {
    const rows = await this.#deps.db.selectFrom('frontend_env').select('name').where('app_id', '=', appId).orderBy('name').execute();
    return rows.map((r) => r.name);
  }

  /** The decrypted environment plus platformEnv: what /__env.js ships to browsers. */
  async public(appId: string): Promise<Record<string, string>> {
    const { db, box } = this.#deps;
    const rows = await db.selectFrom('frontend_env').select(['name', 'value_sealed']).where('app_id', '=', appId).orderBy('name').execute();
    const env: Record<string, string> = {};
    for (const r of rows) env[r.name] = box.open(r.value_sealed);
    return { ...env, ...(await this.platform(appId)) };
  }

  /** The SVC_ values of the app's pages: where its API is, and its first publishable key. */
  async platform(appId: string): Promise<PlatformEnv> {
    const { db, config } = this.#deps;
    const key = await db.selectFrom('publishable_keys').select('key').where('app_id', '=', appId).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    return platformEnv(config.baseUrl, appId, key?.key);
  }
}
