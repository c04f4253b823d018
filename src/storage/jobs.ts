// The storage area's jobs: bytes of deleted objects, and pending uploads past their expiry.
import { z } from 'zod';
import { defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import type { StorageService } from './service.ts';

type Deps = JobContext<{ storage: StorageService }>;

/** Enqueued with every storage_delete: removes the bytes if the request's own attempt failed (idempotent). */
export const storageDeleteObject = defineJob({
  name: 'storage_delete_object',
  payload: z.object({ app_id: z.string().regex(/^[a-z0-9]{16}$/), object_id: z.string().uuid(), object_key: z.string().min(1) }),
  maxAttempts: 25,
  handler: async (p, { deps }: Deps) => {
    await deps.storage.removeBytes({ appId: p.app_id, id: p.object_id, key: p.object_key });
  },
});

/** Cron: pending uploads past their expiry become ready (S3 bytes that arrived unnoticed) or go. */
export const storageSettlePending = defineCron({
  name: 'storage_settle_pending',
  cron: '*/5 * * * *',
  handler: async (_payload, { deps, logger }: Deps) => {
    const n = await deps.storage.settleExpired();
    if (n) logger.info(`settled ${n} expired pending uploads`);
  },
});
