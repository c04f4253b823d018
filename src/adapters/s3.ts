// The only module that imports the AWS SDK: an S3-compatible object store (AWS S3, MinIO, R2, s3rver).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../config.ts';
import { contentDisposition, type ByteRange } from '../storage/names.ts';
import type { ObjectRef, Probe, StorageBackend } from '../storage/types.ts';

type S3Settings = Config['storage']['s3'];

/**
 * Presigned PUT (Content-Type and Content-Length bound into the signature) and presigned GET (with the
 * Content-Disposition and Content-Type S3 returns). Three client settings matter for presigned uploads:
 *
 * - `requestChecksumCalculation: 'WHEN_REQUIRED'`: since SDK 3.729 the default ('WHEN_SUPPORTED') adds
 *   `x-amz-checksum-crc32` (of an empty body, at presign time) and `x-amz-sdk-checksum-algorithm` to a
 *   presigned PutObject URL, which a real server then checks against the uploaded bytes and refuses.
 * - `signableHeaders: content-type, content-length` at presign time: the presigner puts content-type into
 *   its unsignable set by default, so without this the declared type would not be bound at all.
 * - `forcePathStyle` for MinIO, s3rver and most self-hosted servers (no wildcard DNS for bucket subdomains).
 */
export class S3Backend implements StorageBackend {
  readonly kind = 's3' as const;
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(settings: S3Settings) {
    if (!settings.bucket) throw new Error('SVC_S3_BUCKET is required for the s3 storage backend');
    this.#bucket = settings.bucket;
    const config: S3ClientConfig = {
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (settings.endpoint) config.endpoint = settings.endpoint;
    // Without explicit keys the SDK's default chain applies (environment, shared files, instance roles).
    if (settings.accessKeyId && settings.secretAccessKey) {
      config.credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey };
    }
    this.#client = new S3Client(config);
  }

  async uploadUrl(obj: ObjectRef, _expUnix: number, expiresIn: number): Promise<string> {
    const command = new PutObjectCommand({ Bucket: this.#bucket, Key: obj.key, ContentType: obj.contentType, ContentLength: obj.sizeBytes });
    return getSignedUrl(this.#client, command, { expiresIn, signableHeaders: new Set(['content-type', 'content-length']) });
  }

  async downloadUrl(obj: ObjectRef, _expUnix: number, expiresIn: number): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.#bucket,
      Key: obj.key,
      ResponseContentDisposition: contentDisposition(obj.filename),
      ResponseContentType: obj.contentType,
    });
    return getSignedUrl(this.#client, command, { expiresIn });
  }

  async probe(obj: ObjectRef): Promise<Probe | undefined> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: obj.key }));
      return { sizeBytes: head.ContentLength ?? 0, contentType: head.ContentType };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async write(obj: ObjectRef, file: string): Promise<void> {
    const { size } = await stat(file);
    await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: obj.key, Body: createReadStream(file), ContentLength: size, ContentType: obj.contentType }));
  }

  async read(obj: ObjectRef, range?: ByteRange): Promise<Readable | undefined> {
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: obj.key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return out.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** A server-side copy. The source is URL-encoded segment by segment, as S3 decodes x-amz-copy-source. */
  async copy(from: ObjectRef, to: ObjectRef): Promise<void> {
    const source = `${this.#bucket}/${from.key.split('/').map(encodeURIComponent).join('/')}`;
    await this.#client.send(new CopyObjectCommand({ Bucket: this.#bucket, Key: to.key, CopySource: source, ContentType: to.contentType, MetadataDirective: 'REPLACE' }));
  }

  async remove(obj: Pick<ObjectRef, 'key'>): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: obj.key }));
  }

  /** Every key under `<app_id>/`, in pages of up to 1000 (one DeleteObjects call each). */
  async purgeApp(appId: string): Promise<void> {
    const prefix = `${appId}/`;
    let token: string | undefined;
    do {
      const page = await this.#client.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ContinuationToken: token }));
      const keys = (page.Contents ?? []).map((c) => c.Key).filter((k): k is string => !!k && k.startsWith(prefix));
      if (keys.length) {
        const out = await this.#client.send(
          new DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
        );
        if (out.Errors?.length) throw new Error(`S3 refused to delete ${out.Errors.length} objects of app ${appId}: ${out.Errors[0]?.Code} ${out.Errors[0]?.Message}`);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  close(): void {
    this.#client.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}
