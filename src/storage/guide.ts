// The storage area's hand-written guide (GET /llms.txt?area=storage); src/platform/area-guides.ts lists it.
import { MB, type AreaGuide } from '../platform/area-guide.ts';
import { DOWNLOAD_URL_TTL_SECONDS, INLINE_MAX_BYTES, LIST_MAX, UPLOAD_URL_TTL_SECONDS } from './service.ts';

export const STORAGE_GUIDE: AreaGuide = {
  summary:
    "An app's files: presigned upload and download URLs, or the bytes inline in the call for clients without HTTP of their own; per-app limits and usage.",
  reference: `
## Who sees which files

A service key (or the owner's platform key) sees and manages every file of the app; its uploads belong to no user
(the user segment of \`objectKey\` is \`service\`). An end-user JWT, or a key with \`user_token\`, acts as that end user:
only the files they uploaded, and their uploads belong to them. Other files answer 404 RESOURCE_NOT_FOUND.

## Presigned flow (any size up to the per-file limit)

1. \`storage_upload { filename, contentType, sizeBytes }\` reserves the file: \`{ uploadUrl, objectKey, objectId,
   expiresIn: ${UPLOAD_URL_TTL_SECONDS} }\`. \`objectKey\` is \`<app_id>/<user_id>/<objectId>_<filename>\`: metadata, not a URL.
2. HTTP PUT exactly \`sizeBytes\` bytes to \`uploadUrl\` with \`Content-Type\` equal to \`contentType\` and no
   Authorization header, within ${UPLOAD_URL_TTL_SECONDS} seconds. Keep \`objectId\`. The file is listed once its bytes arrived.
3. \`storage_download\` returns a \`downloadUrl\` valid ${DOWNLOAD_URL_TTL_SECONDS} seconds (Range supported; served as an
   attachment with its filename).

The upload URL refuses another content type (415 CONTENT_TYPE_MISMATCH), more bytes (413 UPLOAD_TOO_LARGE) or fewer
(400 UPLOAD_SIZE_MISMATCH), an expired URL (403 URL_EXPIRED), a tampered one (403 INVALID_SIGNATURE) and a second PUT
(409 UPLOAD_ALREADY_COMPLETED); nothing partial is kept.

## Inline (MCP-only clients)

\`storage_upload_inline\` stores a file whose bytes are in the call (base64 by default, or \`encoding: "utf8"\` text),
at most ${INLINE_MAX_BYTES / MB} MB (${INLINE_MAX_BYTES} bytes) once decoded; \`storage_read\` returns the bytes of a file up to the same
size. The request body may be 4 MB over MCP and REST alike (enough for ${INLINE_MAX_BYTES / MB} MB as base64). Larger content is
413 INLINE_CONTENT_TOO_LARGE: use the presigned flow. An inline upload is the presigned flow run by the server: the
same limits and errors, and nothing is stored or reserved on a refusal.

## Limits and errors

- Per file: 10 MB by default (400 FILE_TOO_LARGE). Per app: 1 GB by default, counting pending uploads (409
  STORAGE_QUOTA_EXCEEDED). Content types: the operator's allow-list (400 CONTENT_TYPE_NOT_ALLOWED).
- One end user may hold at most 20 pending uploads and 10% of the app's total reserved at once by default (429
  STORAGE_PENDING_LIMIT_EXCEEDED with Retry-After): finish or delete pending uploads, or wait for them to expire
  (a pending upload is released ${UPLOAD_URL_TTL_SECONDS} seconds plus 2 minutes after it was reserved). Keys have no such cap.
- storage_limits_get shows the limits in force and the usage; storage_limits_set may only tighten them for one app.
- Lists return at most ${LIST_MAX} files per call (page with limit and offset); REST returns a bare JSON array.

## Buckets and storage-js (Supabase Storage's API)

supabase-js's \`storage\` works unchanged against \`{base}/v1/{app_id}/storage/v1/\` (or \`/storage/v1/\` on the app's
host), with the app's publishable key and an end user's session, or the service key. Every file lives in a bucket at a
path; the tools above use the bucket \`files\`, which every app has and which cannot be deleted.

Agents manage buckets with \`storage_buckets_list\`, \`storage_buckets_set\` (create, or update what it names:
\`access\`, \`file_size_limit\` in bytes and \`allowed_mime_types\`, null clearing a limit; it answers the bucket) and
\`storage_buckets_delete\` (409 CONFLICT while the bucket holds files, unless \`empty: true\` removes them first;
\`files\` is refused): a platform key of a developer or above, or the service key; a viewer only lists.

- Buckets: listBuckets and getBucket for any caller of the app; createBucket, updateBucket, emptyBucket and
  deleteBucket (409 when not empty) with the service key or a platform key (403 otherwise). \`public: true\` makes a
  bucket public; our \`access\` field is \`owner\` (end users see their own files), \`authenticated\` (every end user
  reads) or \`public\` (anyone reads, \`/object/public/{bucket}/{path}\` with no credential; other buckets answer 404
  there). \`file_size_limit\` ("1MB" or bytes) and \`allowed_mime_types\` may only tighten the app's limits.
- Files: upload (POST, \`x-upsert: true\` to replace; 409 Duplicate otherwise), update (PUT; 404 when missing),
  download, info and exists, list (files and folder entries of one prefix; search, limit, offset, sortBy), move and
  copy (to another bucket too, whose limits apply; 409 when the path is taken; a copy is the caller's), remove (only
  what the caller owns; other paths are skipped). End users own what they upload and may replace, move or remove
  only that; anonymous callers read public buckets only and write nothing (403 "new row violates row-level security
  policy"). A Buffer, ArrayBuffer or string goes raw (with its Content-Length; a stream without one is 411); a Blob
  or File as multipart/form-data (one file, its part's type, the cacheControl field; a malformed form is 400). The
  bucket's limits (413 EntityTooLarge, 415 InvalidMimeType) and the app's (size, type, quota) apply before the file's
  bytes are read; an upload that sends nothing for 30 s is 408 RequestTimeout.
- Signed URLs: createSignedUrl(s) (expiresIn 1 s to a week) of objects the caller may read serve the bytes with no
  credential until they expire (400 InvalidSignature when tampered or for another path, 400 ExpiredToken after).
  createSignedUploadUrl (not anonymous; 2 hours): uploadToSignedUrl then needs no credential and uploads as the
  signer, replacing only when the signer asked for upsert.
- Errors come as \`{ statusCode: "<status>", code, error, message }\` with the true HTTP status.
- Both backends serve all of it (on S3 the bytes pass through the API: put, ranged get, copies inside the bucket).
`,
};
