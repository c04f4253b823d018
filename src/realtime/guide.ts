// The realtime area's hand-written guide (GET /llms.txt?area=realtime); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';
import { MAX_CHANNELS_PER_SOCKET, MAX_PRESENCE_BYTES, MAX_TOPIC_BYTES, MESSAGE_BURST, MESSAGES_PER_SECOND } from './channels.ts';
import { MAX_STORE_SECONDS, MAX_STORED_BYTES, MAX_STORED_PER_APP, REPLAY_DEFAULT_LIMIT, REPLAY_MAX_LIMIT } from './stored.ts';

export const REALTIME_GUIDE: AreaGuide = {
  summary: "Live channels between an app's clients (supabase-js's channel()): table changes under row-level security, broadcast and presence.",
  reference: `
- Socket: \`createClient('{base}/v1/{app_id}', publishable_key).channel(name)\` connects to
  \`/v1/{app_id}/realtime/v1/websocket?apikey=<key>&vsn=2.0.0\` (\`/realtime/v1/websocket\` on the app's own host).
  \`apikey\` is a publishable or secret key of the app (else 401; another app's: 403), \`vsn\` 1.0.0 or 2.0.0
  (else 400). Broadcasts with ArrayBuffer payloads travel as binary frames on 2.0.0 and do not reach 1.0.0 sockets.
- Each channel acts for the access token of its join (else the socket's key): an end user's JWT of the app, the
  publishable key anonymous, the secret key the app. \`setAuth(token)\` pushes a new JWT (the same one costs nothing;
  app keys pushed are ignored, as supabase-js sends its key whenever it has no session). A bad, expired or other app's
  token refuses the join (\`{ reason: "<Code>: <message>" }\`: InvalidJWTToken, JwtSignatureError, MalformedJWT,
  Unauthorized), or closes a joined channel with a \`system\` error then phx_close, as does its token's expiry.
- \`config.private: true\`: the app, and end users as schema_apply's \`channels\` allow; anonymous joins never.
  A refused join: \`Unauthorized\`; a read-only member's send or track: error. Judged at the join and at each new
  token. A private and a public channel of one name are two channels.
- Broadcast: \`config.broadcast.ack\` answers each send once every api process can deliver it, \`self\` delivers your own.
  HTTP: POST /v1/{app_id}/realtime/v1/api/broadcast \`{ messages: [{ topic, event, payload, private }] }\` (202;
  realtime-js's send() before subscribing) and POST /v1/{app_id}/realtime/v1/api/broadcast/{topic}/events/{event}
  (\`?private=true\`; realtime-js's httpSend, JSON or bytes); anonymous callers reach public channels only (401), end
  users the private ones they may write (else 403). Errors
  there are \`{ code, message }\`.
- Presence: \`track(payload)\` (a JSON object, at most ${MAX_PRESENCE_BYTES} bytes) under \`config.presence.key\` or a
  random key; joiners get presence_state, then presence_diff. A crashed api process's presences leave within 40 s.
- Limits per socket: ${MAX_CHANNELS_PER_SOCKET} channels (\`ChannelRateLimitReached\`), topics of ${MAX_TOPIC_BYTES} bytes
  (\`TopicNameTooLong\`), ${MESSAGES_PER_SECOND} messages a second (bursts of ${MESSAGE_BURST}; beyond, closed 1008), frames of
  1 MB. Per app and api process: SVC_REALTIME_MAX_SOCKETS_PER_APP sockets (default 5000; then the upgrade is 429). A
  paused app's upgrade is 423. Frames sent count as the app's bandwidth.
- Stored broadcasts (private channels): \`send({ ..., persist: true | { ttl } })\` (vsn 2.0.0) or \`httpSend(event, payload,
  { persist })\` keeps one ${MAX_STORE_SECONDS / 86_400} days (or ttl seconds; payload at most ${MAX_STORED_BYTES / 1024} KB; ${MAX_STORED_PER_APP} per app);
  it arrives with \`meta: { id }\`. A join with \`config.broadcast.replay: { since: <ms>, limit?: 1-${REPLAY_MAX_LIMIT} }\` (default
  ${REPLAY_DEFAULT_LIMIT}) first gets the latest stored since then, oldest first, with \`meta: { id, replayed: true }\`.
- \`channels\` (schema_apply, beside \`tables\`): who may join (read) and send on (write: broadcast, presence) private
  channels, by name pattern, \`'*'\` ending one: \`{ "user:*": "user", "room:*": { "members": "room_members", "key":
  "room_id" }, "ops": "service" }\`. \`user\`: the \`*\` is the end user's id; a group: members whose \`key\` equals the \`*\`
  (\`write: "service"\` makes it read-only); \`authenticated\`: any signed-in end user; \`service\`: the app only. A name
  takes its own pattern, else the longest matching one; a name none covers is \`authenticated\` (\`"*": "service"\`
  closes them). Given, it replaces every pattern; left out, they stay; schema_get shows them.
- postgres_changes: \`channel(name).on('postgres_changes', { event: '*'|'INSERT'|'UPDATE'|'DELETE', schema: 'public',
  table?, filter? }, cb)\` on tables applied with \`realtime: true\` (schema_apply; the table needs a primary key; while any
  subscriber listens, each write to it also writes its change, kept a few minutes; \`realtime: false\` stops it). Each change reaches a channel only
  when row-level security lets its role select the row (as the change left it; a delete's old row), so an end user
  gets their own rows of a \`user\` table; an update's old row comes whole only to those who may see it, else its
  primary key. Filters: \`col=eq.v\` (neq, lt, lte, gt, gte, \`in.(a,b)\`, is, isdistinct, like, ilike; several joined
  by commas all apply; \`not.\` negates). SUBSCRIBED comes once changes flow, then a \`system\` message "Subscribed to
  PostgreSQL". A table that does not stream or exist, an unknown column or match/imatch: the join is refused
  \`InvalidPostgresChanges: <why>\`. An end user's channel whose connection dropped and that rejoins within 60 s (same
  session, topic, bindings; any api process) first gets what it missed (at least once: the last seconds may repeat).
- Which tables stream, and the channels of the api process that answers: realtime_status (GET /v1/{app_id}/realtime/status).
- A browser without a secret key (the console's Live view): POST /v1/{app_id}/realtime/token (realtime_token, REST only; a
  developer's session or platform key) gives \`{ token, expires_in: 300 }\` for supabase-js's \`accessToken\`: its channels act
  as the app until it expires (then a \`system\` error, unless a newer one came) and while its minter stands.
`,
};
