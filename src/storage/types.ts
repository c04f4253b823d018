import type { Readable } from 'node:stream';
import type { ByteRange } from './names.ts';

/** What a backend needs to know about one stored object. */
export interface ObjectRef {
  appId: string;
  id: string;
  /** `<app_id>/<user_id|service>/<uuid>_<filename>`: the bucket key on S3, metadata only on local disk. */
  key: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
}

/** An end user's unexpired pending uploads, or the most of them one user may hold at once. */
export interface PendingReservations {
  uploads: number;
  bytes: number;
}

/** What a probe found at an object's place: the bytes that arrived, or nothing yet. */
export interface Probe {
  sizeBytes: number;
  contentType: string | undefined;
}

/**
 * The two byte stores behind one interface. The spec's routes never pass bytes through the API: a client PUTs to the
 * upload URL and GETs the download URL, both signed and expiring. storage-js's routes do (direct uploads, downloads,
 * copies): write, read and copy.
 */
export interface StorageBackend {
  readonly kind: 'local' | 's3';
  /** A URL the client PUTs the bytes to, with Content-Type equal to the declared one; valid until expUnix. */
  uploadUrl(obj: ObjectRef, expUnix: number, expiresIn: number): Promise<string>;
  downloadUrl(obj: ObjectRef, expUnix: number, expiresIn: number): Promise<string>;
  /**
   * For backends where bytes arrive without passing through the platform (S3): what is stored under the key.
   * Local disk returns undefined: its PUT route flips rows to ready itself.
   */
  probe(obj: ObjectRef): Promise<Probe | undefined>;
  /** Stores a complete temporary file (see Spool) as the bytes of a new object: moved into place, or put to the bucket. */
  write(obj: ObjectRef, file: string): Promise<void>;
  /** The object's bytes, or a range of them; undefined when nothing is stored there. */
  read(obj: ObjectRef, range?: ByteRange): Promise<Readable | undefined>;
  /** Copies one object's bytes to a new object's place (on S3 inside the bucket). */
  copy(from: ObjectRef, to: ObjectRef): Promise<void>;
  /** Removes the object's bytes; a missing object is not an error. */
  remove(obj: Pick<ObjectRef, 'appId' | 'id' | 'key'>): Promise<void>;
  /** Removes every object of the app. */
  purgeApp(appId: string): Promise<void>;
  close(): void;
}
