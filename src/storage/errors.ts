import { AppError, errors } from '../core/errors.ts';
import type { PendingReservations } from './types.ts';

const mb = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`);

/** Storage refusals, each a clear 4xx in the standard envelope. */
export const storageErrors = {
  fileTooLarge: (size: number, limit: number) =>
    new AppError(
      400,
      'FILE_TOO_LARGE',
      `sizeBytes ${size} exceeds the limit of ${limit} bytes (${mb(limit)}) per file.`,
      `Upload files of at most ${limit} bytes; split or compress larger ones.`,
      { size_bytes: size, max_file_bytes: limit },
    ),
  quotaExceeded: (size: number, used: number, pending: number, limit: number) =>
    new AppError(
      409,
      'STORAGE_QUOTA_EXCEEDED',
      `Storing ${size} more bytes would exceed the app's limit of ${limit} bytes (${mb(limit)}): ${used} bytes are stored and ${pending} bytes are reserved by pending uploads.`,
      'Delete files you no longer need (storage_delete), or wait for pending uploads to finish or expire (5 minutes), then retry.',
      { size_bytes: size, used_bytes: used, pending_bytes: pending, max_app_bytes: limit },
    ),
  pendingLimitExceeded: (size: number, pending: PendingReservations, max: PendingReservations, retryAfterSeconds: number) =>
    new AppError(
      429,
      'STORAGE_PENDING_LIMIT_EXCEEDED',
      pending.uploads >= max.uploads
        ? `You already have ${pending.uploads} pending uploads, the most an end user may hold at once.`
        : `Reserving ${size} more bytes would exceed the ${mb(max.bytes)} an end user may hold in pending uploads at once: ${pending.bytes} bytes are reserved by your ${pending.uploads} pending uploads.`,
      'PUT the bytes of your pending uploads to their uploadUrl, or delete those you will not finish (storage_delete with their objectId); ' +
        `unfinished reservations are released when they expire, the next in ${retryAfterSeconds} seconds.`,
      {
        size_bytes: size,
        pending_uploads: pending.uploads,
        pending_bytes: pending.bytes,
        max_pending_uploads: max.uploads,
        max_pending_bytes: max.bytes,
        retry_after_seconds: retryAfterSeconds,
      },
    ),
  contentTypeNotAllowed: (contentType: string, allowed: readonly string[]) =>
    new AppError(
      400,
      'CONTENT_TYPE_NOT_ALLOWED',
      `Content type '${contentType}' is not allowed for this app.`,
      `Upload one of the allowed types: ${allowed.join(', ')}.`,
      { content_type: contentType, allowed_content_types: allowed },
    ),
  inlineTooLarge: (size: number, limit: number) =>
    new AppError(
      413,
      'INLINE_CONTENT_TOO_LARGE',
      `content is ${size} bytes once decoded; inline uploads take at most ${limit} bytes (${mb(limit)}).`,
      'Upload larger files with storage_upload: it returns a presigned URL to PUT the bytes to.',
      { size_bytes: size, max_inline_bytes: limit },
    ),
  inlineEmpty: () => errors.validation("'content' is empty; a file has at least one byte.", [{ path: 'content', message: 'at least one byte' }]),
  inlineReadTooLarge: (id: string, size: number, limit: number) =>
    new AppError(
      413,
      'INLINE_CONTENT_TOO_LARGE',
      `Object '${id}' has ${size} bytes; files are read inline up to ${limit} bytes (${mb(limit)}).`,
      'Get a presigned URL with storage_download and GET the bytes from it.',
      { size_bytes: size, max_inline_bytes: limit },
    ),
  objectNotFound: (id: string) =>
    errors.notFound(`Object '${id}'`, 'List the files you can see with storage_list (GET /storage/{app_id}/objects) and use their id.'),
  notUploaded: (id: string) =>
    errors.notFound(
      `Object '${id}' has no bytes yet: it`,
      'PUT the file bytes to the uploadUrl from storage_upload first (Content-Type equal to the declared one); an upload that never arrives expires after 5 minutes.',
    ),
  uploadNotFound: () =>
    errors.notFound('Upload', 'The upload expired or was deleted; request a new uploadUrl with storage_upload.'),
  noBlobRoutes: () =>
    errors.notFound('Blob', 'This platform stores files in an S3 bucket: use the URLs returned by storage_upload and storage_download.'),
  invalidSignature: () =>
    new AppError(403, 'INVALID_SIGNATURE', 'The URL signature is invalid.', 'Use the URL exactly as returned by storage_upload or storage_download; request a new one if in doubt.'),
  urlExpired: () =>
    new AppError(403, 'URL_EXPIRED', 'The URL has expired.', 'Request a new URL (storage_upload for uploads, storage_download for downloads).'),
  alreadyUploaded: () =>
    new AppError(409, 'UPLOAD_ALREADY_COMPLETED', 'This upload URL was already used: the object is no longer pending.', 'Request a new uploadUrl with storage_upload to store another file.'),
  contentTypeMismatch: (declared: string, sent: string | undefined) =>
    new AppError(
      415,
      'CONTENT_TYPE_MISMATCH',
      `The Content-Type ${sent ? `'${sent}'` : '(missing)'} differs from the declared '${declared}'.`,
      `Send the PUT with Content-Type: ${declared}.`,
    ),
  uploadTooLarge: (declared: number) =>
    new AppError(413, 'UPLOAD_TOO_LARGE', `The body is larger than the declared ${declared} bytes.`, 'Send exactly sizeBytes bytes, or request a new uploadUrl with the right size.'),
  sizeMismatch: (declared: number, received: number) =>
    new AppError(
      400,
      'UPLOAD_SIZE_MISMATCH',
      `The body has ${received} bytes but ${declared} were declared.`,
      'Send exactly sizeBytes bytes, or request a new uploadUrl with the right size.',
    ),
  rangeNotSatisfiable: (size: number) =>
    new AppError(416, 'RANGE_NOT_SATISFIABLE', `The requested range is outside the object's ${size} bytes.`, `Request a range within bytes=0-${size - 1}.`, { size_bytes: size }),
  limitAboveDefault: (field: string, ceiling: number) =>
    errors.validation(`'${field}' may not exceed the platform limit of ${ceiling} bytes; per-app overrides can only tighten it.`, [{ path: field, message: `at most ${ceiling}` }]),
  typesOutsidePlatform: (outside: readonly string[], platform: readonly string[]) =>
    errors.validation(
      `'allowed_content_types' may only narrow the platform's allow-list (${platform.join(', ')}); it does not allow ${outside.join(', ')}.`,
      [{ path: 'allowed_content_types', message: `within ${platform.join(', ')}` }],
    ),
};
