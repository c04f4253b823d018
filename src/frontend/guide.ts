// The frontend area's hand-written guide (GET /llms.txt?area=frontend); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';
import { ENV_MAX_VALUE_LENGTH, ENV_MAX_VARS, ENV_RESERVED_PREFIX, UPLOAD_URL_TTL_SECONDS } from './types.ts';

export const FRONTEND_GUIDE: AreaGuide = {
  summary:
    'Host a built static site per app: send a map of files or upload a zip, follow its build to READY, and set the public frontend environment.',
  reference: `
## Two ways to deploy

- From files (no HTTP of your own): \`frontend_deploy_files { framework, files: { "index.html": "<!doctype html>...",
  "logo.png": { "content": "<base64>", "encoding": "base64" } } }\` creates, uploads and starts in one call (202,
  status BUILDING). The request may be 4 MB over MCP and REST alike; larger sites go through a zip.
- From a zip: \`frontend_deploy_create { framework }\` returns \`{ id, uploadUrl, expiresIn: ${UPLOAD_URL_TTL_SECONDS}, maxSizeBytes }\`
  (status WAITING); HTTP PUT the zip to \`uploadUrl\` with \`Content-Type: application/zip\` (no Authorization header;
  the signed URL works once, for ${UPLOAD_URL_TTL_SECONDS / 60} minutes); then \`frontend_deploy_start\` (202, BUILDING).

Either way, poll \`frontend_deploy_get\` until READY (its \`url\` serves the site) or ERROR (\`error\` says why). The
site's files are \`index.html\` at the root or inside a single folder such as \`dist/\`. A path that is absolute or
leaves the site, a duplicate path, too many files or bytes is 400 VALIDATION_FAILED (a zip over \`maxSizeBytes\` 413
PAYLOAD_TOO_LARGE) and creates nothing; a hostile zip ends in ERROR.

## Status

WAITING (created, no zip yet) -> UPLOADING (zip received) -> BUILDING (build job queued or running) -> READY (served),
or ERROR (with a readable error), or CANCELED. Starting before the upload or twice, cancelling a finished deployment
and the like are 409 INVALID_DEPLOYMENT_STATE. frontend_deploy_sync repairs a deployment that seems stuck.

## Serving

The live site is at its \`url\`: the app's own host \`{subdomain}.{base_domain}\` (in development
\`http://{subdomain}.localhost:<port>/\`), an origin of its own; build for the root (Vite: \`base: "/"\`). Browsers
opening \`{base_url}/sites/{app_id}/\` are sent there; other clients get the files sandboxed (opaque origin, no
cookies or localStorage; a platform without apps' hosts has only that form: build with \`base: "./"\`). framework: \`react-vite\` (SPA: unknown routes get
index.html), \`nextjs-static\` (next export: /about serves about.html, 404.html for misses), \`static\` or \`other\`
(exact files, 404.html if present). A new READY deployment replaces the live one; deleting the live one takes the site
offline. Plan \`pro\` keeps every READY deployment reachable at \`/sites/{app_id}/d/{id}/\`.

## Frontend environment

\`frontend_env_set\` replaces the variables pages read at run time: \`<script src="__env.js"></script>\` defines
\`window.__ENV__\` with them plus the platform's (a deploy's \`platform_env\`), all a browser client needs:

- SVC_APP_ID; SVC_API_URL (\`{base_url}/v1/{app_id}\`, every route of the app is below it).
- SVC_DATA_URL, the data API: \`fetch(SVC_DATA_URL + "/{table}?select=*")\` with \`Authorization: Bearer <access_token>\`
  (none for public reads); postgrest-js \`new PostgrestClient(SVC_DATA_URL, { headers })\`, supabase-js
  \`createClient(SVC_DATA_URL, access_token)\`.
- SVC_AUTH_SIGNUP_URL and SVC_AUTH_LOGIN_URL (POST JSON \`{ email, password }\`), SVC_AUTH_REFRESH_URL (POST
  \`{ refresh_token }\`, single-use): each answers \`{ access_token, expires_in, refresh_token, user }\`.
- SVC_PUBLISHABLE_KEY, the app's publishable key (not a secret): supabase-js whole, auth included,
  \`createClient(SVC_API_URL, SVC_PUBLISHABLE_KEY)\` (see the keys and auth sections).

The values are PUBLIC (every visitor gets them): never put secrets there. Names match \`^[A-Z_][A-Z0-9_]{0,63}$\`,
not starting with ${ENV_RESERVED_PREFIX}; at most ${ENV_MAX_VARS} variables of at most ${ENV_MAX_VALUE_LENGTH} characters.
It takes effect at once, without a new deployment.
`,
};
