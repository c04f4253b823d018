// The templates area's hand-written guide (GET /llms.txt?area=templates); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';
import { SEED_MAX_BYTES, SEED_MAX_ROWS } from './seed.ts';

export const TEMPLATES_GUIDE: AreaGuide = {
  summary: 'Publish apps as templates; clone one into a new app and region, as a job you poll.',
  reference: `
## Clone

1. \`templates_list\`, then \`templates_get { app_id }\`: the manifest (\`creates\`, \`owner_must_supply\`, \`version\`).
2. \`templates_clone { app_id, name, region? }\` (POST /v1/templates/{app_id}/clone, 202) answers \`clone_id\`, the new
   \`app_id\` and \`poll_url\` (GET /v1/clones/{clone_id}). The new app is invisible until the clone is \`ready\`.
3. \`status\`: \`queued\`, then each step as it runs: \`database\`, \`schema\`, \`functions\`, \`site\`, \`ai_rag\`,
   \`integrations\`, \`billing\`, \`seed\`; then \`ready\`, or \`failed\` with \`failed_step\` and \`error\`
   (\`templates_clone_retry\` runs that step again, \`templates_clone_delete\` removes all it made).
4. Once \`ready\`: do the \`todo\` items (each names its tool): function secrets, frontend variables, Stripe Connect
   onboarding (then \`templates_clone_retry\` creates the plans at Stripe), integrations end users connect.

Copied: the schema by replaying the template's migrations (each records its \`source\`, see schema_migrations);
functions with code, triggers, limits and the variables the template marks \`copy\` (\`generate\`: a fresh random value
per clone; every other variable is a secret left for you); the latest ready site as a new deployment; frontend
variable keys without values; AI settings without the provider key; RAG collections, and the template's own text
documents of the collections it marks (embedded again with your credits); enabled toolkits; plans and products; the
seed rows pinned when the template was published (never its live tables); the substrate link if asked. Never: keys,
secrets, end users or (unless the publisher listed them) their rows, files, logs, usage. Clones in progress per
account: SVC_CLONES_PER_ACCOUNT (429 \`CLONE_LIMIT\`).

## Publish

\`templates_publish { app_id, title, visibility, options: { env: { NAME: "copy" | "secret" | "generate" },
seed_tables, seed_end_user_rows, rag_documents, substrate_link } }\`: names the app lacks are a 400 naming them.
\`public\` needs the operator's SVC_TEMPLATES_PUBLIC=true (else 403 \`TEMPLATES_PUBLIC_DISABLED\`). The version
changes whenever what a clone copies changes. Templates shipped in the platform's repository are public and cannot be
edited.

Seed rows: publishing pins the rows of \`seed_tables\` as they are at that moment; rows written later reach clones only
once you publish again. Left out: end users' rows (a \`user_id\` set, or the group column of a table under group
access), unless their table is in \`seed_end_user_rows\` (a table whose \`user_id\` is required cannot be: 400); the
\`user_id\` column is never pinned. At most ${SEED_MAX_ROWS.toLocaleString('en-US')} rows per table and ${SEED_MAX_BYTES / 1024 / 1024} MiB of rows (as JSON) in all, else
413 \`TEMPLATE_SEED_TOO_LARGE\` and the template stays as it was.
`,
};
