// The ai area's hand-written guide (GET /llms.txt?area=ai); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const AI_GUIDE: AreaGuide = {
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

Calls with the platform's key spend the account's AI credits (free plan $0.10 once, pro $10 per period then billed
as overage, enterprise unlimited): each call reserves an estimate before the upstream is called (free: 402
insufficient_credits when nothing is left, and nothing is sent) and is charged its real cost after, in the transaction that writes its usage row; cost is
the upstream's reported \`usage.cost\`, else the operator's price table. Own-key calls are recorded but cost no
credits. \`ai_usage\` (GET /v1/{app_id}/ai/usage?startDate=&endDate=, inclusive UTC dates, default the last 30
days): \`{ startDate, endDate, totalTokens, totalCost, creditsUsed, byModel, byUser, otherUsers, byDay }\`: byUser holds the
50 end users with the most tokens, otherUsers the rest added up (null when none is left out), byDay the UTC days with
calls \`[{ date, tokens, cost, requests }]\`.

## Errors

Chat completions and embeddings (the routes OpenAI clients call) answer OpenAI's shape, \`{ error: { message, type, code,
param } }\`; the config and usage routes the standard envelope (400 VALIDATION_FAILED naming the field, 403 FORBIDDEN). OpenAI's codes: 400 invalid_request (param names the
field), 401 missing_credentials (no or an invalid credential), 402 insufficient_credits, 403 model_not_allowed / not_authorized,
429 end_user_budget_exceeded, upstream 4xx relayed with the upstream's status, type and code (a refused key: 502
upstream_error for the platform's, 502 byok_key_rejected for the app's own), 502 upstream_error
(upstream 5xx, timeout or network: retry with backoff), 503 provider_unavailable (no upstream configured). A stream
that breaks after it started ends with a \`data: { error }\` event. Over MCP the same errors use the standard envelope.
`,
};
