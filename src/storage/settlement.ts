// Pending uploads becoming ready or going: on S3 the bytes arrive without passing through the platform, so a
// probe of the bucket settles them; a pending row past its expiry goes with whatever bytes sit at its place.
import { sql } from 'kysely';
import { recordUsage } from '../usage/meters.ts';
import type { StorageContext } from './context.ts';
import { storageErrors } from './errors.ts';
import { normalizeMime } from './names.ts';
import { presignedRow, PRESIGNED_ROW, ref, scope, STORAGE_METER, type ObjectRow, type ObjectRows, type Owner } from './objects.ts';

/** Pending rows read at a time, and at most checked against the bucket per list call (S3 backend). */
const PROBE_BATCH = 100;
const PROBE_MAX = 1000;
const PROBE_CONCURRENCY = 8;

/** Where a batch of pending rows ended: its last row's created_at in microseconds since the epoch, and id. */
interface PendingCursor {
  atUs: string;
  id: string;
}

export type SettlementDeps = Pick<StorageContext, 'db' | 'log' | 'backend'> & { rows: ObjectRows };

export class Settlement {
  readonly #deps: SettlementDeps;

  constructor(deps: SettlementDeps) {
    this.#deps = deps;
  }

  /** Cron: resolves pending uploads whose time is up (S3: bytes that did arrive become ready; the rest go). */
  async settleExpired(batch: number): Promise<number> {
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where status = 'pending' and expires_at <= now() order by expires_at limit ${batch}
    `.execute(this.#deps.db);
    await this.settle(rows);
    return rows.length;
  }

  /**
   * S3 only (local disk flips its rows itself): settles the owner's pending uploads, or only the expired ones,
   * whose bytes may have arrived unnoticed.
   */
  async settleOwnerPending(appId: string, owner: Owner, expiredOnly: boolean): Promise<void> {
    if (this.#deps.backend.kind !== 's3') return;
    // Newest first, batch after batch: a listing after many unconfirmed uploads shows every one whose bytes arrived,
    // not only the newest batch's. Bounded, as each is a request to the bucket (unconfirmed uploads expire anyway).
    let before: PendingCursor | undefined;
    for (let probed = 0; probed < PROBE_MAX; probed += PROBE_BATCH) {
      const rows = await this.#pending(appId, owner, expiredOnly, before);
      await this.settle(rows);
      if (rows.length < PROBE_BATCH) return;
      const last = rows.at(-1)!;
      before = { atUs: last.created_at_us, id: last.id };
    }
  }

  /** The caller's object once its bytes have arrived (settled first on S3); 409 while they have not. */
  async findReady(appId: string, owner: Owner, objectId: string): Promise<ObjectRow> {
    let row = await this.#deps.rows.find(appId, owner, objectId);
    if (row.status === 'pending') {
      if (this.#deps.backend.kind === 's3') await this.settle([row]);
      row = await this.#deps.rows.find(appId, owner, objectId);
      if (row.status !== 'ready') throw storageErrors.notUploaded(objectId);
    }
    return row;
  }

  /**
   * Resolves pending rows. S3: a HEAD showing the declared size and type makes the row ready (and meters it);
   * bytes of another size or type are deleted with their row (a strict S3 refuses such a PUT already, through
   * the signature); nothing there and expired: the row goes. Local, and direct uploads' rows: only expired rows
   * reach here; they go with any bytes at their place.
   */
  async settle(rows: ObjectRow[]): Promise<void> {
    if (!rows.length) return;
    const queue = [...rows];
    const worker = async () => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        try {
          await this.#settleOne(row);
        } catch (err) {
          this.#deps.log.warn({ err, object_id: row.id, app_id: row.app_id }, 'settling a pending upload failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, rows.length) }, worker));
  }

  /** Deletes a pending row (only while still pending) and whatever bytes sit at its place. */
  async discard(row: ObjectRow, expiredOnly: boolean): Promise<void> {
    const { rows } = await sql`
      delete from storage_objects where id = ${row.id}::uuid and status = 'pending' ${expiredOnly ? sql`and expires_at <= now()` : sql``} returning id
    `.execute(this.#deps.db);
    if (rows.length) await this.#deps.backend.remove(ref(row));
  }

  async #settleOne(row: ObjectRow): Promise<void> {
    const obj = ref(row);
    const found = presignedRow(row) ? await this.#deps.backend.probe(obj) : undefined;
    if (found) {
      const matches = found.sizeBytes === obj.sizeBytes && found.contentType !== undefined && normalizeMime(found.contentType) === normalizeMime(obj.contentType);
      if (matches) {
        await this.#deps.db.transaction().execute(async (tx) => {
          const { rows: flipped } = await sql`
            update storage_objects set status = 'ready', expires_at = null where id = ${row.id}::uuid and status = 'pending' returning id
          `.execute(tx);
          if (flipped.length) await recordUsage(tx, obj.appId, STORAGE_METER, obj.sizeBytes);
        });
        return;
      }
      this.#deps.log.warn({ object_id: row.id, declared: [obj.sizeBytes, obj.contentType], found }, 'uploaded bytes differ from the declaration; discarded');
      await this.discard(row, false);
      return;
    }
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) await this.discard(row, true);
  }

  /**
   * A batch of the owner's pending rows, newest first, after `before` in that order (in microseconds, the column's
   * precision: a JavaScript Date would round and skip rows of the same millisecond).
   */
  async #pending(appId: string, owner: Owner, expiredOnly: boolean, before: PendingCursor | undefined): Promise<Array<ObjectRow & { created_at_us: string }>> {
    const { rows } = await sql<ObjectRow & { created_at_us: string }>`
      select *, (extract(epoch from created_at) * 1000000)::bigint::text as created_at_us from storage_objects
      where app_id = ${appId} and status = 'pending' and ${PRESIGNED_ROW} ${scope(owner)} ${expiredOnly ? sql`and expires_at <= now()` : sql``}
        ${before ? sql`and (created_at, id) < (timestamptz 'epoch' + ${before.atUs}::bigint * interval '1 microsecond', ${before.id}::uuid)` : sql``}
      order by created_at desc, id desc limit ${PROBE_BATCH}
    `.execute(this.#deps.db);
    return rows;
  }
}
