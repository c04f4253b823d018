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
`,
};
