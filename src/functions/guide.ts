// The functions area's hand-written guide (GET /llms.txt?area=functions); src/platform/area-guides.ts lists it.
import { MB, type AreaGuide } from '../platform/area-guide.ts';
import { LIMITS } from './types.ts';
import { TRANSACTION_MAX_MS } from '../data/transaction.ts';

export const FUNCTIONS_GUIDE: AreaGuide = {
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
- \`ctx = { env, appId, user, token, data, asApp, billing, integrations, ai, rag, storage, realtime, people, meetings, substrate? }\`: \`env\` holds your envVars plus SVC_APP_ID and SVC_API_URL
  (\`{base_url}/v1/{app_id}\`); \`user\` is \`{ id, claims }\` when the caller sent an end-user JWT of this app (else
  null) and \`token\` that JWT.
- \`ctx.data\` reads and writes this app's tables without a key, as that end user (row-level security) or else as the
  app: \`await ctx.data.from("books").select("id,title", { query: "order=id", count: true })\`, \`.insert(rows)\`,
  \`.update(patch, "id=eq.5")\`, \`.delete("id=eq.5")\` resolve to \`{ data, error, status, count }\` (PostgREST query
  syntax as data_select; nothing throws); \`ctx.data.rpc("fn", args, { get, query, count })\` calls a declared SQL
  function the same way (data guide, /rpc). \`ctx.asApp\` has \`data\`, \`ai\`, \`rag\`, \`storage\`, \`realtime\` and \`integrations\` as the app whoever
  called (every row): for what the app does on its own behalf, e.g. writing a table its end users only read.
- \`ctx.data.transaction(async (tx) => ...)\` (and \`ctx.asApp.data.transaction\`): \`tx.from(...)\`, the API of
  \`ctx.data.from\`, runs in one Postgres transaction as the same role; \`ctx.data\` calls meanwhile stay outside it.
  Committed when the callback resolves (to what it returned); rolled back when it throws (the rejection propagates),
  when a tx call answers an error (later ones and the commit: 409 TRANSACTION_ABORTED), past ${TRANSACTION_MAX_MS} ms (504
  TRANSACTION_TIMEOUT) or when the invocation ends. One open per invocation; an app holds at most half its database
  pool in them (429 TOO_MANY_TRANSACTIONS). A refusal rejects with a TransactionError (code, status).
  \`const booking = await ctx.data.transaction(async (tx) => { const { data } = await tx.from("bookings").insert({ slot_id: 7 });
  await tx.from("slots").update({ taken: true }, "id=eq.7"); return data?.[0]; })\`
- Each resolves to the tool's REST output, or rejects with a PlatformError (code, status, remediation); as the end
  user, else the app: \`ctx.ai.chat(body)\` / \`.embed(body)\` (to stream, fetch SVC_API_URL/chat/completions),
  \`ctx.rag.query(collection, { query, synthesize })\`, \`.ingest(collection, { text })\`, \`.deleteDocument(collection, id)\`, \`ctx.storage.upload({ filename, contentType, content })\`, \`.read(id)\`, \`.list()\`,
  \`.signedUrl(id)\`, \`.delete(id)\`, \`ctx.realtime.broadcast(topic, event, payload, { private }?)\`. \`ctx.billing\`,
  \`ctx.integrations\`, \`ctx.people\`, \`ctx.meetings\` and \`ctx.substrate\` (an app linked to a substrate user): each
  area's guide, "From functions".
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
  are stripped. A browser opening a page there is sent to the app's own host (\`/fn/{name}\`, its origin); what the path
  serves is sandboxed (no cookies or storage) with only its content headers (no Set-Cookie).
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
ones (the newest 1,000 entries are kept; a page holds at most \`limit\` entries and 1 MB of their output, and its
\`next_before\` is the next page's \`before\`), and functions_metrics counts invocations and errors per hour or day for as
long as the function exists.
`,
};
