// The meetings area's hand-written guide (GET /llms.txt?area=meetings); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const MEETINGS_GUIDE: AreaGuide = {
  summary:
    'Meeting bots that join Zoom, Google Meet, Teams or Webex calls to record and transcribe them, with signed events sent to your webhook, billed per second from credits.',
  reference: `
## Flow

\`meetings_webhook_set\` { forward_url } once (keep the \`wsec_\` secret it returns) -> \`meetings_spawn\` { meetingUrl } -> events arrive
at forward_url -> on \`bot.done\`, \`meetings_get\` for \`recordingUrl\` and \`transcriptUrl\` (short-lived: read again for fresh
ones), or \`meetings_transcript\` for the transcript itself, normalized (speaker turns with seconds, and as text). \`meetings_leave\` makes a bot leave early. \`GET /v1/ai/meetings/_status\` (no credential): \`{ available }\`.

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

## From functions

Always as the app, resolving to the tool's REST output or rejecting with a PlatformError (code, status, remediation):
\`ctx.meetings.spawn({ meetingUrl })\`, \`.get(botId)\`, \`.transcript(botId)\`.
`,
};
