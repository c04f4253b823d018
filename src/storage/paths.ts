// Objects by bucket and path, as storage-js reaches them: direct uploads (the bytes pass through the API, streamed to
// the backend under a reservation in the app's quota), reads, listings by folder and removal, with the bucket's access
// rule deciding who sees and changes what.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { sql, type RawBuilder } from 'kysely';
import { AppError } from '../core/errors.ts';
import { enqueue } from '../core/jobs.ts';
import { recordUsage } from '../usage/meters.ts';
import { type BucketRow, type BucketStore, bucketErrors, escapeLike } from './buckets.ts';
import type { StorageContext } from './context.ts';
import { storageDeleteObject } from './jobs.ts';
import type { EffectiveLimits, Limits } from './limits.ts';
import { contentTypeAllowed, isMimeType, mimeEssence, parseRange, sanitizeFilename } from './names.ts';
import { LIST_MAX, lockApp, ref, STORAGE_METER, type ObjectRow, type Owner } from './objects.ts';
import { FORM_OVERHEAD_MAX_BYTES, uploadTimeout, type MultipartForm } from './multipart.ts';
import type { PathTokens } from './signing.ts';
import { ReceiveError, type Spool, type Spooled } from './spool.ts';
import { SERVICE_SEGMENT } from './tickets.ts';
import type { ObjectRef } from './types.ts';

/** Who calls: the app's keys (every object), an end user, or no one (a publishable key, or nothing). */
export type Accessor = Owner | { kind: 'anon' };

/** How long a direct upload's reservation holds while its bytes stream in. */
export const DIRECT_UPLOAD_SECONDS = 3600;
const MAX_NAME_BYTES = 1024;
/** How long a signed upload URL holds (Supabase's two hours). */
const SIGNED_UPLOAD_SECONDS = 7200;
/** Supabase Storage's key characters (its isValidKey). */
const KEY_RE = /^[\w/!\-.*'() &$@=;:+,?]+$/;
/** A default Cache-Control of stored objects, and the forms an upload may set. */
const DEFAULT_CACHE_CONTROL = 'max-age=3600';
const CACHE_CONTROL_RE = /^max-age=\d{1,10}$/;

export const pathErrors = {
  noSuchKey: () =>
    Object.assign(new AppError(404, 'RESOURCE_NOT_FOUND', 'Object not found', 'Check the bucket and path (list the folder to see what is there).'), {
      storage: { code: 'NoSuchKey', error: 'not_found' },
    }),
  duplicate: () =>
    Object.assign(new AppError(409, 'CONFLICT', 'The resource already exists', 'Upload with upsert: true to replace it, or choose another path.'), {
      storage: { code: 'Duplicate', error: 'Duplicate' },
    }),
  denied: () =>
    Object.assign(
      new AppError(403, 'FORBIDDEN', 'new row violates row-level security policy', "End users change only their own objects; anonymous callers change none. Sign in, or use the app's service key."),
      { storage: { code: 'AccessDenied', error: 'Unauthorized' } },
    ),
  tooLarge: (limit: number) =>
    Object.assign(new AppError(413, 'FILE_TOO_LARGE', 'The object exceeded the maximum allowed size', `The bucket takes files of at most ${limit} bytes.`, { max_file_bytes: limit }), {
      storage: { code: 'EntityTooLarge', error: 'Payload too large' },
    }),
  mime: (type: string) =>
    Object.assign(new AppError(415, 'CONTENT_TYPE_NOT_ALLOWED', `mime type ${type} is not supported`, "Upload a type in the bucket's allowed_mime_types."), {
      storage: { code: 'InvalidMimeType', error: 'invalid_mime_type' },
    }),
  lengthRequired: () =>
    Object.assign(new AppError(411, 'LENGTH_REQUIRED', 'An upload needs a Content-Length header.', 'Send the bytes with their length (a Buffer, ArrayBuffer or string, not a stream).'), {
      storage: { code: 'MissingContentLength', error: 'MissingContentLength' },
    }),
  badSignature: () =>
    Object.assign(new AppError(400, 'INVALID_SIGNATURE', 'Invalid signature', 'Use the signed URL exactly as createSignedUrl returned it.'), {
      storage: { code: 'InvalidSignature', error: 'InvalidSignature' },
    }),
  expiredToken: () =>
    Object.assign(new AppError(400, 'URL_EXPIRED', 'The provided token has expired.', 'Create a new signed URL.'), {
      storage: { code: 'ExpiredToken', error: 'ExpiredToken' },
    }),
  badBody: (received: number, declared: number) =>
    bucketErrors.invalid(`The body has ${received} bytes but Content-Length said ${declared}.`),
};

/** A stored object as storage-js's list and remove answer (its FileObject). */
export interface FileObjectView {
  name: string;
  id: string | null;
  bucket_id?: string;
  owner?: string | null;
  created_at: string | null;
  updated_at: string | null;
  last_accessed_at: string | null;
  metadata: Record<string, unknown> | null;
}

export interface ListOptions {
  prefix: string;
  limit: number;
  offset: number;
  sortBy: { column: 'name' | 'created_at' | 'updated_at'; order: 'asc' | 'desc' };
  search: string;
}

export interface UploadHeaders {
  contentType: string | undefined;
  contentLength: string | undefined;
  cacheControl: string | undefined;
}

/**
 * An upload's body: raw bytes, their type and length in the headers (a Buffer, ArrayBuffer or string in storage-js),
 * or a multipart form with one file (a Blob or File), whose length only the request's Content-Length bounds.
 */
export type UploadBody =
  | { kind: 'raw'; headers: UploadHeaders; stream: Readable; idleMs: number }
  | { kind: 'form'; form: MultipartForm; contentLength: string | undefined };

/** What a download sends: headers and, unless HEAD, the bytes. */
export interface ObjectDownload {
  appId: string;
  status: 200 | 206;
  headers: Record<string, string>;
  body: Readable | undefined;
}

interface StoreRequest {
  appId: string;
  owner: Owner;
  bucketId: string;
  name: string;
  mode: 'create' | 'upsert' | 'update';
  contentType: string;
  /** What the pending row reserves: the exact size, or a bound of it (a multipart file). */
  size: number;
  cacheControl: string | null;
  limits: EffectiveLimits;
}

/** Bytes stored at a new object's place, and the Cache-Control a form's fields named after its file. */
interface Written {
  size: number;
  cacheControl?: string | null;
}

export type PathObjectsDeps = Pick<StorageContext, 'db' | 'log' | 'backend'> & { limits: Limits; buckets: BucketStore; tokens: PathTokens; spool: Spool };

/** Checks an object path: storage's key characters, 1-1024 bytes, no leading `/`, no empty, `.` or `..` segment. */
export function checkName(name: string): string {
  const bytes = Buffer.byteLength(name);
  if (bytes < 1 || bytes > MAX_NAME_BYTES || !KEY_RE.test(name) || name.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw bucketErrors.invalid(`Invalid key: ${name}`, 'InvalidKey');
  }
  return name;
}

export class PathObjects {
  readonly #deps: PathObjectsDeps;

  constructor(deps: PathObjectsDeps) {
    this.#deps = deps;
  }

  /**
   * A direct upload (POST: new, or with upsert a replacement; PUT: a replacement of an existing object). The checks
   * run before any byte of the file is read: access, the bucket's limits and the app's (size, type, quota, an end
   * user's pending cap); a form's file type is checked at its part's headers. The size (a form's: its bound) is
   * reserved in a pending row, the bytes spooled to a temporary file (never more than the limit), stored at the
   * object's place, then in one transaction the old object (if any) goes and the new one becomes ready at its size.
   */
  async upload(appId: string, who: Accessor, bucketId: string, name: string, mode: 'create' | 'upsert' | 'update', body: UploadBody): Promise<{ Id: string; Key: string }> {
    const bucket = await this.#deps.buckets.get(appId, bucketId);
    checkName(name);
    if (who.kind === 'anon') throw pathErrors.denied();
    const owner: Owner = who;
    const existing = await this.#ready(appId, bucketId, name);
    if (existing && mode === 'create') throw pathErrors.duplicate();
    if (!existing && mode === 'update') throw pathErrors.noSuchKey();
    // Replacing another's object: invisible to the caller (an 'owner' bucket), PUT finds nothing there; else refused.
    if (existing && !ownsRow(owner, existing)) throw mode === 'update' && !canRead(bucket, owner, existing) ? pathErrors.noSuchKey() : pathErrors.denied();
    const put = { appId, owner, bucketId, name, mode };

    if (body.kind === 'raw') {
      const h = body.headers;
      const contentType = checkType((h.contentType ?? 'application/octet-stream').trim());
      const size = declaredLength(h.contentLength);
      const limits = await this.#admit(appId, bucket, owner, size, contentType);
      return this.#store({ ...put, contentType, size, cacheControl: cacheControlOf(h.cacheControl), limits }, (obj) =>
        this.#spooled(obj, this.#deps.spool.receive(appId, obj.id, body.stream, { exact: size, max: size, idleMs: body.idleMs })),
      );
    }

    // A form: its file may be as large as the limits allow, and its body a little larger (the fields and boundaries).
    const cap = await this.#fileCap(appId, bucket, owner);
    const length = body.contentLength === undefined ? undefined : declaredLength(body.contentLength);
    if (length !== undefined && length > cap + FORM_OVERHEAD_MAX_BYTES) throw pathErrors.tooLarge(cap);
    const file = await body.form.file();
    const contentType = checkType(file.contentType);
    const size = Math.min(length ?? cap, cap);
    const limits = await this.#admit(appId, bucket, owner, size, contentType);
    return this.#store({ ...put, contentType, size, cacheControl: null, limits }, async (obj) => {
      const received = this.#deps.spool.receive(appId, obj.id, file.stream, { max: cap }).catch(async (err: unknown) => {
        if (err instanceof ReceiveError && err.reason === 'too_large') throw pathErrors.tooLarge(cap);
        // The parser cut the file off: its reason (a malformed or truncated body, a stalled client) is the answer.
        throw (await body.form.closed()) ?? err;
      });
      const written = await this.#spooled(obj, received, () => body.form.done());
      const fields = await body.form.done();
      return { size: written.size, cacheControl: cacheControlOf(fields.cacheControl) };
    });
  }

  /**
   * Stores a spooled body at the object's place (after `before`, which may still refuse it); the temporary file goes
   * either way. A raw body of the wrong length is a 400.
   */
  async #spooled(obj: ObjectRef, spooling: Promise<Spooled>, before?: () => Promise<unknown>): Promise<Written> {
    const spooled = await spooling.catch((err: unknown) => {
      if (!(err instanceof ReceiveError)) throw err;
      if (err.reason === 'idle') throw uploadTimeout();
      throw pathErrors.badBody(err.received, obj.sizeBytes);
    });
    try {
      await before?.();
      if (!spooled.size) throw emptyObject();
      await this.#deps.backend.write(obj, spooled.path);
    } finally {
      await spooled.discard();
    }
    return { size: spooled.size };
  }

  /** The largest file the caller may store in the bucket: the bucket's limit, the app's, an end user's pending cap. */
  async #fileCap(appId: string, bucket: BucketRow, owner: Owner): Promise<number> {
    const appCap = this.#deps.limits.fileCap(await this.#deps.limits.effective(appId), owner);
    return bucket.file_size_limit === null ? appCap : Math.min(appCap, Number(bucket.file_size_limit));
  }

  /**
   * The bytes of an object the caller may read (a missing or invisible one is 404 NoSuchKey). `publicOnly`: the
   * public URL, which serves public buckets only and needs no credential.
   */
  async download(
    appId: string,
    who: Accessor,
    bucketId: string,
    name: string,
    opts: { publicOnly: boolean; token?: string | undefined; range: string | undefined; head: boolean; download: string | undefined },
  ): Promise<ObjectDownload> {
    if (opts.token !== undefined) {
      const { verdict } = this.#deps.tokens.verify(opts.token, { appId, bucket: bucketId, name, op: 'get' }, Math.floor(Date.now() / 1000));
      if (verdict === 'bad_signature') throw pathErrors.badSignature();
      if (verdict === 'expired') throw pathErrors.expiredToken();
    }
    const granted = opts.publicOnly || opts.token !== undefined;
    const bucket = await this.#deps.buckets.get(appId, bucketId).catch((err: unknown) => {
      if (granted) throw pathErrors.noSuchKey();
      throw err;
    });
    checkName(name);
    if (opts.publicOnly && bucket.access !== 'public') throw pathErrors.noSuchKey();
    const row = await this.#ready(appId, bucketId, name);
    if (!row || !(granted || canRead(bucket, who, row))) throw pathErrors.noSuchKey();
    const headers: Record<string, string> = {
      'Content-Type': row.content_type,
      'Accept-Ranges': 'bytes',
      ETag: `"${row.id}"`,
      'Last-Modified': row.created_at.toUTCString(),
      'Cache-Control': row.cache_control ?? DEFAULT_CACHE_CONTROL,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    if (opts.download !== undefined) {
      const filename = sanitizeFilename(opts.download || name.split('/').at(-1)!);
      headers['Content-Disposition'] = `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
    }
    const size = Number(row.size_bytes);
    const range = parseRange(opts.range, size);
    if (range === 'unsatisfiable') {
      throw Object.assign(new AppError(416, 'RANGE_NOT_SATISFIABLE', `The requested range is outside the object's ${size} bytes.`, `Request a range within bytes=0-${size - 1}.`, { size_bytes: size }), {
        storage: { code: 'InvalidRange', error: 'InvalidRange' },
      });
    }
    if (range) {
      headers['Content-Range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['Content-Length'] = String(range.end - range.start + 1);
    } else {
      headers['Content-Length'] = String(size);
    }
    const status = range ? 206 : 200;
    if (opts.head) return { appId, status, headers, body: undefined };
    const bytes = await this.#deps.backend.read(ref(row), range);
    if (!bytes) {
      this.#deps.log.error({ object_id: row.id, app_id: appId }, 'a ready object has no bytes in the backend');
      throw pathErrors.noSuchKey();
    }
    return { appId, status, headers, body: bytes };
  }

  /** The bucket's limits, then the app's (size, type): the limits in force for the reservation. */
  async #admit(appId: string, bucket: BucketRow, owner: Owner, size: number, contentType: string): Promise<EffectiveLimits> {
    if (bucket.file_size_limit !== null && size > Number(bucket.file_size_limit)) throw pathErrors.tooLarge(Number(bucket.file_size_limit));
    if (bucket.allowed_mime_types && !contentTypeAllowed(contentType, bucket.allowed_mime_types)) throw pathErrors.mime(contentType);
    return this.#deps.limits.admitFile(appId, owner, size, contentType);
  }

  /**
   * Stores an admitted object: its size reserved in a pending row, its bytes written to its place by `write`, then in
   * one transaction the replaced object (if any) goes and the new one becomes ready at the size written. On any
   * failure the row and the bytes go.
   */
  async #store(put: StoreRequest, write: (obj: ObjectRef) => Promise<Written>): Promise<{ Id: string; Key: string }> {
    const { appId, owner, bucketId, name, mode, contentType, size, limits } = put;
    const id = randomUUID();
    const filename = sanitizeFilename(name.split('/').at(-1)!);
    const key = `${appId}/${owner.kind === 'user' ? owner.userId : SERVICE_SEGMENT}/${id}_${filename}`;
    await this.#deps.db.transaction().execute(async (tx) => {
      await lockApp(tx, appId);
      await this.#deps.limits.admitReservation(tx, appId, owner, size, limits);
      await sql`
        insert into storage_objects (id, app_id, user_id, filename, content_type, size_bytes, object_key, status, expires_at, bucket_id, name, cache_control)
        values (${id}, ${appId}, ${owner.kind === 'user' ? owner.userId : null}, ${filename}, ${contentType}, ${size}, ${key}, 'pending',
                now() + make_interval(secs => ${DIRECT_UPLOAD_SECONDS}), ${bucketId}, ${name}, ${put.cacheControl})
      `.execute(tx);
    });
    const obj: ObjectRef = { appId, id, key, filename, contentType, sizeBytes: size };

    let won = false;
    let old: ObjectRow | undefined;
    try {
      const written = await write(obj);
      const cacheControl = written.cacheControl === undefined ? put.cacheControl : written.cacheControl;
      old = await this.#deps.db.transaction().execute(async (tx) => {
        await lockApp(tx, appId);
        let replaced: ObjectRow | undefined;
        if (mode !== 'create') {
          const { rows } = await sql<ObjectRow>`
            delete from storage_objects where app_id = ${appId} and bucket_id = ${bucketId} and name = ${name} and status = 'ready' returning *
          `.execute(tx);
          replaced = rows[0];
          if (!replaced && mode === 'update') throw pathErrors.noSuchKey();
          if (replaced && !ownsRow(owner, replaced)) throw pathErrors.denied();
          if (replaced) {
            await recordUsage(tx, appId, STORAGE_METER, -Number(replaced.size_bytes));
            await enqueue(tx, storageDeleteObject, { app_id: appId, object_id: replaced.id, object_key: replaced.object_key });
          }
        }
        const { rows: flipped } = await sql`
          update storage_objects set status = 'ready', expires_at = null, size_bytes = ${written.size}, cache_control = ${cacheControl}
          where id = ${id}::uuid and status = 'pending' returning id
        `.execute(tx);
        if (!flipped[0]) throw bucketErrors.invalid('The upload took too long: its reservation expired. Retry.');
        await recordUsage(tx, appId, STORAGE_METER, written.size);
        return replaced;
      });
      won = true;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw pathErrors.duplicate();
      throw err;
    } finally {
      if (!won) {
        await sql`delete from storage_objects where id = ${id}::uuid and status = 'pending'`.execute(this.#deps.db);
        await this.#deps.backend.remove(obj).catch((err: unknown) => this.#deps.log.warn({ err, app_id: appId, object_id: id }, 'removing the bytes of a failed upload failed'));
      }
    }
    if (old) {
      await this.#deps.backend.remove(ref(old)).catch((err: unknown) =>
        this.#deps.log.warn({ err, app_id: appId, object_id: old!.id }, 'removing replaced object bytes failed; the storage_delete_object job retries'),
      );
    }
    return { Id: id, Key: `${bucketId}/${name}` };
  }

  /**
   * Renames an object (to another bucket too): the caller must own it (an end user their own; anonymous never), and
   * the destination bucket's limits apply. The bytes stay where they are (their place is the object's id). A taken
   * destination is 409.
   */
  async move(appId: string, who: Accessor, from: { bucket: string; name: string }, to: { bucket: string; name: string }): Promise<{ message: string }> {
    const source = await this.#deps.buckets.get(appId, from.bucket);
    const target = to.bucket === from.bucket ? source : await this.#deps.buckets.get(appId, to.bucket);
    checkName(from.name);
    checkName(to.name);
    if (who.kind === 'anon') throw pathErrors.denied();
    const row = await this.#ready(appId, from.bucket, from.name);
    if (!row || !canRead(source, who, row)) throw pathErrors.noSuchKey();
    if (!ownsRow(who, row)) throw pathErrors.denied();
    if (target.file_size_limit !== null && Number(row.size_bytes) > Number(target.file_size_limit)) throw pathErrors.tooLarge(Number(target.file_size_limit));
    if (target.allowed_mime_types && !contentTypeAllowed(row.content_type, target.allowed_mime_types)) throw pathErrors.mime(row.content_type);
    try {
      const { rows } = await sql`
        update storage_objects set bucket_id = ${to.bucket}, name = ${to.name} where id = ${row.id}::uuid and status = 'ready' returning id
      `.execute(this.#deps.db);
      if (!rows[0]) throw pathErrors.noSuchKey();
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw pathErrors.duplicate();
      throw err;
    }
    return { message: 'Successfully moved' };
  }

  /**
   * Copies an object the caller may read to a free path (to another bucket too): the copy is the caller's, and the
   * destination bucket's limits, the app's limits and its quota apply as to an upload.
   */
  async copy(appId: string, who: Accessor, from: { bucket: string; name: string }, to: { bucket: string; name: string }): Promise<{ Id: string; Key: string }> {
    const source = await this.#deps.buckets.get(appId, from.bucket);
    const target = to.bucket === from.bucket ? source : await this.#deps.buckets.get(appId, to.bucket);
    checkName(from.name);
    checkName(to.name);
    if (who.kind === 'anon') throw pathErrors.denied();
    const row = await this.#ready(appId, from.bucket, from.name);
    if (!row || !canRead(source, who, row)) throw pathErrors.noSuchKey();
    const size = Number(row.size_bytes);
    const limits = await this.#admit(appId, target, who, size, row.content_type);
    if (await this.#ready(appId, to.bucket, to.name)) throw pathErrors.duplicate();
    const put: StoreRequest = { appId, owner: who, bucketId: to.bucket, name: to.name, mode: 'create', contentType: row.content_type, size, cacheControl: row.cache_control, limits };
    return this.#store(put, async (obj) => {
      await this.#deps.backend.copy(ref(row), obj);
      return { size };
    });
  }

  /**
   * Signed URLs of objects the caller may read (storage-js's createSignedUrl and createSignedUrls): a path relative to
   * /storage/v1 with a token valid `expiresIn` seconds. `single`: a path the caller cannot read is 404 NoSuchKey;
   * otherwise it is marked in the answer.
   */
  async sign(appId: string, who: Accessor, bucketId: string, names: string[], expiresIn: number): Promise<Array<{ path: string; signedURL: string | null; error: string | null }>> {
    const bucket = await this.#deps.buckets.get(appId, bucketId);
    const valid = names.filter((n) => Buffer.byteLength(n) <= MAX_NAME_BYTES);
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where app_id = ${appId} and bucket_id = ${bucketId} and name = any(${valid}::text[]) and status = 'ready'
    `.execute(this.#deps.db);
    const readable = new Set(rows.filter((r) => canRead(bucket, who, r)).map((r) => r.name));
    const exp = Math.floor(Date.now() / 1000) + expiresIn;
    return names.map((name) =>
      readable.has(name)
        ? { path: name, signedURL: `/object/sign/${bucketId}/${name}?token=${this.#deps.tokens.sign({ appId, bucket: bucketId, name, op: 'get', user: null, upsert: false, exp })}`, error: null }
        : { path: name, signedURL: null, error: 'Either the object does not exist or you do not have access to it' },
    );
  }

  /**
   * A signed upload URL (storage-js's createSignedUploadUrl), valid SIGNED_UPLOAD_SECONDS: whoever holds it uploads as
   * the signer (an end user's upload is theirs), with upsert as the signer asked.
   */
  async signUpload(appId: string, who: Accessor, bucketId: string, name: string, upsert: boolean): Promise<{ url: string; token: string }> {
    await this.#deps.buckets.get(appId, bucketId);
    checkName(name);
    if (who.kind === 'anon') throw pathErrors.denied();
    const exp = Math.floor(Date.now() / 1000) + SIGNED_UPLOAD_SECONDS;
    const token = this.#deps.tokens.sign({ appId, bucket: bucketId, name, op: 'put', user: who.kind === 'user' ? who.userId : null, upsert, exp });
    return { url: `/object/upload/sign/${bucketId}/${name}?token=${token}`, token };
  }

  /** Who a signed upload URL uploads as, and whether it may replace; 400 InvalidSignature or ExpiredToken otherwise. */
  uploadGrant(appId: string, bucketId: string, name: string, token: string): { who: Accessor; upsert: boolean } {
    const { verdict, grant } = this.#deps.tokens.verify(token, { appId, bucket: bucketId, name, op: 'put' }, Math.floor(Date.now() / 1000));
    if (verdict === 'bad_signature' || !grant) throw pathErrors.badSignature();
    if (verdict === 'expired') throw pathErrors.expiredToken();
    return { who: grant.user === null ? { kind: 'service' } : { kind: 'user', userId: grant.user }, upsert: grant.upsert };
  }

  /** An object's details (storage-js's info and exists); a missing or invisible one is 404 NoSuchKey. */
  async info(appId: string, who: Accessor, bucketId: string, name: string): Promise<Record<string, unknown>> {
    const bucket = await this.#deps.buckets.get(appId, bucketId);
    checkName(name);
    const row = await this.#ready(appId, bucketId, name);
    if (!row || !canRead(bucket, who, row)) throw pathErrors.noSuchKey();
    const at = row.created_at.toISOString();
    return {
      id: row.id,
      name: row.name,
      version: null,
      bucket_id: bucketId,
      size: Number(row.size_bytes),
      content_type: row.content_type,
      cache_control: row.cache_control ?? DEFAULT_CACHE_CONTROL,
      etag: `"${row.id}"`,
      metadata: {},
      last_modified: at,
      created_at: at,
      updated_at: at,
    };
  }

  /**
   * The immediate children of `prefix` the caller may see: files (with their metadata) and folders (the next path
   * segment of deeper objects, all fields null), filtered by `search` (a start of the child's name), sorted, paged.
   */
  async list(appId: string, who: Accessor, bucketId: string, opts: ListOptions): Promise<FileObjectView[]> {
    const bucket = await this.#deps.buckets.get(appId, bucketId);
    const trimmed = trimSlashes(opts.prefix);
    const base = trimmed ? `${trimmed}/` : '';
    const visible = readScope(bucket, who);
    const dir = opts.sortBy.order === 'desc' ? sql`desc` : sql`asc`;
    const order =
      opts.sortBy.column === 'name'
        ? sql`name collate "C" ${dir}`
        : sql`${sql.ref(opts.sortBy.column === 'created_at' ? 'created_at' : 'updated_at')} ${dir} nulls first, name collate "C"`;
    const { rows } = await sql<{ name: string; id: string | null; created_at: Date | null; updated_at: Date | null; size_bytes: string | null; content_type: string | null; cache_control: string | null }>`
      with children as (
        select split_part(substr(name, ${base.length + 1}), '/', 1) as child, strpos(substr(name, ${base.length + 1}), '/') > 0 as folder,
               id, created_at, size_bytes, content_type, cache_control
        from storage_objects
        where app_id = ${appId} and bucket_id = ${bucketId} and status = 'ready' and name like ${`${escapeLike(base)}%`} ${visible}
      ),
      entries as (
        select distinct child as name, null::uuid as id, null::timestamptz as created_at, null::timestamptz as updated_at,
               null::bigint as size_bytes, null::text as content_type, null::text as cache_control
        from children where folder
        union all
        select child, id, created_at, created_at, size_bytes, content_type, cache_control from children where not folder
      )
      select name, id, created_at, updated_at, size_bytes::text, content_type, cache_control from entries
      where ${opts.search ? sql`name ilike ${`${escapeLike(opts.search)}%`}` : sql`true`}
      order by ${order} limit ${opts.limit} offset ${opts.offset}
    `.execute(this.#deps.db);
    return rows.map((r) =>
      r.id === null
        ? { name: r.name, id: null, created_at: null, updated_at: null, last_accessed_at: null, metadata: null }
        : {
            name: r.name,
            id: r.id,
            created_at: r.created_at!.toISOString(),
            updated_at: r.updated_at!.toISOString(),
            last_accessed_at: r.created_at!.toISOString(),
            metadata: fileMetadata(r.id, Number(r.size_bytes), r.content_type!, r.cache_control, r.created_at!),
          },
    );
  }

  /**
   * Removes the named objects the caller may change (the app's keys: any; an end user: their own; anonymous: none);
   * paths that do not exist or are not the caller's are skipped, as Supabase's row-level security skips them.
   */
  async remove(appId: string, who: Accessor, bucketId: string, paths: string[]): Promise<FileObjectView[]> {
    await this.#deps.buckets.get(appId, bucketId);
    if (who.kind === 'anon' || !paths.length) return [];
    const mine = who.kind === 'user' ? sql`and user_id = ${who.userId}::uuid` : sql``;
    return this.#deleteWhere(appId, sql`bucket_id = ${bucketId} and name = any(${paths}::text[]) ${mine}`);
  }

  /** Removes every ready object of a bucket, a thousand at a time. */
  async empty(appId: string, bucketId: string): Promise<{ message: string }> {
    await this.#deps.buckets.get(appId, bucketId);
    for (;;) {
      const done = await this.#deleteWhere(appId, sql`id in (select id from storage_objects where app_id = ${appId} and bucket_id = ${bucketId} and status = 'ready' limit ${LIST_MAX})`);
      if (done.length < LIST_MAX) return { message: 'Successfully emptied' };
    }
  }

  async #deleteWhere(appId: string, where: RawBuilder<unknown>): Promise<FileObjectView[]> {
    const deleted = await this.#deps.db.transaction().execute(async (tx) => {
      const { rows } = await sql<ObjectRow>`
        delete from storage_objects where app_id = ${appId} and status = 'ready' and ${where} returning *
      `.execute(tx);
      const bytes = rows.reduce((n, r) => n + Number(r.size_bytes), 0);
      if (bytes) await recordUsage(tx, appId, STORAGE_METER, -bytes);
      for (const r of rows) await enqueue(tx, storageDeleteObject, { app_id: appId, object_id: r.id, object_key: r.object_key });
      return rows;
    });
    for (const r of deleted) {
      await this.#deps.backend.remove(ref(r)).catch((err: unknown) =>
        this.#deps.log.warn({ err, app_id: appId, object_id: r.id }, 'removing deleted object bytes failed; the storage_delete_object job retries'),
      );
    }
    return deleted.map((r) => ({
      name: r.name,
      id: r.id,
      bucket_id: r.bucket_id,
      owner: r.user_id,
      created_at: r.created_at.toISOString(),
      updated_at: r.created_at.toISOString(),
      last_accessed_at: r.created_at.toISOString(),
      metadata: fileMetadata(r.id, Number(r.size_bytes), r.content_type, r.cache_control, r.created_at),
    }));
  }

  async #ready(appId: string, bucketId: string, name: string): Promise<ObjectRow | undefined> {
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where app_id = ${appId} and bucket_id = ${bucketId} and name = ${name} and status = 'ready'
    `.execute(this.#deps.db);
    return rows[0];
  }
}

/** A declared Content-Length: required, a number, not zero. */
function declaredLength(value: string | undefined): number {
  if (value === undefined) throw pathErrors.lengthRequired();
  if (!/^\d{1,15}$/.test(value)) throw bucketErrors.invalid('Content-Length is not a number.');
  const size = Number(value);
  if (size === 0) throw emptyObject();
  return size;
}

const emptyObject = () => bucketErrors.invalid('Empty objects cannot be stored.');

function checkType(contentType: string): string {
  if (mimeEssence(contentType) === 'multipart/form-data' || !isMimeType(contentType)) throw bucketErrors.invalid(`Content-Type '${contentType}' is not a MIME type of a file.`);
  return contentType;
}

/** An object's Cache-Control: `max-age=<n>` as a raw upload's header sends it, or `<n>` as a form's field does. */
function cacheControlOf(value: string | undefined): string | null {
  const v = value?.trim() ?? '';
  if (/^\d{1,10}$/.test(v)) return `max-age=${v}`;
  return CACHE_CONTROL_RE.test(v) ? v : null;
}

function fileMetadata(id: string, size: number, contentType: string, cacheControl: string | null, at: Date): Record<string, unknown> {
  return {
    eTag: `"${id}"`,
    size,
    mimetype: contentType,
    cacheControl: cacheControl ?? DEFAULT_CACHE_CONTROL,
    lastModified: at.toISOString(),
    contentLength: size,
    httpStatusCode: 200,
  };
}

/** Whether the caller changes this object: the app's keys any, an end user their own. */
function ownsRow(owner: Owner, row: ObjectRow): boolean {
  return owner.kind === 'service' || row.user_id === owner.userId;
}

/** Whether the caller reads this object under its bucket's access rule. */
function canRead(bucket: BucketRow, who: Accessor, row: ObjectRow): boolean {
  if (who.kind === 'service' || bucket.access === 'public') return true;
  if (who.kind === 'anon') return false;
  return bucket.access === 'authenticated' || row.user_id === who.userId;
}

/** canRead as a condition on storage_objects rows. */
function readScope(bucket: BucketRow, who: Accessor): RawBuilder<unknown> {
  if (who.kind === 'service' || bucket.access === 'public') return sql``;
  if (who.kind === 'anon') return sql`and false`;
  return bucket.access === 'authenticated' ? sql`` : sql`and user_id = ${who.userId}::uuid`;
}

/** The text without leading and trailing slashes, in one pass (a regex alternation over both ends is quadratic). */
function trimSlashes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === '/') start++;
  while (end > start && text[end - 1] === '/') end--;
  return text.slice(start, end);
}
