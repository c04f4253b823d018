// The schema area's hand-written guide (GET /llms.txt?area=schema); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const SCHEMA_GUIDE: AreaGuide = {
  summary:
    "Declare an app's tables (columns, indexes, references, row-level security access) and apply the difference as a migration; read the live schema and the migration history.",
  reference: `
## Definition

\`schema_apply\` takes \`{ tables: { <table>: { columns, indexes?, access?, conditions?, plans?, realtime?, _dropColumns?,
_drop? } }, channels?, functions? }\`, at most 50 tables per call; \`schema_get\` returns the live schema in the same
format, so an edited copy is the next definition (its tables' \`policies\`, the row-level-security policies in force,
are display only).

- Column: \`{ type, primary?, nullable? (default true), unique?, default?, identity?, enum?, references?: { table,
  column, onDelete?, onUpdate? } }\`. \`identity: true\` numbers an integer or bigint primary key; \`enum: ["a", "b"]\`
  limits a text column to those values (a CHECK constraint). Table-level \`foreignKeys: [{ columns, references: {
  table, columns }, onDelete?, onUpdate? }]\` declares keys over several columns.
  Example: \`{ id: { type: "uuid", primary: true, default: "gen_random_uuid()" }, user_id: { type: "uuid" },
  title: { type: "text", nullable: false }, created_at: { type: "timestamptz", default: "now()" } }\`.
- Types: text, varchar(N), char(N), integer, bigint, smallint, real, float8, numeric(P,S), boolean, uuid, timestamptz,
  timestamp, date, time, interval, jsonb, json, bytea, vector(N) (1-16000), the range types, tsvector, and arrays of these
  but vector (\`text[]\`).
- Defaults (an allow-list): numbers, true/false, null, quoted strings such as \`'draft'\` (optionally with \`::type\`),
  now(), gen_random_uuid(), current_timestamp, current_date, empty json or arrays such as \`'{}'::jsonb\`. A default that
  does not fit its column's type is refused before anything runs.
- Names match \`^[a-z_][a-z0-9_]{0,62}$\`, are not SQL reserved words and do not start with svc_ or pg_; table names
  are not the app API's route segments (auth, storage, functions, fn, rpc, data, keys, ...).
- \`realtime: true\` (the table's changes reach supabase-js's postgres_changes; needs a primary key) and \`channels\`
  (beside \`tables\`: who may join private realtime channels): platform_guide area=realtime. \`plans\` (rows for the
  subscribers of billing plans only): platform_guide area=billing.
- Indexes are a map, as columns are: \`indexes: { notes_by_user: { columns: ["user_id", "created_at"], unique?: false } }\`;
  index names are unique per app and distinct from table names. A key may be \`lower(col)\`, \`upper(col)\` or
  \`col->>'key'\` (\`{ columns: ["lower(email)"], unique: true }\`: one account per e-mail in any case); \`where\` makes it
  partial, in PostgREST's filter syntax joined by & (eq, neq, gt, gte, lt, lte, \`in.(a,b)\`, is.null, not.is.null,
  is.true, is.false): \`{ columns: ["slot_id"], unique: true, where: "status=eq.active" }\` allows one active booking
  per slot, also under concurrent inserts (409). A foreign key cannot point at a partial or expression index.

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
| authenticated | never | nothing | reads all; writes own rows if there is a user_id | all |
| service | no \`user_id uuid\` column | nothing | nothing | all |
| group \`{ members, column, key?, write? }\` | never | nothing | rows of their groups; writes them unless \`write: "service"\` | all |

An end user's insert gets their id in \`user_id\` automatically. An existing table keeps its access unless a definition
sets it.

A group shares rows among the members of a workspace, team or org: \`{ "members": "workspace_members", "column":
"workspace_id" }\` lets an end user reach the rows whose \`workspace_id\` equals the \`key\` column (default: the same name)
of a \`workspace_members\` row with their \`user_id\` (the members table needs both, \`key\` of \`column\`'s type); writes
stay in their groups. Give the groups and members tables \`write: "service"\`, so that joining goes through your
functions (as the app) and a member cannot add themself elsewhere. Complete:
\`workspaces: { access: { members: "workspace_members", column: "id", key: "workspace_id", write: "service" } }\`,
\`workspace_members: { columns: { workspace_id: { type: "uuid", primary: true }, user_id: { type: "uuid", primary: true } },
access: { members: "workspace_members", column: "workspace_id", write: "service" } }\` (members see their workspaces'
members), \`docs: { access: { members: "workspace_members", column: "workspace_id" } }\`.

Rules combine these: \`access: { read, write?, owners?, group? }\`. \`read\`: any of \`public\` (anonymous too),
\`authenticated\`, \`owner\`, \`group\`, or \`service\` (keys only); \`write\` (insert, update, delete): any of
\`authenticated\`, \`owner\`, \`group\`, or \`service\`; default \`owner\` when owners are named or read has \`owner\`, else
\`service\`. \`owners\`: uuid columns (1-4, default \`["user_id"]\`), any holding the end user's id makes the row theirs.
\`group\`: \`{ members, column, key? }\` as above. A row passes when any listed reader (writer) admits it. Examples: a
booking of two people \`{ read: "owner", owners: ["student_id", "tutor_id"] }\`; public profiles their owners edit
\`{ read: "public", write: "owner" }\`; own rows plus the team's \`{ read: ["owner", "group"], write: "owner", group: {
members: "team_members", column: "team_id" } }\`. Only \`user_id\` is filled in on insert; other owner columns are given.

## Conditions

\`conditions: { select?, insert?, update?, delete? }\` narrows, per command, what \`access\` grants end users and anonymous
callers (keys are never narrowed): each is one SQL boolean expression over the row's columns, \`auth.uid()\` (the end
user's id, null when anonymous), \`auth.jwt()\` (their claims) and sub-selects of the app's tables, which read as the
caller. \`update\` is a string or \`{ using, check }\` (the rows before, the rows after). Reviews only by the student of
a completed booking: \`reviews: { access: { read: "public", write: "owner" }, conditions: { insert: "exists (select 1
from bookings b where b.id = reviews.booking_id and b.status = 'completed' and b.student_id = auth.uid())" } }\`. Each
becomes a RESTRICTIVE policy \`svc_condition_<command>\` (the dry run shows it, names qualified). A sub-select must
find its rows by an indexed column equal to the row's (add the index); other schemas, settings (set_config,
current_setting), sleeps and a condition that reads back its own table through another's select condition are
refused. Omitted keeps a table's conditions; \`{}\` removes them; schema_get shows them as written.

## Functions

\`functions\` (beside \`tables\`) declares SQL functions, one transaction per call, run as the caller under row-level
security: \`{ request_booking: { args: { slot_id: "bigint", note: { type: "text", default: null } }, returns: "bookings",
body: "insert into bookings (slot_id, student_id, status, note) values (request_booking.slot_id, auth.uid(),
'requested', request_booking.note) returning *" } }\`. \`args\`: name -> column type or \`{ type, default }\`, in order (at
most 20), or \`"jsonb"\` for one unnamed argument (\`$1\`). \`returns\`: a type, \`"void"\`, a table (one row),
\`"setof <table>"\`, \`"setof <type>"\` or \`{ columns: { name: type } }\`. \`volatility\`: inferred (\`volatile\` when the
body or a function it calls writes; \`stable\` on such a body is refused). \`access\`: \`public\` (anonymous too),
\`authenticated\` (default), \`service\` (keys only). The body: 1-10 SELECT/INSERT/UPDATE/DELETE statements (WITH, never
RECURSIVE) over the app's tables, \`auth.uid()\`, \`auth.jwt()\` and the other declared functions (no cycles), at most
8,192 bytes; write an argument as \`<function>.<arg>\` where a column has its name. Other schemas, SET, set_config,
DDL and sleeps are refused. A function is not named like a table; at most 50. Each becomes \`public.<name>\`, SECURITY
INVOKER, \`BEGIN ATOMIC\`, created under an empty search_path (the dry run shows it, names qualified). Omitted
functions stay; \`_drop: true\` removes one; a function using a table whose columns are dropped is rebuilt around the
drop. schema_get shows them as written.

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
};
