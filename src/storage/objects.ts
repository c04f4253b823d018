// The storage_objects rows every part of the storage service reads: their shape, the caller's view of them and
// the per-app lock that serializes quota changes.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import type { ObjectRef } from './types.ts';
import { storageErrors } from './errors.ts';

export const STORAGE_METER = 'storage_bytes';
/** Rows listed per call at most (the spec's list takes no parameters; `limit`/`offset` page beyond). */
export const LIST_MAX = 1000;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whose files a call sees: a service or platform key sees every file of the app, an end user only their own. */
export type Owner = { kind: 'service' } | { kind: 'user'; userId: string };

export interface ListedObject {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  created_at: string;
}

export type ObjectRow = Selectable<ControlDatabase['storage_objects']>;

export interface Page {
  limit?: number | undefined;
  offset?: number | undefined;
}

export const ref = (row: ObjectRow): ObjectRef => ({
  appId: row.app_id,
  id: row.id,
  key: row.object_key,
  filename: row.filename,
  contentType: row.content_type,
  sizeBytes: Number(row.size_bytes),
});

export function objectView(row: ObjectRow): ListedObject {
  return { id: row.id, filename: row.filename, content_type: row.content_type, size_bytes: Number(row.size_bytes), created_at: row.created_at.toISOString() };
}

/**
 * Whether a pending row is a presigned upload's (tickets.ts), whose bytes reach the backend by themselves, so that a
 * probe may find them: its name is its key's tail (migration 0042's trigger). A direct upload's row (paths.ts) never
 * is (its key holds an id made after its path was chosen): its own request settles it, and once expired it just goes.
 */
export const presignedRow = (row: Pick<ObjectRow, 'app_id' | 'name' | 'object_key'>): boolean => row.object_key === `${row.app_id}/${row.name}`;
export const PRESIGNED_ROW = sql`object_key = app_id || '/' || name`;

/** The rows an owner may see: an end user's own only. */
export const scope = (owner: Owner): RawBuilder<unknown> => (owner.kind === 'user' ? sql`and user_id = ${owner.userId}::uuid` : sql``);

/** Takes the app's storage lock for the transaction: reservations and meter corrections of one app go one at a time. */
export async function lockApp(tx: Kysely<ControlDatabase>, appId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${'storage:' + appId}, 0))`.execute(tx);
}

/** Reads of storage_objects by id or owner. */
export class ObjectRows {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  async byId(objectId: string): Promise<ObjectRow | undefined> {
    const { rows } = await sql<ObjectRow>`select * from storage_objects where id = ${objectId}::uuid`.execute(this.#db);
    return rows[0];
  }

  /** The caller's object: 404 when it does not exist, belongs to another app, or (for an end user) to someone else. */
  async find(appId: string, owner: Owner, objectId: string): Promise<ObjectRow> {
    if (!UUID_RE.test(objectId)) throw storageErrors.objectNotFound(objectId);
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where id = ${objectId}::uuid and app_id = ${appId} ${scope(owner)}
    `.execute(this.#db);
    if (!rows[0]) throw storageErrors.objectNotFound(objectId);
    return rows[0];
  }

  /** Objects whose bytes have arrived, newest first. */
  async listReady(appId: string, owner: Owner, page: Page): Promise<ListedObject[]> {
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects
      where app_id = ${appId} and status = 'ready' ${scope(owner)}
      order by created_at desc, id desc
      limit ${Math.min(page.limit ?? LIST_MAX, LIST_MAX)} offset ${page.offset ?? 0}
    `.execute(this.#db);
    return rows.map(objectView);
  }
}
