// The branches area's hand-written guide (GET /llms.txt?area=branches); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const BRANCHES_GUIDE: AreaGuide = {
  summary: 'Branch an app, change the copy, diff it three ways, merge it (a person approves merges into protected apps).',
  reference: `
## The workflow

1. \`branches_create { app_id, data?, tables?, mask?, rows?, secrets? }\` (201): a new app, the branch, with its own
   URL, keys and end users; \`status\` is \`copying\` until \`ready\` (poll \`branches_list { app_id }\` of the parent).
   Copied as a template clone copies (/docs/templates): the schema (its migrations), functions with their triggers
   and limits, the live site, AI and RAG settings, toolkits. Function variables only when named in \`secrets\`; no
   plans or products at Stripe, no substrate link, no end users, no keys.
   Rows: \`data: "none"\` (default); \`"seed"\` copies the rows of \`tables\` that no end user owns (parents first);
   \`"sample"\` copies all their rows (at most \`rows\` per table, in key order), end users' rows keeping their
   \`user_id\`, with each text column named in \`mask: { table: [columns] }\` replaced by \`masked-<digest>\` (an e-mail
   address by \`masked-<digest>@example.invalid\`): equal values stay equal, nothing personal crosses.
2. Change the branch's \`app_id\` with any tool: \`schema_apply\`, \`functions_deploy\`, \`frontend_deploy_files\` (its
   site is a preview at the branch's own URL), \`ai_settings_update\`.
3. \`branches_diff { app_id: <branch> }\`: for every unit (a table, column, index, table attribute such as access or
   conditions, SQL function, channel pattern, function, the site, the AI settings) the branch changed since it was made
   (or last merged): \`changes\` a merge carries over, \`conflicts\` where production changed the same unit differently
   (both values shown; a table one side dropped while the other changed it is one), and \`statements\`, the SQL
   production's schema would run (\`destructive\`: those that drop).
4. \`branches_merge { app_id: <branch> }\` (202): 409 \`MERGE_CONFLICT\` (details.conflicts) or \`NOTHING_TO_MERGE\`
   merge nothing. Otherwise the merge applies in one job: the schema as one migration named \`merge <merge_id>\`, then
   the functions (production keeps its variables), the site as a new deployment, the AI settings. The job checks
   first that production is what the merge was planned against (else \`failed\`, 409 \`PRODUCTION_CHANGED\` in
   \`error\`: diff and merge again; one merge into an app runs at a time); a worker killed midway resumes it, so
   production ends untouched or fully merged.
   The branch then diffs from what it merged. \`status\`: \`proposed\`, \`queued\`, \`running\`, \`merged\`, \`failed\`,
   \`rejected\`.

A merge cannot drop an index or a channel pattern (notes say so); a column's type or a primary key cannot change,
as in schema_apply (the merge is refused with its error).

## Protected apps

\`branches_protect { app_id, protected: true }\`: agents (platform keys, OAuth clients, service keys) then get 403
\`APP_PROTECTED\` for every change of the app (schema, functions, site, settings, keys, deletion; a schema dry run
and the app at work, such as data and function calls, stay open). The way through is a branch: \`branches_merge\` by an agent is \`proposed\` as the
substrate action \`merge_branch\` in the ledger of the person behind the agent (a platform key: the account's own
user); a person with the developer role approves it in the console's Approvals (the payload shows the changes and the
SQL), which queues the merge, or rejects it. A person signed in to the console acts directly. Only a person signed in
with the admin role lifts the protection.

## Limits

Branches per app: free 3, pro 20 (403 \`BRANCH_LIMIT\`). A branch no one calls for \`idle_days\` (default
SVC_BRANCH_IDLE_DAYS, 7) is deleted, unless a merge of it is under way. A branch of a branch is refused.
`,
};
