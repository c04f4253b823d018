// Object deletion (one file, its bytes removed at once and by a retrying job) and an app's purge when the app
// is deleted.
import { sql } from 'kysely';
import { enqueue } from '../core/jobs.ts';
import { meterBalance, recordUsage } from '../usage/meters.ts';
import type { StorageContext } from './context.ts';
import { storageErrors } from './errors.ts';
import { storageDeleteObject } from './jobs.ts';
import { lockApp, ref, scope, STORAGE_METER, UUID_RE, type ObjectRow, type Owner } from './objects.ts';
import type { ObjectRef } from './types.ts';

export type PurgeDeps = Pick<StorageContext, 'db' | 'log' | 'backend'>;

export class Purge {
  readonly #deps: PurgeDeps;

  constructor(deps: PurgeDeps) {
    this.#deps = deps;
  }

  /**
   * Deletes the row (and, when its bytes had arrived, subtracts them from the meter) and enqueues the byte
   * removal in the same transaction; the bytes are then removed at once, and the job retries if that fails.
   */
  async delete(appId: string, owner: Owner, objectId: string): Promise<{ deleted: true; id: string }> {
    if (!UUID_RE.test(objectId)) throw storageErrors.objectNotFound(objectId);
    const row = await this.#deps.db.transaction().execute(async (tx) => {
      const { rows } = await sql<ObjectRow>`
        delete from storage_objects where id = ${objectId}::uuid and app_id = ${appId} ${scope(owner)} returning *
      `.execute(tx);
      const deleted = rows[0];
      if (!deleted) throw storageErrors.objectNotFound(objectId);
      if (deleted.status === 'ready') await recordUsage(tx, appId, STORAGE_METER, -Number(deleted.size_bytes));
      await enqueue(tx, storageDeleteObject, { app_id: appId, object_id: objectId, object_key: deleted.object_key });
      return deleted;
    });
    await this.removeBytes(ref(row)).catch((err: unknown) =>
      this.#deps.log.warn({ err, app_id: appId, object_id: objectId }, 'removing deleted object bytes failed; the storage_delete_object job retries'),
    );
    return { deleted: true, id: objectId };
  }

  /** Removes an object's bytes; used after a delete and by the storage_delete_object job (idempotent). */
  async removeBytes(obj: Pick<ObjectRef, 'appId' | 'id' | 'key'>): Promise<void> {
    await this.#deps.backend.remove(obj);
  }

  /**
   * App deletion (apps_purge_files job; the rows went with the app by cascade): every object under the app's
   * prefix goes, and the storage_bytes meter is brought back to zero. Safe to run twice.
   */
  async purgeApp(appId: string): Promise<void> {
    await this.#deps.backend.purgeApp(appId);
    await this.#deps.db.transaction().execute(async (tx) => {
      await lockApp(tx, appId);
      const balance = await meterBalance(tx, appId, STORAGE_METER);
      if (balance !== 0) await recordUsage(tx, appId, STORAGE_METER, -balance);
    });
    this.#deps.log.info({ app_id: appId }, 'storage purged');
  }
}
