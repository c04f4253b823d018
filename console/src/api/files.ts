// An app's files: GET /storage/{app_id}/objects (offset paging), an upload (storage_upload's presigned URL, then a PUT
// of the bytes), a download URL, delete, and the limits with the bytes used; and its buckets (storage_buckets_*).
import { call, query, seg } from '../api.ts';
import { putBytes } from './upload.ts';

export interface StoredObject {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  created_at: string;
}
export interface StorageLimits {
  max_file_bytes: number;
  max_app_bytes: number;
  allowed_content_types: string[];
  usage: { used_bytes: number; pending_bytes: number };
}

/** Who reads a bucket's files: their owner only, any signed-in end user, or anyone. */
export const BUCKET_ACCESS = ['owner', 'authenticated', 'public'] as const;
export type BucketAccess = (typeof BUCKET_ACCESS)[number];
export interface Bucket {
  id: string;
  access: BucketAccess;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
  updated_at: string;
}
/** A bucket created, or changed: omitted fields stay, null gives back the app's limit. */
export interface BucketChange {
  access?: BucketAccess;
  file_size_limit?: number | null;
  allowed_mime_types?: string[] | null;
}

export const FILE_PAGE = 50;
const base = (appId: string) => `/storage/${seg(appId)}`;

export const files = {
  list: (appId: string, offset: number) => call<StoredObject[]>('GET', `${base(appId)}/objects${query({ limit: String(FILE_PAGE), offset: String(offset) })}`),
  limits: (appId: string) => call<StorageLimits>('GET', `${base(appId)}/limits`),
  upload: async (appId: string, file: File): Promise<string> => {
    const contentType = file.type || 'application/octet-stream';
    const slot = await call<{ uploadUrl: string; objectId: string }>('POST', `${base(appId)}/upload`, { filename: file.name, contentType, sizeBytes: file.size });
    // A failed PUT leaves a reservation counted against the app's bytes until it expires: released at once.
    await putBytes(slot.uploadUrl, file, contentType).catch(async (err: unknown) => {
      await call('DELETE', `${base(appId)}/${seg(slot.objectId)}`).catch(() => {});
      throw err;
    });
    return slot.objectId;
  },
  downloadUrl: async (appId: string, id: string) => (await call<{ downloadUrl: string }>('GET', `${base(appId)}/download/${seg(id)}`)).downloadUrl,
  remove: (appId: string, id: string) => call('DELETE', `${base(appId)}/${seg(id)}`),
};

export const buckets = {
  list: async (appId: string) => (await call<{ buckets: Bucket[] }>('GET', `${base(appId)}/buckets`)).buckets,
  set: (appId: string, id: string, change: BucketChange) => call<Bucket>('PUT', `${base(appId)}/buckets/${seg(id)}`, change),
  /** Deletes the bucket with the files in it (the page asks first). */
  remove: (appId: string, id: string) => call('DELETE', `${base(appId)}/buckets/${seg(id)}${query({ empty: 'true' })}`),
};
