// Buckets (storage-js's face, issue 41): an app's named places for objects, each with its access rule ('owner':
// end users see their own objects; 'authenticated': every end user reads; 'public': anyone reads) and its own limits,
// which only tighten the app's. Every app has the bucket `files`, where the spec's routes store.
import { sql } from 'kysely';
import { AppError } from '../core/errors.ts';
import type { StorageContext } from './context.ts';
import type { Limits } from './limits.ts';
import { ALLOW_ENTRY_RE, allowEntryWithin } from './names.ts';

export const BUCKET_ACCESS = ['owner', 'authenticated', 'public'] as const;
export type BucketAccess = (typeof BUCKET_ACCESS)[number];
/** The bucket every app has; the spec's routes store there, and it cannot be deleted. */
export const DEFAULT_BUCKET = 'files';
export const BUCKET_ID_RE = /^[A-Za-z0-9 _.-]{1,100}$/;
/** Words of storage-js's object routes (/object/list/..., /object/public/...), which a bucket id would shadow. */
const RESERVED_IDS = new Set(['list', 'sign', 'move', 'copy', 'info', 'upload', 'public', 'authenticated', 'list-v2']);
/** Buckets one app may have. */
export const MAX_BUCKETS = 100;

export interface BucketRow {
  app_id: string;
  id: string;
  access: BucketAccess;
  file_size_limit: string | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

/** A bucket as storage-js reads it (Supabase's Bucket), with our `access` beside `public`. */
export interface BucketView {
  id: string;
  name: string;
  owner: string;
  public: boolean;
  access: BucketAccess;
  type: 'STANDARD';
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
  updated_at: string;
}

/** What createBucket and updateBucket send (storage-js's body; `access` is ours). Undefined leaves a value as is. */
export interface BucketInput {
  public?: boolean | undefined;
  access?: BucketAccess | undefined;
  file_size_limit?: number | string | null | undefined;
  allowed_mime_types?: string[] | null | undefined;
}

/** Errors as Supabase Storage names them (its code and legacy word ride on AppError.storage). */
export const bucketErrors = {
  noSuchBucket: () =>
    Object.assign(new AppError(404, 'RESOURCE_NOT_FOUND', 'Bucket not found', 'List the buckets (storage-js listBuckets) to find its id.'), {
      storage: { code: 'NoSuchBucket', error: 'Bucket not found' },
    }),
  exists: () =>
    Object.assign(new AppError(409, 'CONFLICT', 'The resource already exists', 'Choose another bucket id, or update the bucket.'), {
      storage: { code: 'BucketAlreadyExists', error: 'Duplicate' },
    }),
  notEmpty: () =>
    Object.assign(new AppError(409, 'CONFLICT', 'The bucket you tried to delete is not empty', 'Empty it first (storage-js emptyBucket).'), {
      storage: { code: 'ResourceNotEmpty', error: 'Conflict' },
    }),
  manageDenied: () =>
    Object.assign(
      new AppError(403, 'FORBIDDEN', 'Managing buckets needs the app\'s service key or a platform key.', 'Create, update, empty and delete buckets from a server with the service key.'),
      { storage: { code: 'AccessDenied', error: 'Unauthorized' } },
    ),
  invalid: (message: string, code = 'InvalidRequest') =>
    Object.assign(new AppError(400, 'VALIDATION_FAILED', message, 'Fix the request as the message says.'), { storage: { code, error: code } }),
};

const UNITS: Readonly<Record<string, number>> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** A file_size_limit: a positive byte count, or "20MB" / "1GB" / "30KB" / "3B"; null clears it. */
export function parseSizeLimit(value: number | string | null): number | null {
  if (value === null) return null;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value <= 0) throw bucketErrors.invalid('file_size_limit must be a positive whole number of bytes.');
    return value;
  }
  // Trimmed first: blanks on both sides of an optional part made the pattern backtrack quadratically.
  const m = /^(\d{1,15}) ?(B|KB|MB|GB|TB)?$/i.exec(value.trim());
  const n = m ? Number(m[1]) * UNITS[(m[2] ?? 'B').toUpperCase()]! : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) throw bucketErrors.invalid(`file_size_limit '${value}' is not a size (a number of bytes, or e.g. "20MB").`);
  return n;
}

export function bucketView(row: BucketRow): BucketView {
  return {
    id: row.id,
    name: row.id,
    owner: '',
    public: row.access === 'public',
    access: row.access,
    type: 'STANDARD',
    file_size_limit: row.file_size_limit === null ? null : Number(row.file_size_limit),
    allowed_mime_types: row.allowed_mime_types,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type BucketStoreDeps = Pick<StorageContext, 'db'> & { limits: Limits };

export class BucketStore {
  readonly #deps: BucketStoreDeps;

  constructor(deps: BucketStoreDeps) {
    this.#deps = deps;
  }

  async list(appId: string, opts: { limit?: number; offset?: number; search?: string } = {}): Promise<BucketView[]> {
    const search = opts.search ? `%${escapeLike(opts.search)}%` : undefined;
    const { rows } = await sql<BucketRow>`
      select * from storage_buckets where app_id = ${appId} ${search ? sql`and id ilike ${search}` : sql``}
      order by id collate "C" limit ${Math.min(opts.limit ?? MAX_BUCKETS, MAX_BUCKETS)} offset ${opts.offset ?? 0}
    `.execute(this.#deps.db);
    return rows.map(bucketView);
  }

  /** The bucket, or 404 NoSuchBucket. */
  async get(appId: string, id: string): Promise<BucketRow> {
    if (!BUCKET_ID_RE.test(id)) throw bucketErrors.noSuchBucket();
    const { rows } = await sql<BucketRow>`select * from storage_buckets where app_id = ${appId} and id = ${id}`.execute(this.#deps.db);
    if (!rows[0]) throw bucketErrors.noSuchBucket();
    return rows[0];
  }

  async create(appId: string, id: unknown, input: BucketInput): Promise<{ name: string }> {
    if (typeof id !== 'string' || !BUCKET_ID_RE.test(id) || RESERVED_IDS.has(id)) {
      throw bucketErrors.invalid(`The bucket id must be 1-100 letters, digits, spaces, "_", "." or "-", and none of ${[...RESERVED_IDS].join(', ')}.`, 'InvalidBucketName');
    }
    const checked = await this.#checked(appId, input);
    const access = input.access ?? (input.public ? 'public' : 'owner');
    const { rows } = await sql<{ id: string }>`
      insert into storage_buckets (app_id, id, access, file_size_limit, allowed_mime_types)
      select ${appId}, ${id}, ${access}, ${checked.size ?? null}, ${checked.types ?? null}::text[]
      where (select count(*) from storage_buckets where app_id = ${appId}) < ${MAX_BUCKETS}
      on conflict do nothing returning id
    `.execute(this.#deps.db);
    if (!rows[0]) {
      await this.get(appId, id).then(
        () => {
          throw bucketErrors.exists();
        },
        () => {
          throw bucketErrors.invalid(`An app may have at most ${MAX_BUCKETS} buckets.`);
        },
      );
    }
    return { name: id };
  }

  /**
   * `public: true` makes the bucket public; `public: false` makes a public bucket 'owner' (an 'authenticated' one stays
   * so); an explicit `access` decides. Undefined limits stay as they are, null clears them.
   */
  async update(appId: string, id: string, input: BucketInput): Promise<{ message: string }> {
    const current = await this.get(appId, id);
    const checked = await this.#checked(appId, input);
    const access: BucketAccess =
      input.access ?? (input.public === true ? 'public' : input.public === false && current.access === 'public' ? 'owner' : current.access);
    await sql`
      update storage_buckets set access = ${access},
        file_size_limit = ${checked.size === undefined ? sql`file_size_limit` : sql`${checked.size}::bigint`},
        allowed_mime_types = ${checked.types === undefined ? sql`allowed_mime_types` : sql`${checked.types}::text[]`},
        updated_at = now()
      where app_id = ${appId} and id = ${id}
    `.execute(this.#deps.db);
    return { message: 'Successfully updated' };
  }

  /**
   * Creates the bucket, or updates it when it exists (storage_buckets_set): undefined fields stay as they are (a new
   * bucket: access 'owner', the app's limits).
   */
  async set(appId: string, id: string, input: BucketInput): Promise<BucketView> {
    const created = await this.create(appId, id, input).then(
      () => true,
      (err: unknown) => {
        if (!(err instanceof AppError) || err.storage?.code !== 'BucketAlreadyExists') throw err;
        return false;
      },
    );
    if (!created) await this.update(appId, id, input);
    return bucketView(await this.get(appId, id));
  }

  /**
   * Deletes an empty bucket (pending uploads count as content); `files` stays. `emptyFirst` removes its objects once
   * the bucket is known to be one that may go.
   */
  async delete(appId: string, id: string, emptyFirst?: () => Promise<unknown>): Promise<{ message: string }> {
    await this.get(appId, id);
    if (id === DEFAULT_BUCKET) throw bucketErrors.invalid(`The bucket '${DEFAULT_BUCKET}' cannot be deleted: the app's storage routes store there.`);
    await emptyFirst?.();
    const { rows } = await sql<{ id: string }>`
      delete from storage_buckets b where app_id = ${appId} and id = ${id}
        and not exists (select 1 from storage_objects o where o.app_id = b.app_id and o.bucket_id = b.id)
      returning id
    `.execute(this.#deps.db);
    if (!rows[0]) throw bucketErrors.notEmpty();
    return { message: 'Successfully deleted' };
  }

  /** A bucket's limits, checked against the app's: they may only tighten them. */
  async #checked(appId: string, input: BucketInput): Promise<{ size: number | null | undefined; types: string[] | null | undefined }> {
    if (input.access !== undefined && !BUCKET_ACCESS.includes(input.access)) {
      throw bucketErrors.invalid("access must be 'owner', 'authenticated' or 'public'.");
    }
    if (input.public !== undefined && typeof input.public !== 'boolean') throw bucketErrors.invalid('public must be true or false.');
    if (input.access !== undefined && input.public !== undefined && (input.access === 'public') !== input.public) {
      throw bucketErrors.invalid(`public: ${input.public} contradicts access: '${input.access}'.`);
    }
    const limits = await this.#deps.limits.effective(appId);
    const size = input.file_size_limit === undefined ? undefined : parseSizeLimit(input.file_size_limit);
    if (size != null && size > limits.maxFile) {
      throw bucketErrors.invalid(`file_size_limit ${size} exceeds the app's limit of ${limits.maxFile} bytes per file; a bucket's limits only tighten the app's.`);
    }
    let types: string[] | null | undefined;
    if (input.allowed_mime_types === null || input.allowed_mime_types === undefined) types = input.allowed_mime_types;
    else {
      if (!Array.isArray(input.allowed_mime_types) || input.allowed_mime_types.length > 100) throw bucketErrors.invalid('allowed_mime_types must be a list of at most 100 MIME types.');
      types = [...new Set(input.allowed_mime_types.map((t) => (typeof t === 'string' ? t.trim().toLowerCase() : '')))];
      const bad = types.filter((t) => !ALLOW_ENTRY_RE.test(t));
      if (bad.length) throw bucketErrors.invalid(`allowed_mime_types holds values that are not MIME types: ${bad.join(', ')}.`);
      const outside = types.filter((t) => !limits.allowLists.every((list) => allowEntryWithin(t, list)));
      if (outside.length) throw bucketErrors.invalid(`allowed_mime_types may only narrow the app's allowed content types; it does not allow ${outside.join(', ')}.`);
      if (!types.length) types = null;
    }
    return { size, types };
  }
}

/** A LIKE pattern's literal text: `\`, `%` and `_` escaped (the default escape character is `\`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
