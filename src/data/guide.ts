// The data area's hand-written guide (GET /llms.txt?area=data); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const DATA_GUIDE: AreaGuide = {
  summary:
    "Read and write an app's tables with PostgREST syntax, as the app (your key) or as an end user (user_token) under row-level security.",
  reference: `
## Query syntax (\`query\` over MCP, the query string over REST)

- Filters \`col=op.value\`: eq, neq, gt, gte, lt, lte, like and ilike (\`*\` or \`%\`), match and imatch (regex), is (null,
  not_null, true, false), isdistinct, in.(a,b), cs, cd, ov (arrays \`{a,b}\`, jsonb, ranges \`[1,5)\`), sl, sr, nxl, nxr,
  adj (ranges), fts (also plfts, phfts, wfts; \`fts(english).term\`); \`like(any).{a*,b*}\` and \`(all)\`; \`not.\` negates;
  \`or=(a.eq.1,b.gt.2)\`, \`and=(...)\`, nested, negated as \`not.or=(...)\`, \`not.and=(...)\` (on embedded rows
  \`posts.not.or=(...)\`). JSON paths \`data->key->>key\` work in filters, select and order.
- \`select=col,alias:col,col::text,data->>key,count(),col.sum()\` (aggregates group by the other columns) and embedded
  resources through foreign keys, nested to any depth: \`author:authors(name,posts(title))\`; many-to-one and
  one-to-one as an object, one-to-many and many-to-many (through a join table) as an array; \`rel!inner(...)\`
  keeps only rows with a match, \`rel!<fk or column>(...)\` disambiguates; a table referencing itself embeds its
  children by its name (\`collections(*)\`, \`collections!parent_id(*)\` to pick a key) and its parent by the column
  (\`parent_id(*)\`), never by the key's name (400 PGRST200, as PostgREST); \`...rel(cols)\` spreads the columns into
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

## Functions (\`/rpc\`)

Declared functions, as PostgREST: \`POST /v1/{app_id}/rpc/{fn}\` with the arguments by name in a JSON object (a
single unnamed json argument takes the body), or \`GET\`/\`HEAD\` with them as query parameters, run read-only (a
write: 405, code 25006); also \`/rest/v1/rpc/{fn}\`. A scalar comes back bare, a row as an object, a set as rows taking
select, filters, order, paging and count; void is 204. The function's \`access\` says who may call it (anonymous:
\`public\` only); unknown function or arguments: 404 PGRST202. At most 1000 values and the response ceiling (413); a
function that writes gets no count.

## Who runs the call

A platform or service key sees all rows. With \`user_token\`, the call runs as that end user under row-level security:
own rows only, and inserts get their \`user_id\`. Over REST the caller may also be an end-user JWT, or no credential
(public tables only). A row hidden by row-level security is absent, as in PostgREST: reads leave it out, and an update
or delete aimed at it changes nothing and is no error (204, or 200 \`[]\` with return=representation; 404 on the
by-id routes). A row it refuses to write (an insert, or an update's new row) is 403, code 42501, message
\`new row violates row-level security policy for table "<table>"\` (401 for an anonymous caller, as PostgREST).

## Errors

Over REST the data API (\`/v1/{app_id}/{table}\` and its by-id routes, \`/v1/{app_id}/rest/v1/{table}\`, an app host's
\`/data/{table}\` and \`/rest/v1/{table}\`) answers errors in PostgREST's shape, for postgrest-js and supabase-js:
\`{ code, message, details, hint }\` at the top level, \`code\` being PostgREST's (PGRST116, PGRST200, ...), the Postgres
SQLSTATE (42501 for a row-level security refusal, 23505, 22P02, ...) or else the envelope's code, with the platform's
envelope \`error: { code, message, remediation, documentation_url }\` beside them. The data tools over MCP, and the
platform's other routes, answer with the envelope alone (save the few whose guides name another client's shape, such
as the AI gateway's OpenAI errors). The envelope's codes: 400 INVALID_QUERY (also an operator, cast or aggregate
the column's type lacks), UNKNOWN_COLUMN, UNKNOWN_RELATIONSHIP; 300 AMBIGUOUS_RELATIONSHIP (name one with !hint); 400
QUERY_TOO_COMPLEX (over 20 embeds or 200 select items), FILTER_REQUIRED (data_update and data_delete need a filter),
INVALID_PREFERENCES, MAX_AFFECTED_EXCEEDED; 403 FORBIDDEN (also a write row-level security refuses); 404
RESOURCE_NOT_FOUND; 406 NOT_SINGLE_ROW, NOT_ACCEPTABLE; 409 CONFLICT (unique or foreign-key violation); 413
RESPONSE_TOO_LARGE (select fewer columns or page); 416 INVALID_RANGE; 504 STATEMENT_TIMEOUT (5 s per request).
`,
};
