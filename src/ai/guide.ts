// The ai area's hand-written guide (GET /llms.txt?area=ai); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const AI_GUIDE: AreaGuide = {
  summary:
    "An OpenAI-compatible AI gateway per app (chat, Responses, embeddings, models) with the app's own key or the account's AI credits, model rules, per-end-user budgets and usage.",
  reference: `
## Calling it

- Any OpenAI client works unchanged: \`new OpenAI({ baseURL: "{base_url}/v1/{app_id}", apiKey })\` with a service key
  (server side, functions) or an end user's access token (browser apps; their calls are metered per end user). Routes:
  \`POST /v1/{app_id}/chat/completions\` (\`stream: true\` relays server-sent events as they arrive, ending with
  \`data: [DONE]\`) and \`POST /v1/{app_id}/embeddings\` (\`encoding_format\` float or base64).
- Models are \`<vendor>/<model>\` ids of the upstream router (e.g. \`openai/gpt-4o-mini\`), passed on as they are;
  embeddings: \`<vendor>/text-embedding-3-small\` (1536 dimensions), \`-3-large\` (3072), \`-ada-002\` (1536).
- Request fields the gateway does not read (tools, response_format, top_p, ...) pass through untouched.
- \`GET /v1/{app_id}/models\` (\`models.list()\`, ai_models_list): the app's \`allowedModels\` when set (\`created\` 0,
  \`owned_by\` the vendor before '/'), else the upstream's list (kept 10 minutes). \`GET /v1/{app_id}/models/{model}\`
  (\`models.retrieve(id)\`, the id percent-encoded): that entry, or 404 model_not_found. Both are REST only.
- \`POST /v1/{app_id}/responses\` (\`responses.create()\`, \`responses.stream()\`, ai_responses_create): OpenAI's Responses
  API, made as a chat completion (billed and metered exactly as chat). \`input\` (a string, or message, function_call and
  function_call_output items), \`instructions\` (a system message), function \`tools\`, \`tool_choice\`,
  \`max_output_tokens\` (capped like max_tokens), \`temperature\`, \`top_p\`, \`text.format\` (json_schema, json_object),
  \`reasoning.effort\`. Output: \`message\` items (\`output_text\`) and \`function_call\` items (answer them with a
  \`function_call_output\` item carrying the \`call_id\`, and the conversation again in \`input\`). \`stream: true\` sends the
  typed events (response.created ... response.output_text.delta ... response.completed). Nothing is stored
  (\`store\` is false): \`previous_response_id\`, \`conversation\`, \`background\`, \`prompt\` and tools other than function
  tools are refused with 400 naming the \`param\`; \`GET /v1/{app_id}/responses/{id}\` answers 404 not_found.
- An app made before \`models\` and \`responses\` were reserved keeps its table of that name on the data API
  (\`/v1/{app_id}/models\` then serves the table); new tables cannot take these names.

## Configuration (ai_config_set, PUT /v1/{app_id}/ai/config)

\`defaultModel\` (used when a request names none), \`byokKey\` (the app's own upstream key: sealed at rest, never
returned; GET shows \`byokKeySet\` and \`byokKeyHint\`; null removes it), \`maxTokensPerRequest\` (1-100000: a
larger max_tokens is refused with 400, an absent one is sent as the cap), \`allowedModels\` (other models: 403),
\`endUserDailyTokenLimit\` (tokens per end user and UTC day: 429 past it, with Retry-After). Omitted fields keep
their value; null clears one.

## Credits and usage

Calls with the platform's key spend the account's AI credits (free plan $0.10 once, pro $10 per period then billed
as overage, enterprise unlimited): each call is charged an estimate (its worst case) before its answer goes out (free:
before the upstream is called, 402 insufficient_credits when nothing is left, and nothing is sent) and corrected to its
real cost after; cost is
the upstream's reported \`usage.cost\`, else the operator's price table. Own-key calls are recorded but cost no
credits. \`ai_usage\` (GET /v1/{app_id}/ai/usage?startDate=&endDate=, inclusive UTC dates, default the last 30
days): \`{ startDate, endDate, totalTokens, totalCost, creditsUsed, byModel, byUser, otherUsers, byDay }\`: byUser holds the
50 end users with the most tokens, otherUsers the rest added up (null when none is left out), byDay the UTC days with
calls \`[{ date, tokens, cost, requests }]\`.

## Errors

Chat completions, responses, models and embeddings (the routes OpenAI clients call) answer OpenAI's shape, \`{ error: { message, type, code,
param } }\`; the config and usage routes the standard envelope (400 VALIDATION_FAILED naming the field, 403 FORBIDDEN). OpenAI's codes: 400 invalid_request (param names the
field), 401 missing_credentials (no or an invalid credential), 402 insufficient_credits, 403 model_not_allowed / not_authorized,
429 end_user_budget_exceeded, upstream 4xx relayed with the upstream's status, type and code (a refused key: 502
upstream_error for the platform's, 502 byok_key_rejected for the app's own), 502 upstream_error
(upstream 5xx, timeout or network: retry with backoff), 503 provider_unavailable (no upstream configured). A stream
that breaks after it started ends with a \`data: { error }\` event (responses: an \`event: error\`). Over MCP the same errors use the standard envelope.
`,
};
