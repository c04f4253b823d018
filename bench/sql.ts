// What GET /apps and apps_list fundamentally need, with nothing else around it: shared by both baselines.
import { createHash } from 'node:crypto';
import pg from 'pg';

export interface AppView {
  app_id: string;
  name: string;
  subdomain: string;
  url: string;
  region: string;
  created_at: string;
  paused_at: string | null;
}

interface AppRow {
  id: string;
  account_id: string;
  name: string;
  subdomain: string;
  db_name: string;
  region: string | null;
  created_at: Date;
  paused_at: Date | null;
}

const KEY_SQL = 'select id, account_id from platform_keys where key_hash = $1';
const APPS_SQL = `select id, account_id, name, subdomain, db_name, region, created_at, paused_at from apps
  where account_id = $1 and status = 'ready' order by created_at, id`;

/** The same pool size as the platform's control pool (SVC_CONTROL_POOL_SIZE default). */
export function openPool(databaseUrl: string): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: 10 });
}

/**
 * Where the apps' URLs point: each app on its own host `{subdomain}.{appsDomain}` under the scheme of the platform's
 * base URL, as the platform's default SVC_BASE_DOMAIN has it for a loopback base URL (src/apps/hosts.ts).
 */
export interface AppHosts {
  scheme: string;
  appsDomain: string;
}

/** The apps' hosts of a platform whose base URL and apps' domain (BASE_URL, APPS_DOMAIN) the driver passes. */
export function appHosts(baseUrl: string, appsDomain: string): AppHosts {
  return { scheme: new URL(baseUrl).protocol, appsDomain };
}

/** Two round trips: the platform key by its sha256 hash, then the account's ready apps. Undefined for a bad key. */
export async function listApps(pool: pg.Pool, authorization: string | undefined, hosts: AppHosts): Promise<{ apps: AppView[] } | undefined> {
  const token = /^Bearer\s+(svc_pk_\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (!token) return undefined;
  const hash = createHash('sha256').update(token).digest('hex');
  const key = await pool.query<{ id: string; account_id: string }>(KEY_SQL, [hash]);
  const accountId = key.rows[0]?.account_id;
  if (!accountId) return undefined;
  const { rows } = await pool.query<AppRow>(APPS_SQL, [accountId]);
  return {
    // Apps made before regions have none: the default region, which the bench's platform leaves at `local`.
    apps: rows.map((a) => ({
      app_id: a.id,
      name: a.name,
      subdomain: a.subdomain,
      url: `${hosts.scheme}//${a.subdomain}.${hosts.appsDomain}`,
      region: a.region ?? 'local',
      created_at: a.created_at.toISOString(),
      paused_at: a.paused_at?.toISOString() ?? null,
    })),
  };
}

/** Child processes report their port on stdout as `ready <port>`. */
export function announce(port: number): void {
  process.stdout.write(`ready ${port}\n`);
}
