import type { TaskList } from 'graphile-worker';
import type { AppsService } from '../src/apps/service.ts';
import type { AppDatabases } from '../src/apps/app-databases.ts';
import { appsDropDatabase, appsReap } from './apps.ts';
import { rateLimitsPurge } from './rate-limits.ts';

export interface WorkerServices {
  apps: AppsService;
  databases: AppDatabases;
}

export function taskList(s: WorkerServices): TaskList {
  return {
    apps_drop_database: appsDropDatabase(s),
    apps_reap: appsReap(s),
    rate_limits_purge: rateLimitsPurge,
  };
}

/** Platform crons (graphile-worker crontab syntax; UTC). */
export const crontab = ['*/10 * * * * apps_reap ?max=1', '*/5 * * * * rate_limits_purge ?max=1'].join('\n');
