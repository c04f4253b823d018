// The people area's hand-written guide (GET /llms.txt?area=people); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const PEOPLE_GUIDE: AreaGuide = {
  summary:
    "People and company search, profile enrichment (a shared 30-day cache) and asynchronous work-email lookups, billed per call to credits.",
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

## From functions

Always as the app, resolving to the tool's REST output or rejecting with a PlatformError (code, status, remediation):
\`ctx.people.searchPerson(body)\`, \`.profile(body)\`.
`,
};
