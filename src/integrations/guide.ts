// The integrations area's hand-written guide (GET /llms.txt?area=integrations); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const INTEGRATIONS_GUIDE: AreaGuide = {
  summary:
    "Third-party toolkits (Gmail, Slack, GitHub, ...) for an app: its end users connect their accounts on a hosted OAuth page, and tools run as those users.",
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

\`ctx.integrations.connections()\` lists the caller's connected accounts (\`ctx.asApp.integrations.connections({ userId? })\`:
every end user's, or one's). \`ctx.integrations.execute(toolName, params)\` (\`"GMAIL_SEND_EMAIL"\`) runs a tool of the
app's enabled toolkits as the calling end user, through their connected account (as integrations_execute):
\`{ successful: true, data }\`. Without an end user (key, cron) pass \`{ userId }\` as a third argument; a refusal rejects
with an IntegrationsError (code, status). Every execution, refused ones included, is logged for 90 days: integrations_executions
\`{ id, userId, toolName, toolkit, successful, durationMs, error, createdAt }\`, newest first, paged with \`before\`.
`,
};
