import { z } from 'zod';
import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

const DropPayload = z.object({ db_name: z.string().min(1) });

/** Enqueued with every app delete; dropping an already-dropped database is a no-op, so reruns are safe. */
export const appsDropDatabase = (s: WorkerServices): Task => async (payload) => {
  const { db_name } = DropPayload.parse(payload);
  await s.databases.dropByName(db_name);
};

/** Cron: removes provisioning rows of crashed creates and app databases no app row claims. */
export const appsReap = (s: WorkerServices): Task => async (_payload, helpers) => {
  const reaped = await s.apps.reap();
  if (reaped.rows || reaped.databases) helpers.logger.info(`reaped ${reaped.rows} stale app rows, ${reaped.databases} orphan databases`);
};

const PurgePayload = z.object({ app_id: z.string().min(1) });

/** Enqueued with every app delete: each purger removes what it keeps for the app outside its database. */
export const appsPurgeFiles = (s: WorkerServices): Task => async (payload) => {
  const { app_id } = PurgePayload.parse(payload);
  for (const purger of s.purgers) await purger.purgeApp(app_id);
};
