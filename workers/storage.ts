import { z } from 'zod';
import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

const DeletePayload = z.object({ app_id: z.string().regex(/^[a-z0-9]{16}$/), object_id: z.string().uuid(), object_key: z.string().min(1) });

/** Enqueued with every storage_delete: removes the bytes if the request's own attempt failed (idempotent). */
export const storageDeleteObject = (s: WorkerServices): Task => async (payload) => {
  const p = DeletePayload.parse(payload);
  await s.storage.removeBytes({ appId: p.app_id, id: p.object_id, key: p.object_key });
};

/** Cron: pending uploads past their expiry become ready (S3 bytes that arrived unnoticed) or go. */
export const storageSettlePending = (s: WorkerServices): Task => async (_payload, helpers) => {
  const n = await s.storage.settleExpired();
  if (n) helpers.logger.info(`settled ${n} expired pending uploads`);
};
