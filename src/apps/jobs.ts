// The apps area's jobs: what an app delete leaves to do outside the request, and the reaper.
import { z } from 'zod';
import { defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import type { AppDatabases } from './app-databases.ts';
import type { AppPurger } from './types.ts';

/** Enqueued with every app delete; dropping an already-dropped database is a no-op, so reruns are safe. */
export const appsDropDatabase = defineJob({
  name: 'apps_drop_database',
  // region: absent in jobs enqueued before regions, and for apps of the default region made before them.
  payload: z.object({ db_name: z.string().min(1), region: z.string().optional() }),
  maxAttempts: 25,
  handler: async ({ db_name, region }, { deps }: JobContext<{ databases: AppDatabases }>) => {
    await deps.databases.dropByName(db_name, region);
  },
});

/** Enqueued with every app delete: each purger removes what it keeps for the app outside its database. */
export const appsPurgeFiles = defineJob({
  name: 'apps_purge_files',
  payload: z.object({ app_id: z.string().min(1) }),
  maxAttempts: 25,
  handler: async ({ app_id }, { deps }: JobContext<{ purgers: readonly AppPurger[] }>) => {
    for (const purger of deps.purgers) await purger.purgeApp(app_id);
  },
});

/** Cron: removes provisioning rows of crashed creates and app databases no app row claims. */
export const appsReap = defineCron({
  name: 'apps_reap',
  cron: '*/10 * * * *',
  // The service by shape: naming its type would tie this file into the service's imports.
  handler: async (_payload, { deps, logger }: JobContext<{ apps: { reap(): Promise<{ rows: number; databases: number }> } }>) => {
    const reaped = await deps.apps.reap();
    if (reaped.rows || reaped.databases) logger.info(`reaped ${reaped.rows} stale app rows, ${reaped.databases} orphan databases`);
  },
});
