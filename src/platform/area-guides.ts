// The hand-written part of each area's section of the guide (GET /llms.txt?area=<area>): what the area is for (also
// its line in the index of /llms.txt) and the reference detail that tool descriptions leave out (formats, limits,
// errors, rules). src/platform/docs.ts renders it above the area's generated tool reference. An area registered in
// tools/index.ts without an entry here still gets its index line and section, from its tools' titles.
import { LIMITS } from '../functions/types.ts';
import { DOWNLOAD_URL_TTL_SECONDS, INLINE_MAX_BYTES, LIST_MAX, UPLOAD_URL_TTL_SECONDS } from '../storage/service.ts';
import { ENV_MAX_VALUE_LENGTH, ENV_MAX_VARS, ENV_RESERVED_PREFIX, UPLOAD_URL_TTL_SECONDS as ZIP_URL_TTL_SECONDS } from '../frontend/types.ts';

export interface AreaGuide {
  /** One sentence: what the area is for. */
  summary: string;
  /** Markdown placed before the tool reference: formats, limits, errors and rules every tool of the area shares. */
  reference?: string;
}

const MB = 1024 * 1024;

export const AREA_GUIDES: Readonly<Record<string, AreaGuide>> = {
  apps: {
    summary: 'Create, list, read and delete apps; each app has its own Postgres database and a service key shown once.',
    reference: `
- \`apps_create\` (POST /init) returns \`app_id\`, \`name\`, \`subdomain\`, \`url\`, \`created_at\` and \`service_key\`
  \`{ id, name, hint, created_at, key }\`: the key is shown once and stored hashed; keep it server side. A lost key
  cannot be recovered: create another (service_keys_create, toolset \`keys\`) and revoke the old one.
- Each app database has the extensions vector and pgcrypto, the roles \`svc_anon\`, \`svc_user\`, \`svc_service\` and
  \`current_user_id()\`. With subdomain routing on, the app's host is \`{subdomain}.{base_domain}\` and app-scoped tools
  also answer on the short paths shown as "app host".
- \`apps_delete\` drops the database, the files, sites and functions, and revokes every key of the app; it cannot be undone.
`,
  },
  keys: {
    summary:
      'Extra service keys of an app (full access to that one app, e.g. for a server of your own) and substrate keys; an agent with its platform key and user_token rarely needs them.',
    reference: `
- Service key \`svc_sk_...\`: full access to one app (data as \`svc_service\`, bypassing row-level security); 403
  FORBIDDEN on any other app. Substrate key \`svc_sub_...\`: substrate routes only, never an app database.
- A new key is returned once (\`key\`) and stored hashed; lists show \`hint\` only. Revoking takes effect at once.
`,
  },
  schema: {
    summary:
      "Declare an app's tables (columns, indexes, references, row-level security access) and apply the difference as a migration; read the live schema and the migration history.",
    reference: `
## Definition

\`schema_apply\` takes \`{ tables: { <table>: { columns, indexes?, access?, plans?, _dropColumns?, _drop? } } }\`, at most 50
tables per call; \`schema_get\` returns the live schema in the same format, so an edited copy is the next definition.

- Column: \`{ type, primary?, nullable? (default true), unique?, default?, identity?, enum?, references?: { table,
  column, onDelete?, onUpdate? } }\`. \`identity: true\` numbers an integer or bigint primary key; \`enum: ["a", "b"]\`
  limits a text column to those values (a CHECK constraint). Table-level \`foreignKeys: [{ columns, references: {
  table, columns }, onDelete?, onUpdate? }]\` declares keys over several columns.
  Example: \`{ id: { type: "uuid", primary: true, default: "gen_random_uuid()" }, user_id: { type: "uuid" },
  title: { type: "text", nullable: false }, created_at: { type: "timestamptz", default: "now()" } }\`.
- Types: text, varchar, varchar(N), char, char(N), integer, bigint, smallint, real, float4, float8, decimal, numeric,
  numeric(P,S), boolean, bool, uuid, timestamp, timestamptz, date, time, timetz, interval, json, jsonb, bytea,
  vector(N) (1-16000), int4range, int8range, numrange, tsrange, tstzrange, daterange, tsvector, and arrays of these
  but vector (\`text[]\`).
- Defaults (an allow-list): numbers, true/false, null, quoted strings such as \`'draft'\` (optionally with \`::type\`),
  now(), gen_random_uuid(), current_timestamp, current_date, empty json or arrays such as \`'{}'::jsonb\`. A default that
  does not fit its column's type is refused before anything runs.
- Names match \`^[a-z_][a-z0-9_]{0,62}$\`, are not SQL reserved words and do not start with svc_ or pg_; table names
  are not route segments of the app API (schema, migrations, auth, storage, functions, fn, frontend, ai, rag, people,
  integrations, billing, chat, embeddings, data, keys, app, sites).
- Index: \`{ columns: [...], unique? }\`; index names are unique per app and distinct from table names.

## How a definition is applied

The platform diffs the definition against the live database and runs only what differs, in one transaction recorded
as a migration (schema_migrations); applying the same definition twice plans nothing; \`dry_run: true\` returns the
SQL and runs nothing. Leaving out a table or column never drops it: only \`_dropColumns: [...]\` and \`_drop: true\`
destroy data. On a column you list, the properties are declarative (leaving out \`default\` removes the default).
Column types and primary keys cannot change in place: add a new column, copy the data, then \`_dropColumns\` the old one.

## Access (row-level security)

| access | default when | no credential | end user (JWT, or a key with user_token) | service or platform key |
|---|---|---|---|---|
| user | the table has a \`user_id uuid\` column | nothing | own rows (user_id is theirs) | all |
| public | never | reads all rows | reads all; writes own rows if there is a user_id | all |
| service | no \`user_id uuid\` column | nothing | nothing | all |

An end user's insert gets their id in \`user_id\` automatically. An existing table keeps its access unless a definition
sets it.

## Premium rows (plans)

\`plans: ["pln_..."]\` (1-20 ids of the app's billing plans) gates a \`user\` or \`public\` table: end users and anonymous
callers reach its rows, as its access allows, only while the end user's subscription to one of these plans is
\`active\` or \`past_due\`; service and platform keys reach every row. It is a restrictive row-level security policy
calling \`public.current_user_plan()\` (the caller's entitled plan id, else null). A subscription change reaches the
app database within seconds. An existing table keeps its plans unless a definition sets them; \`plans: null\` removes
the gate; schema_get shows them.

## References between per-user rows

Postgres checks a foreign key without row-level security: an end user can insert a row that points at another user's
row if they know its id, and with the default onDelete the owner then cannot delete their own row (409 CONFLICT).
Give references between per-user tables \`onDelete: "cascade"\` (or \`"set null"\` on a nullable column) and use uuid
keys with gen_random_uuid(). onDelete: \`no action\` (default: the delete is refused with 409 while rows point at it),
\`restrict\` (the same, checked at once), \`cascade\` (those rows are deleted too), \`set null\` (their column becomes null).

## Errors

400 VALIDATION_FAILED names what is wrong (a type, default, name, reference or index) and nothing runs; 409 CONFLICT
when existing rows prevent a change (duplicates under a new unique constraint, rows pointing at missing rows, objects
that depend on a dropped one); nothing is changed then either.
`,
  },
  auth: {
    summary:
      "End users of an app: sign up, log in, refresh and log out, read the signed-in account; list an app's users; the public keys that verify their tokens.",
    reference: `
- \`auth_signup\` and \`auth_login\` (no credential needed) return \`{ access_token, token_type: "bearer", expires_in,
  refresh_token, user }\`. Send the access token as \`Authorization: Bearer\` to the app's routes, or pass it as
  \`user_token\` with your key to any tool that serves end users (data, storage, auth_user, auth_logout,
  functions_invoke): the call then sees and does exactly what that user would.
- Passwords are 8-200 characters; emails are case-insensitive. An email already registered is 409 CONFLICT; a wrong
  password or unknown email 401 AUTH_INVALID_CREDENTIALS. Signup and login are rate-limited per client and app: 429
  RATE_LIMITED with \`details.retry_after_seconds\`.
- Access tokens are ES256 JWTs (issuer the base URL, audience the app_id, claims \`sub\`, \`email\`,
  \`role: "authenticated"\`), short-lived and stateless: they stay valid until they expire, also after logout. Refresh
  tokens work once: \`auth_refresh\` returns a new pair; presenting a used one again ends that whole session. An
  invalid, expired or revoked token is 401 AUTH_INVALID_TOKEN.
- auth_user and auth_logout act for an end user: their own token as the credential, or a key with \`user_token\`
  (a key without it is 400 VALIDATION_FAILED).
`,
  },
  platform: {
    summary: 'The platform itself: this guide and its per-area sections, liveness and readiness checks, and suggestions to its maintainers.',
  },
  storage: {
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
  },
  frontend: {
    summary:
      'Host a built static site per app: send a map of files or upload a zip, follow its build to READY, and set the public frontend environment.',
    reference: `
## Two ways to deploy

- From files (no HTTP of your own): \`frontend_deploy_files { framework, files: { "index.html": "<!doctype html>...",
  "logo.png": { "content": "<base64>", "encoding": "base64" } } }\` creates, uploads and starts in one call (202,
  status BUILDING). The request may be 4 MB over MCP and REST alike; larger sites go through a zip.
- From a zip: \`frontend_deploy_create { framework }\` returns \`{ id, uploadUrl, expiresIn: ${ZIP_URL_TTL_SECONDS}, maxSizeBytes }\`
  (status WAITING); HTTP PUT the zip to \`uploadUrl\` with \`Content-Type: application/zip\` (no Authorization header;
  the signed URL works once, for ${ZIP_URL_TTL_SECONDS / 60} minutes); then \`frontend_deploy_start\` (202, BUILDING).

Either way, poll \`frontend_deploy_get\` until READY (its \`url\` serves the site) or ERROR (\`error\` says why). The
site's files are \`index.html\` at the root or inside a single folder such as \`dist/\`. A path that is absolute or
leaves the site, a duplicate path, too many files or bytes is 400 VALIDATION_FAILED (a zip over \`maxSizeBytes\` 413
PAYLOAD_TOO_LARGE) and creates nothing; a hostile zip ends in ERROR.

## Status

WAITING (created, no zip yet) -> UPLOADING (zip received) -> BUILDING (build job queued or running) -> READY (served),
or ERROR (with a readable error), or CANCELED. Starting before the upload or twice, cancelling a finished deployment
and the like are 409 INVALID_DEPLOYMENT_STATE. frontend_deploy_sync repairs a deployment that seems stuck.

## Serving

The live site is at \`{base_url}/sites/{app_id}/\` (and \`{subdomain}.{base_domain}\` with subdomain routing); build with
relative asset paths (Vite: \`base: "./"\`) for the path form. framework: \`react-vite\` (SPA: unknown routes get
index.html), \`nextjs-static\` (next export: /about serves about.html, 404.html for misses), \`static\` or \`other\`
(exact files, 404.html if present). A new READY deployment replaces the live one; deleting the live one takes the site
offline. Plan \`pro\` keeps every READY deployment reachable at \`/sites/{app_id}/d/{id}/\`.

## Frontend environment

\`frontend_env_set\` replaces the variables pages read at run time: \`<script src="__env.js"></script>\` defines
\`window.__ENV__\` with them plus SVC_APP_ID and SVC_API_URL. The values are PUBLIC (every visitor gets them): never
put secrets there. Names match \`^[A-Z_][A-Z0-9_]{0,63}$\`, not starting with ${ENV_RESERVED_PREFIX}; at most ${ENV_MAX_VARS} variables of at most
${ENV_MAX_VALUE_LENGTH} characters. It takes effect at once, without a new deployment.
`,
  },
  functions: {
    summary:
      'Serverless functions (TypeScript or JavaScript on Deno 2) run over HTTP, on a cron schedule or for websocket events; test-invoke them, read their logs, manage their variables.',
    reference: `
## Runtime contract

\`\`\`ts
export default async (request: Request, ctx) => Response.json({ hello: new URL(request.url).searchParams.get("name") });
\`\`\`

- The module default-exports \`async (request: Request, ctx) => Response\` with web-standard Request and Response
  (TypeScript or JavaScript, no build step; Deno 2 APIs and fetch are available). It is loaded when deployed: code
  that does not parse, throws while loading or has no default-exported function is 400 FUNCTION_INVALID with the
  compiler or runtime message, and the previous version keeps serving.
- \`ctx = { env, appId, user, token, data, billing, integrations, substrate? }\`: \`env\` holds your envVars plus SVC_APP_ID and SVC_API_URL
  (\`{base_url}/v1/{app_id}\`); \`user\` is \`{ id, claims }\` when the caller sent an end-user JWT of this app (else
  null) and \`token\` that JWT.
- \`ctx.data\` reads and writes this app's tables without a key, as that end user (row-level security) or else as the
  app: \`await ctx.data.from("books").select("id,title", { query: "order=id", count: true })\`, \`.insert(rows)\`,
  \`.update(patch, "id=eq.5")\`, \`.delete("id=eq.5")\` resolve to \`{ data, error, status, count }\` (PostgREST query
  syntax as data_select; nothing throws).
- \`ctx.billing\` tells what the calling end user pays for: \`await ctx.billing.subscription()\` is their current
  subscription (as billing_subscription_get returns it) and \`await ctx.billing.plan()\` the plan id it entitles them to
  (status active or past_due), each null without an end user; a refusal rejects with a BillingError (code, status).
- \`ctx.integrations.execute(toolName, params)\` runs a tool of the app's enabled toolkits as the calling end user,
  through their connected account (as integrations_execute): \`{ successful: true, data }\`. Without an end user (key,
  cron) pass \`{ userId }\` as a third argument; a refusal rejects with an IntegrationsError (code, status).
- \`ctx.substrate\` exists while the app is linked to a substrate user (substrate_app_link): \`propose(capability, payload,
  { idempotency_key }?)\`, \`getEntity\`, \`findEntities\`, \`searchMemory\`, \`patchEntity\`, \`mergeEntities\`, \`deleteEntity\`, for
  that user as an agent (platform_guide area=substrate); a refusal rejects with a SubstrateError (code, status).
- \`fetch()\` to a URL under SVC_API_URL (any platform route, with the Authorization you pass) is forwarded by the
  platform, also on loopback deployments. Other URLs go to the network.
- \`request.url\` is the origin of \`{base_url}\`, then the path after the function name ("/" when none) and the query;
  the header \`x-forwarded-prefix\` holds \`/v1/{app_id}/fn/{name}\`. console.* output goes to the invocation log.
- Sandbox: outbound network only (no files, environment or subprocesses); loopback, private networks and the
  database hosts are unreachable (the error names the setting that governs it). npm: imports are not available,
  https: imports from public module hosts are.

## Triggers

- \`{ type: "http" }\` (default): public at \`url\` = \`{base_url}/v1/{app_id}/fn/{name}[/rest]\`, any method; the body
  (up to 6 MB) and the response stream through. End-user JWTs and the app's service key are passed on; platform keys
  are stripped.
- \`{ type: "cron", config: { schedule: "*/5 * * * *" } }\`: 5-field, UTC; runs as POST with JSON \`{ scheduled_at }\` once
  per due slot.
- \`{ type: "websocket", config: { event: "chat" } }\`: runs for messages \`{ event, data }\` on \`/v1/{app_id}/ws\` as POST
  with JSON \`{ event, data }\`; the response body goes back on the socket.

## Limits

Code at most ${LIMITS.codeMaxBytes / MB} MB (a deploy request may be 4 MB, over MCP and REST alike); \`timeoutMs\` ${LIMITS.timeoutMin}-${LIMITS.timeoutMax}
(default ${LIMITS.timeoutDefault}); \`memoryLimitMb\` ${LIMITS.memoryMin}-${LIMITS.memoryMax} (default ${LIMITS.memoryDefault}); at most ${LIMITS.envMaxVars} variables; console output
${LIMITS.consoleMaxBytes / 1024} KB per invocation; the newest 1000 invocations per function are logged.

## Failures of a function

A failure is the function's response (and, in functions_invoke, a result with \`error\` saying why, not an error of the
tool): 500 FUNCTION_ERROR (it threw or returned no Response; the message is in the logs), 504 FUNCTION_TIMEOUT, 500
FUNCTION_OUT_OF_MEMORY, 500 FUNCTION_CPU_EXCEEDED, 502 FUNCTION_ABORTED (another invocation sharing its process
exceeded its limits: retry), 503 FUNCTION_BUSY (no free process in time: retry after Retry-After). Every invocation,
functions_invoke's too (trigger "test"), is logged and counted; functions_logs with \`level: "error"\` lists the failed
ones.
`,
  },
  data: {
    summary:
      "Read and write an app's tables with PostgREST syntax, as the app (your key) or as an end user (user_token) under row-level security.",
    reference: `
## Query syntax (\`query\` over MCP, the query string over REST)

- Filters \`col=op.value\`: eq, neq, gt, gte, lt, lte, like and ilike (\`*\` or \`%\`), match and imatch (regex), is (null,
  not_null, true, false), isdistinct, in.(a,b), cs, cd, ov (arrays \`{a,b}\`, jsonb, ranges \`[1,5)\`), sl, sr, nxl, nxr,
  adj (ranges), fts (also plfts, phfts, wfts; \`fts(english).term\`); \`like(any).{a*,b*}\` and \`(all)\`; \`not.\` negates;
  \`or=(a.eq.1,b.gt.2)\`, \`and=(...)\`, nested. JSON paths \`data->key->>key\` work in filters, select and order.
- \`select=col,alias:col,col::text,data->>key,count(),col.sum()\` (aggregates group by the other columns) and embedded
  resources through foreign keys, nested to any depth: \`author:authors(name,posts(title))\`; many-to-one and
  one-to-one as an object, one-to-many and many-to-many (through a join table) as an array; \`rel!inner(...)\`
  keeps only rows with a match, \`rel!<fk or column>(...)\` disambiguates, \`...rel(cols)\` spreads the columns into
  the row, \`rel()\` embeds only to filter. Embedded rows take filters and paging: \`posts.done=eq.false\`,
  \`posts.order=id.desc\`, \`posts.limit=3\`; \`rel=not.is.null\` keeps rows that have one. \`order=rel(col)\` orders
  by a to-one related column.
- \`order=col.desc.nullslast,col2\`, \`limit\`, \`offset\`, or \`range: "items=0-9"\`. A read returns at most 1000 rows.
- Example: \`select=id,title,author:authors(name)&done=eq.false&order=id.desc&limit=10\`.

## Options

- \`prefer\` (the Prefer header): \`count=exact|planned|estimated\` (total in \`content_range\`, status 206 when more
  rows match than came back; planned is the planner's estimate, estimated is exact up to 1000), \`return=representation\`
  (writes return their rows; default minimal) or \`headers-only\` (an insert's \`location\`),
  \`resolution=merge-duplicates|ignore-duplicates\` with \`on_conflict=<columns>\` in \`query\` (upsert; default the
  primary key), \`missing=default\` (a key a row lacks takes the column's default instead of null; with
  \`columns=a,b\` in \`query\` an update writes only those keys), \`tx=rollback\` (dry run: the write answers, then is
  undone), \`handling=strict\` (an unknown preference is 400) with \`max-affected=<n>\` (an update or delete of more
  rows fails, 400 PGRST124, changing nothing), \`timezone=<zone>\`.
- \`accept\`: \`application/vnd.pgrst.object+json\` is exactly one row, as an object (406 NOT_SINGLE_ROW otherwise);
  \`text/csv\` makes \`data\` CSV text; \`;nulls=stripped\` on it or on \`application/vnd.pgrst.array+json\` drops null
  fields; other types are 406 NOT_ACCEPTABLE.
- Bodies: a row object, or an array of rows for a bulk insert; vector columns take JSON number arrays.

## Who runs the call

A platform or service key sees all rows. With \`user_token\`, the call runs as that end user under row-level security:
own rows only, and inserts get their \`user_id\`. Over REST the caller may also be an end-user JWT, or no credential
(public tables only). A row hidden by row-level security is absent (404 on by-id routes); a write it refuses is 403.

## Errors

400 INVALID_QUERY (also an operator, cast or aggregate the column's type lacks), UNKNOWN_COLUMN, UNKNOWN_RELATIONSHIP;
300 AMBIGUOUS_RELATIONSHIP (name one with !hint); 400 QUERY_TOO_COMPLEX (over 20 embeds or 200 select items), FILTER_REQUIRED (data_update and data_delete need a filter), INVALID_PREFERENCES, MAX_AFFECTED_EXCEEDED; 404 RESOURCE_NOT_FOUND; 406
NOT_SINGLE_ROW, NOT_ACCEPTABLE; 409 CONFLICT (unique or foreign-key violation); 413 RESPONSE_TOO_LARGE (select fewer columns or page);
416 INVALID_RANGE; 504 STATEMENT_TIMEOUT (5 s per request).
`,
  },
  ai: {
    summary:
      "An OpenAI-compatible AI gateway per app (chat completions, embeddings) with the app's own provider key or the account's AI credits, model rules, per-end-user budgets and usage.",
    reference: `
## Calling it

- Any OpenAI client works unchanged: \`new OpenAI({ baseURL: "{base_url}/v1/{app_id}", apiKey })\` with a service key
  (server side, functions) or an end user's access token (browser apps; their calls are metered per end user). Routes:
  \`POST /v1/{app_id}/chat/completions\` (\`stream: true\` relays server-sent events as they arrive, ending with
  \`data: [DONE]\`) and \`POST /v1/{app_id}/embeddings\` (\`encoding_format\` float or base64).
- Models are \`<vendor>/<model>\` ids of the upstream router (e.g. \`openai/gpt-4o-mini\`), passed on as they are;
  embeddings: \`<vendor>/text-embedding-3-small\` (1536 dimensions), \`-3-large\` (3072), \`-ada-002\` (1536).
- Request fields the gateway does not read (tools, response_format, top_p, ...) pass through untouched.

## Configuration (ai_config_set, PUT /v1/{app_id}/ai/config)

\`defaultModel\` (used when a request names none), \`byokKey\` (the app's own upstream key: sealed at rest, never
returned; GET shows \`byokKeySet\` and \`byokKeyHint\`; null removes it), \`maxTokensPerRequest\` (1-100000: a
larger max_tokens is refused with 400, an absent one is sent as the cap), \`allowedModels\` (other models: 403),
\`endUserDailyTokenLimit\` (tokens per end user and UTC day: 429 past it, with Retry-After). Omitted fields keep
their value; null clears one.

## Credits and usage

Calls with the platform's key spend the account's AI credits (free plan $0.10 once, pro $10 per period, enterprise
unlimited): each call reserves an estimate before the upstream is called (402 insufficient_credits when nothing is
left, and nothing is sent) and is charged its real cost after, in the transaction that writes its usage row; cost is
the upstream's reported \`usage.cost\`, else the operator's price table. Own-key calls are recorded but cost no
credits. \`ai_usage\` (GET /v1/{app_id}/ai/usage?startDate=&endDate=, inclusive UTC dates, default the last 30
days): \`{ startDate, endDate, totalTokens, totalCost, creditsUsed, byModel, byUser }\`.

## Errors

OpenAI's shape on these routes, \`{ error: { message, type, code, param } }\`: 400 invalid_request (param names the
field), 401 missing_credentials (no or an invalid credential), 402 insufficient_credits, 403 model_not_allowed / not_authorized,
429 end_user_budget_exceeded, upstream 4xx relayed with the upstream's status, type and code (a refused key: 502
upstream_error for the platform's, 502 byok_key_rejected for the app's own), 502 upstream_error
(upstream 5xx, timeout or network: retry with backoff), 503 provider_unavailable (no upstream configured). A stream
that breaks after it started ends with a \`data: { error }\` event. Over MCP the same errors use the standard envelope.
`,
  },
  rag: {
    summary:
      "Retrieval over an app's documents: collections, asynchronous ingestion of texts and stored files (chunked, embedded through the AI gateway), similarity queries with metadata filters and cited answers.",
    reference: `
## Flow

\`rag_collections_create\` -> \`rag_ingest\` (text, or \`storage_object_id\` of a stored file) answers 202 with a
\`documentId\` -> poll \`rag_documents_get\` until \`status\` is \`ready\` (\`chunkCount\` set) or \`failed\`
(\`errorMessage\` says why) -> \`rag_query\` (\`synthesize: true\` for an answer that cites the chunks as [1], [2]).

## Access

- \`private\` (default): only the app's keys. \`shared\`: end users (their JWT, or a key with user_token) may list,
  read and query every document, but not ingest or delete. \`custom\`: end users ingest documents they own, and see
  (list, read, query) only the documents without an owner (ingested with a key) and their own; they delete only
  their own. Creating and deleting collections needs a key. Another app's credentials get 403.

## Ingestion

- Files: text, Markdown, HTML (visible text), PDF, DOCX and JSON; anything else fails the document with a message.
- Chunks of \`chunkSize\` tokens (cl100k, default 512) overlapping by \`chunkOverlap\` (default 64), cut at paragraph,
  then sentence, then word boundaries. \`metadata\` (at most 8 KB as JSON) is stored with every chunk.
- Embeddings go through the AI gateway in batches, billed like ai_embed (the app's own key when it has one), with
  the collection's \`embeddingModel\` (default openai/text-embedding-3-small; every collection stores 1536 dimensions).
- Limits: \`text\` up to 3,000,000 characters per call; a file's extracted text up to 5,000,000 characters (and the
  storage per-file limit); at most 10,000 chunks per document. Over them the call is 400 or the document fails.
- A failing upstream is retried (5 attempts); a refusal (credits, allowedModels) fails the document at once.

## Query

\`query\`, \`topK\` (1-100, default 5), \`threshold\` (minimum cosine similarity 0-1), \`filter\` (metadata
key-values every chunk must contain), \`synthesize\`, \`model\` (default the app's defaultModel, else
openai/gpt-4o-mini). Only ready documents are searched. With no chunk passing, the answer says it does not know and
no model is called.

## Errors

400 VALIDATION_FAILED (names the field), 403 FORBIDDEN (private collection, end user writing a shared one, another
user's document), 404 RESOURCE_NOT_FOUND (collection, document or stored file), 409 CONFLICT (duplicate collection
name); the AI gateway's 402, 429 and 502 apply to queries.
`,
  },
  substrate: {
    summary:
      "The user's own layer of record (in progress): every write is a proposed action that a policy runs at once or holds for the human's approval, recorded in a ledger with its undo.",
    reference: `
## Who acts

Over MCP (platform key) you act for the account's substrate user as an **agent**; over REST a substrate key
(svc_sub_...) acts as the **human**. Yolo mode is the human's (REST). Approving and rejecting are the person's: over
MCP the tool sends them to the platform's approval page (URL elicitation; /approve/<action_id>, signed in with their
substrate key) and returns the action once they decided; a client without URL elicitation gets the link to pass on.
Agents never mint substrate keys (REST only). A linked app
(substrate_app_link) proposes as an agent with its service key or from functions (ctx.substrate).
substrate_ws_ticket mints a 60-second, single-use ticket for the live change stream (websocket
/v1/me/substrate/stream?ticket=...): { type: "hello" }, then { org, op, tbl, id } per committed change.

## Propose

\`substrate_propose\` \`{ capability, payload, idempotency_key?, dangerously_skip_approval? }\` ->
\`{ action_id, verdict: { result, reason, conflicts }, requires_approval, result?, replay? }\`. Verdicts, in order: a
conflict with an active principle in \`reject\` mode -> \`rejected\`; any other conflict -> \`requires_approval\`; the
owner's skip flag -> \`auto_approved\` (ignored for agents); policy auto -> \`auto_approved\`; yolo mode and a human
proposer (not for side-effecting capabilities) -> \`auto_approved_yolo\`; otherwise \`requires_approval\`. A payload
that fails validation is a 400 naming \`payload.<field>\`. The same \`idempotency_key\` (per user, forever) returns the
first outcome with \`replay: true\` and runs nothing.

## Capabilities (built so far)

| capability | payload (required; optional) | policy |
|---|---|---|
| record_decision | title, kind (operational, strategic, mission, vision, principle, policy_decision); rationale, salience (ambient, normal, archival; default normal), source_artifact_id | auto, reversible |
| record_commitment | description, status (proposed, tentative, confirmed, fulfilled, expired, broken); from_entity, to_entity, amount, unit, due_at, source_artifact_id, attrs | auto, reversible |
| record_learning | title, description; resolution_taken, related_decision_id, source_artifact_id | auto, reversible |
| record_principle | title, applies_to \`{ capabilities?: [...], entity_types?: [...] }\`, constraint_spec \`{ logic: <JSON-Logic over { capability, payload }>, mode?: "require_approval" or "reject" }\`; rationale, salience (default ambient) | approval |
| supersede_decision | old_decision_id, new_title, kind; new_rationale | approval |
| retire_principle | principle_id, reason | approval |
| revert_action | action_id | auto |
| bulk_revert_actions | action_ids (1-200), reason; failures are collected in the result | approval |
| upsert_entity | type (person, company, fund, workspace, team, project, event, agent, self), display_name; id, primary_email, canonical_keys (flat, scalar values), linked_app_user_id (uuid), linked_app_id, attrs -> { entity_id, was_insert } | auto, reversible |
| update_entity | id; display_name, primary_email (null clears), attrs (replaced wholesale); at least one | auto, reversible |
| patch_entity | id; display_name, primary_email, attrs_patch (JSON merge patch), if_updated_at; at least one of the first three | auto, reversible |
| merge_entities | loser_id, winner_id, reason | approval |
| delete_entity | id, reason | approval |
| send_email_draft | to (an address, or 1-50), subject, body; target_role | approval, even in yolo mode (side-effecting) |
| upsert_source_artifact | kind, title; id, external_system + external_id (together), summary, content, url, storage_object_id, links { entity_ids?, project_tags? }, attrs -> { artifact_id, was_insert, before } | auto, reversible |

A principle applies to the capabilities in \`applies_to.capabilities\` and the entity types in \`applies_to.entity_types\`
(each empty: any); its \`logic\` over \`{ capability, payload, entity_type }\` must be true for a proposal, e.g.
\`{ "<=": [{ "var": "payload.amount" }, 100] }\`. A logic that cannot be evaluated counts as a conflict, as does one
needing more than 100,000 operations or 50 ms (a proposal's principles share the 50 ms).

## Entities

Read with substrate_entities_list (type, q = display-name substring, limit 1-200 default 50, count) and
substrate_entities_get; write through substrate_propose or substrate_entities_patch. upsert_entity matches, in order:
id, then an entity of the same type whose canonical_keys contain every pair you send, then the same type and email
(case-insensitive); otherwise it inserts (primary_email is also stored as canonical_keys.email). Send what you know
as canonical_keys ({ "linkedin": "...", "domain": "..." }) so later upserts find the entity. To patch safely, send
the updated_at you read as if_updated_at: if someone wrote since, you get 409 STALE_ENTITY; read again and reapply.
After merge_entities the loser's id still works everywhere and answers the winner (compare the returned id).

## Errors

400 VALIDATION_FAILED; 401 AUTH_INVALID_TOKEN (REST without a substrate key); 403 FORBIDDEN (a service key); 404
RESOURCE_NOT_FOUND; 409 wrong_status (approve or reject of an action not proposed), ALREADY_REVERTED, NOT_REVERSIBLE,
NOT_EXECUTED, STALE_ENTITY
(patch with an old if_updated_at), ENTITY_GONE and ENTITY_MERGED_INTO (reverts), ARTIFACT_GONE (revert of a deleted
artifact), CONFLICT (external ids already used by another artifact), SUBSTRATE_NOT_LINKED (an app's
proposal before substrate_app_link); 403 HUMAN_CONFIRMATION_REQUIRED, HUMAN_DECLINED and HUMAN_DECISION_PENDING
(approve or reject over MCP: the person has not decided on the page).
`,
  },
  memory: {
    summary:
      "Read the substrate user's memory: full-text search and a chronological list over decisions, commitments, learnings and source artifacts, the artifacts themselves, and daily snapshots of the counts.",
    reference: `
Writes go through substrate_propose (toolset substrate): record_decision, record_commitment, record_learning,
upsert_source_artifact.

## Artifacts

upsert_source_artifact finds the artifact by id, else by (external_system, external_id), else inserts a new art_ id.
On a match, omitted fields stay, null clears, links and attrs merge key by key; \`before\` is the previous row (or
null). A linked app's artifacts carry its source_app_id. A record_* source_artifact_id must name one of your
artifacts (404 otherwise); deleting an artifact clears the references to it. substrate_artifacts_list takes kind, q
(full text over title, summary, content), limit 1-200 (default 50), count; substrate_artifacts_get adds content.

## Memory

substrate_memory_search is English full-text search over decisions (title, rationale), commitments (description),
learnings (title, description, resolution) and artifacts (title, summary, content). match: \`and\` every word (web
search syntax: "a phrase", or, -word), \`or\` any word, \`phrase\` the words in order. rank is ts_rank, best first; q
empty or * lists the newest with rank null. kinds: comma-separated decisions, commitments, learnings, source_artifacts.
Rows: { id, kind, title, body_text, rank, updated_at, source_artifact_id, supersedes, status }.
substrate_memory_list pages newest first: pass next_before back as before (a bare ISO time also works);
superseded=false leaves out superseded decisions and expired commitments.

## Snapshots

substrate_snapshots_list (days 1-365, default 7): one row per UTC day of entity, decision, commitment, learning,
active-principle, artifact, open-commitment, action and pending-approval counts at taken_at; written daily at 00:05
UTC, and today's is made on the first read when missing.
`,
  },
  outbox: {
    summary: 'Webhooks that receive the substrate actions of a capability as they execute, signed, retried and listable, with redelivery of dead ones.',
    reference: `
substrate_outbox_target_set { capability, webhook_url, signing_secret (>= 8), source_app_id? }: every executed action
of the capability (from that app only, with source_app_id) is POSTed as JSON { delivery_id, action_id, capability,
payload, result, proposer_kind, source_app_id, source_rule_id, created_at } with X-Svc-Signature: sha256=<hex
HMAC-SHA256 of the raw body with the secret>, X-Svc-Timestamp and X-Svc-Delivery. Non-2xx or network errors are
retried with backoff up to the operator's attempt limit (default 8), then the delivery is dead:
substrate_outbox_deliveries_list (status, limit) shows it, substrate_outbox_redeliver sends it again. URLs resolving to
private or loopback addresses are refused (400 OUTBOUND_ADDRESS_REFUSED) unless the operator allows them.
`,
  },
  billing: {
    summary:
      "The account's plan, usage and status (soft lock, grace, suspension), upgrading through Stripe, and apps charging their own end users through Stripe Connect (plans, products, subscriptions, orders, entitlements in RLS and functions).",
    reference: `
**Platform billing** (platform key): \`billing_get\` (GET /dashboard/billing) answers \`{ plan, status, statusReason,
graceEndsAt, period: { start, end }, usage, limits, percentages, overageUsd, subscription }\`; usage, limits and
percentages are keyed by meter: \`monthly_active_users\`, \`database_bytes\`, \`bandwidth_bytes\`, \`storage_bytes\`,
\`lambda_invocations\` (summed over the account's apps) and \`ai_credits\` (USD). Monthly meters count the current UTC
month; storage and database size are levels. \`billing_usage\` (GET /dashboard/usage?startDate&endDate&meterType)
answers \`{ startDate, endDate, rows: [{ date, meterType, quantity }] }\` (also \`ai_tokens\`, \`ai_credits\` in USD).
Plans: free ($0.10 AI credits once, 50,000 MAU, 500 MB database, 5 GB bandwidth, 1 GB files, 50,000 invocations a
month), pro ($25/month: $10 AI credits a month, 100,000 MAU, 8 GB, 250 GB, 100 GB, 500,000; overage per MAU $0.00325,
per GB $0.125 database, $0.09 bandwidth, $0.021 files), enterprise (unlimited, arranged with the operator).

Account \`status\`: \`active\`; \`soft_locked\` (free plan over an allowance: app writes answer 402
ACCOUNT_SOFT_LOCKED naming the meter, reads, sign-in and deletes still work) back to \`active\` ("restored", with
\`statusReason\`) when usage drops or the plan is paid; \`grace\` (a pro payment failed: everything works for 7 days,
e-mail sent) then \`suspended\` (every app call answers 402 ACCOUNT_SUSPENDED; e-mail) until the invoice is paid.
Free apps without requests for 7 days are paused: their calls answer 423 APP_PAUSED until \`apps_restore\`.
\`billing_checkout\` \`{ planId: "pro" }\` returns a Stripe Checkout \`url\`; \`billing_portal\` the self-service portal.
Without Stripe on the platform these answer 503 STRIPE_NOT_CONFIGURED; plans, meters and limits still apply.

**Monetization** (an app charging its end users; Stripe Connect, the platform keeps SVC_PLATFORM_FEE_PERCENT):
1. \`billing_connect_onboard\` (once per owner) returns \`{ accountId, onboardingUrl }\`: the owner completes it in a
   browser; \`billing_connect_status\` shows \`chargesEnabled\` and \`payoutsEnabled\`.
2. \`billing_plans_create\` \`{ name, priceCents, interval, features }\` and \`billing_products_create\` \`{ name,
   priceCents, description, metadata }\`; lists are public (the app's catalog, no credential).
3. End users (their JWT, or a key with \`user_token\`): \`billing_subscribe\` \`{ planId, successUrl, cancelUrl }\` and
   \`billing_purchase\` \`{ productId, quantity?, successUrl, cancelUrl }\` return a checkout \`url\` (purchase also
   \`orderId\`); \`billing_subscription_get\`, \`billing_cancel\` (at period end), \`billing_orders_list\`,
   \`billing_orders_get\` show the caller's own only.
Subscription \`status\`: \`pending\` (checkout open), \`active\`, \`past_due\` (a renewal failed; still entitled),
\`canceled\`. Order \`status\`: \`pending\`, \`paid\`, \`failed\`, \`refunded\` (a partial refund stays paid).
Entitlements: the table option \`plans: ["<plan id>"]\` in schema_apply opens rows only to end users whose
subscription to one of those plans is active or past_due (keys see all); SQL \`public.current_user_plan()\` returns
that plan id for your own policies and views; functions call \`await ctx.billing.plan()\` or
\`ctx.billing.subscription()\`. Stripe's events reach POST /webhooks/payments/connect; entitlements follow within seconds.
`,
  },
  meetings: {
    summary:
      'Meeting bots that join Zoom, Google Meet, Teams or Webex calls to record and transcribe them, with signed event forwarding to your webhook and per-second billing from account credits.',
    reference: `
## Flow

\`meetings_webhook_set\` { forward_url } once (keep the \`wsec_\` secret it returns) -> \`meetings_spawn\` { meetingUrl } -> events arrive
at forward_url -> on \`bot.done\`, \`meetings_get\` for \`recordingUrl\` and \`transcriptUrl\` (short-lived: read again for fresh
ones). \`meetings_leave\` makes a bot leave early. \`GET /v1/ai/meetings/_status\` (no credential): \`{ available }\`.

## Bot status

\`joining\` (spawned) -> \`waiting_room\` -> \`in_call\` <-> \`recording\` -> \`ended\` (artifacts being finalised) -> \`done\`;
\`fatal\` from any non-terminal status (could not join, kicked, error). Statuses only move forward (late events change
nothing); \`done\` and \`fatal\` are final. \`startedAt\`: first in call; \`completedAt\`: call over; \`durationSeconds\` between.

## Events

POST to forward_url, \`content-type: application/json\`, \`x-svc-event: <event>\`, \`x-svc-delivery: <id>\`,
\`x-svc-signature: v1,<base64 HMAC-SHA256 of the raw body, keyed with the wsec_ secret>\`. Body \`{ event, data: { bot:
{ id, metadata }, data: { code, sub_code, updated_at } } }\`; recording and transcript events add \`recording\` / \`transcript\`
\`{ id, metadata }\`, never URLs. Events: \`bot.in_call_recording\`, \`bot.done\`, \`bot.fatal\`, \`recording.done\`,
\`transcript.done\`, \`transcript.failed\`. Verify: \`"v1," + hmac_sha256(secret, raw_body).base64\` compared in constant time. A
non-2xx answer is retried with backoff, then the delivery is dead; \`meetings_webhook_deliveries\` lists them. URLs resolving to
private addresses are refused (400 outbound_address_refused).

## Billing

Spawn holds an hour's estimate of the account's credits (402 insufficient_credits with \`balance_usd\`, \`credit_floor_usd\` when
the balance is at its floor: no bot is sent). On \`done\` one usage row per dimension, \`recording\` always and \`transcription\`
when enabled, \`{ id, bot_id, dimension, seconds, usd_charged }\` (decimal string), charged per second at the operator's hourly
prices; \`fatal\` sessions cost nothing. \`meetings_usage\`: the last 100 rows.

## Rules and errors

meetingUrl: https link of Zoom, Google Meet, Teams, Webex or GoTo; botName 1-64; metadata: at most 50 string keys (1-100
characters, not starting with \`svc_\`) with values up to 500; automaticLeave: waitingRoomTimeoutSec,
noOneJoinedTimeoutSec, everyoneLeftTimeoutSec, inCallNotRecordingTimeoutSec, integers 1-86400. REST errors are OpenAI-shaped
\`{ error: { message, type, code } }\`: 400 invalid_request (\`error.details\`), 401 missing_credentials, 402 insufficient_credits,
403 not_authorized (only the app's owner: its service key or the owner's platform key), 404 app_not_found / bot_not_found,
501 provider_unavailable (no provider on this platform), 502 provider_error, 503 provider_busy (retry later).
`,
  },
  people: {
    summary:
      "People and company search, profile enrichment with a shared 30-day cache, and asynchronous work-email lookups, billed per call to the account's credits.",
    reference: `
## Calls

Routes \`POST /v1/{app_id}/people/search/person\`, \`search/company\`, \`profile\`, \`profile/email\` (202) and
\`GET /v1/{app_id}/people/email-lookup/{lookup_id}\`, with a service key of the app or its owner's platform key (any
other credential: 403). Search: \`query\` (natural language, served by the slot \`query\` is routed to, usually a
semantic provider) or structured filters (combined into a description for semantic providers); at least one.
\`pageSize\` 1-100 (default 10). \`data.nextPage\` is \`{base_url}/v1/{app_id}/people/search/<kind>?next_token=...\` or
null: send its next_token as \`nextToken\`. Profile URLs are normalized (lowercase scheme, host and path, trailing
slash, query and fragment dropped) before the cache and the provider see them.

## Cache, prices, credits

Profiles are cached by normalized URL for every app: found 30 days, not_found 7 days, a provider failure 1 hour and
never served. A hit costs 0 and says \`cached: true\`; \`liveFetch: "force"\` skips the cache (a failed live fetch keeps
the cached entry). Typical prices (the operator's table may differ; \`usage\` and the headers tell the real charge):
search 7 credits $0.0084 for up to 10 results, then 1 credit $0.0012 per result; profile 2 credits $0.04 (not_found:
0); e-mail queued 3 credits $0.06, resolved 1 credit $0.02; an empty page costs 0. Charges go to the account's credit
ledger (free plan $0.10 once). A call reserves its maximum price first: 402 \`insufficient_credits\`, and nothing sent
to the provider, when the available balance is below $0.05 or below that price (an e-mail lookup holds queue and
resolution prices). Cache hits and polls are free and never refused for credit.

## E-mail lookups

\`pending\` -> \`resolved\` (the provider's callback brought an e-mail; 1 credit) | \`failed\` (it found none; free) |
\`expired\` (no callback within the deadline, 24 h by default; the held credit is released). The poll's
\`credits_consumed\` is the lookup's total (4 when resolved).

## Replies and errors

Every REST reply carries \`x-people-provider\` (primary | secondary), \`x-people-credits-consumed\`,
\`x-people-usd-charged\` (6 decimals; 0 and 0.000000 on errors, 402 and free calls) and on profile \`x-people-cached\`.
Errors are flat: 402 \`{ error: "insufficient_credits" }\`, 403 \`{ error: "forbidden" }\`, 404 \`{ error:
"app_not_found" }\`, 502 \`{ error: "<transient description>" }\` (retry with backoff; nothing charged), 503
\`people_disabled\`, \`people_unavailable\`, \`provider_not_registered\` or \`provider_action_unsupported\` (both with
\`slot\`), \`email_lookup_disabled\`; others \`{ error: "<code>", message, details? }\` (400 validation_failed, 404
lookup_not_found). Over MCP the same errors use the standard envelope and results carry \`provider\`.
`,
  },
  integrations: {
    summary:
      "Third-party integrations: enable vendor toolkits (Gmail, Slack, GitHub, ...) for an app, let its end users connect their accounts through a hosted OAuth page, and run the tools as those users over REST, MCP and from functions.",
    reference: `
## Flow

integrations_available (the 10 curated toolkits; \`search=\` searches the vendor's catalog) -> integrations_configure
\`{ toolkit, displayName, scopes?, redirectOrigins? }\` (scopes default to the vendor-managed ones) -> integrations_connect
\`{ toolkit, redirectUrl }\` as the end user returns \`{ authUrl, connectionRequestId }\`: open authUrl in their browser.
After consent the vendor sends the browser to GET /v1/{app_id}/integrations/callback (public), which records the
connection and answers 302 to redirectUrl with \`status=success&toolkit=&connectionRequestId=&connectionId=\` (or
\`status=failed&error=\`) -> integrations_tools (each tool's inputSchema) -> integrations_execute \`{ toolName, params }\`
-> \`{ successful: true, data }\`. A connect link completes once, within an hour; reconnecting replaces the user's
connection for that toolkit.

## Who acts for whom

- Admin tools (available, config, configure, disable, executions): a service key or the owner's platform key.
- End-user tools (connect, connections_list, connection_delete, tools, execute): the end user's JWT (\`userId\` is then
  refused with 400), or a key with \`userId\` (body or query: the id the app knows the user by), or over MCP a key
  with \`user_token\`. connect and execute need a user; the others with a key and no user cover the whole app. An end
  user sees and deletes only their own connections (another's is 404).
- The vendor knows each end user as \`<app_id>:<userId>\`: the same userId in two apps is two vendor users.

## Redirect allow-list

redirectUrl must be on the app's own origin (\`appOrigin\` in integrations_config: its subdomain with subdomain
routing, else the platform's, which serves /sites/{app_id}/) or on one of \`redirectOrigins\` (scheme://host[:port];
configure replaces the list). Checked on connect and again on the callback, so the callback is never an open redirect.

## Errors

400 INTEGRATIONS_NOT_CONFIGURED (no vendor key on the platform: every route), 400 INTEGRATIONS_TOOLKIT_NOT_ENABLED,
400 INTEGRATIONS_NOT_CONNECTED (connect first), 400 VALIDATION_FAILED (userId rules, redirectUrl not allowed), 404
RESOURCE_NOT_FOUND (toolkit, tool, connection, used or expired connect request), 422 INTEGRATIONS_EXECUTION_FAILED (the
tool failed; the vendor's message), 502 INTEGRATIONS_EXECUTION_FAILED (vendor 5xx or unreachable: retry), 502
UPSTREAM_ERROR and 400 UPSTREAM_REJECTED (the vendor during configure, connect or search).

## Functions and the log

Functions run tools as the calling end user: \`await ctx.integrations.execute("GMAIL_SEND_EMAIL", params)\`
(platform_guide area=functions). Every execution, refused ones included, is logged for 90 days: integrations_executions
\`{ id, userId, toolName, toolkit, successful, durationMs, error, createdAt }\`, newest first, paged with \`before\`.
`,
  },
  rules: {
    summary: "Attention rules: scheduled proposals from the substrate user's daily snapshot or memory rows, previewed first, each firing listable.",
    reference: `
substrate_rule_create { name, description?, trigger_cron, condition_mode, condition, action_capability,
action_payload_template, enabled? (true), max_fires_per_day? (default 100, 1-10000) }. trigger_cron: 5 fields (minute
hour day-of-month month day-of-week) or @hourly, @daily..., in UTC. On each slot the condition yields bindings:

- snapshot_predicate: condition is JSON-Logic over the latest daily snapshot (the row of substrate_snapshots_list:
  snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count, artifact_count,
  open_commitment_count, action_count, pending_approval_count, taken_at); true gives one binding, the snapshot.
- row_query: condition is { "from": "decisions" | "commitments" | "learnings" | "entities", "where": <JSON-Logic over
  one row> } (where omitted: every row). A row is the table's fields (id, title, description, status, attrs, due_at,
  created_at, ...), read oldest first; at most 5,000 rows are read and 100 bindings kept per slot.

The JSON-Logic operators are those of principles (no merge, cat, map, reduce, substr, log). action_payload_template
is the capability's payload with {{path}} placeholders, a dotted path into the binding ({{description}},
{{attrs.owner}}): a string that is only a placeholder takes the value with its JSON type; inside text the value
becomes text (objects as JSON, null as empty). A path that does not resolve fails that binding.

Each binding is proposed as an agent with source_rule_id set (filter the actions list by it) and the idempotency key
rule:<rule_id>:<slot>:<index>, so a slot never proposes twice; approval capabilities wait for the human as usual.
Proposals beyond max_fires_per_day in one UTC day are skipped. substrate_rule_firings lists, newest slot first,
{ slot, bindings_count, bindings, proposals: [{ binding_index, action_id, verdict, requires_approval }], skipped:
[{ binding_index, reason }], skip_reason } (the last 500 per rule); skip_reason: no snapshot yet, or the condition
cannot be evaluated (e.g. a var naming no field, or past its budget: 100,000 operations and 50 ms for a snapshot;
500,000 operations and 250 ms for all the rows of a row_query, 50 ms per row).

substrate_rule_preview takes the same body (name optional) and writes nothing: { bindings_count, sample_proposals (up
to 10): [{ binding, rendered_payload, would_require_approval, verdict, error? }], skip_reason }. substrate_rule_update
replaces the body (enabled omitted stays); substrate_rule_enable starts the schedule from now. At most 200 rules per
user (409 RULE_LIMIT). 400 VALIDATION_FAILED names the field (trigger_cron, condition.from, condition.where,
action_capability, action_payload_template.<field>); another user's rule is 404.
`,
  },
};
