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
 * The two byte stores behind one interface. Bytes never pass through the API routes: a client PUTs to the
 * upload URL and GETs the download URL, both signed and expiring.
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
  /** Removes the object's bytes (and any partial upload); a missing object is not an error. */
  remove(obj: Pick<ObjectRef, 'appId' | 'id' | 'key'>): Promise<void>;
  /** Removes every object of the app. */
  purgeApp(appId: string): Promise<void>;
  close(): void;
}
