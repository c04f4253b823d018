// Broadcasts to an app's realtime channels over HTTP, as realtime-js sends them (Supabase Realtime's api/broadcast:
// its send() when not subscribed, and httpSend), and as an agent sends them (realtime_broadcast). The websocket itself
// is src/transports/ws.ts's; its channels are src/realtime's. realtime_status says which tables stream; realtime_token
// gives a browser (the console) a short-lived credential for channels that act as the app.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import type { HttpBinding } from '../../src/core/define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { MAX_BINARY_FIELD_BYTES } from '../../src/realtime/protocol.ts';
import type { HttpBroadcast } from '../../src/realtime/service.ts';
import type { ChannelRole } from '../../src/realtime/roles.ts';
import { MAX_STORE_SECONDS } from '../../src/realtime/stored.ts';
import { appRoute, QueryFlag } from '../shared.ts';
import { credentialOf } from '../../src/auth/keys.ts';
import { errors } from '../../src/core/errors.ts';

type Uses = 'realtime';
const defineTool = toolsUsing<Uses>();

/** Messages of one HTTP broadcast at most. */
export const MAX_HTTP_MESSAGES = 100;
/** Query parameters realtime-js copies from its socket's URL onto its HTTP broadcasts. */
const SOCKET_PARAMS = ['apikey', 'vsn', 'log_level'] as const;

const route = appRoute('realtime');
/** A realtime-js route: Supabase Realtime's error shape, 202 with no body. */
const wire = <O>(path: string, extra: Partial<HttpBinding<O>> = {}): HttpBinding<O> =>
  route<O>('POST', path, { errorShape: 'realtime', ignoredQuery: SOCKET_PARAMS, respond: () => ({ status: 202, body: undefined }), ...extra });

const Topic = z
  .string()
  .min(1, 'topic must not be empty')
  .refine((t) => Buffer.byteLength(`realtime:${t}`) <= MAX_BINARY_FIELD_BYTES, `topic is at most ${MAX_BINARY_FIELD_BYTES - 'realtime:'.length} bytes`)
  .describe("The channel's name, as given to supabase-js's channel(name) (without 'realtime:')");
const Event = z
  .string()
  .refine((e) => Buffer.byteLength(e) <= MAX_BINARY_FIELD_BYTES, `event is at most ${MAX_BINARY_FIELD_BYTES} bytes`)
  .describe("The broadcast's event: what on('broadcast', { event }) listens to");
const Present = z.unknown().refine((v) => v !== undefined, 'payload is required');

const MessageSchema = z.object({
  topic: Topic,
  event: Event,
  payload: Present.describe('Any JSON'),
  private: z.boolean().optional().describe("A private channel (config.private): the app, or an end user its channels rule allows (schema_apply's channels)"),
});

/** Whom an HTTP broadcast is sent as: an anonymous caller (none, or the publishable key), an end user, or the app. */
function roleOf(caller: Ctx<Uses>['caller']): ChannelRole {
  if (caller.kind === 'none') return { kind: 'anon' };
  if (caller.kind === 'user') return { kind: 'user', userId: caller.userId, expiresAt: undefined, claims: caller.claims };
  return { kind: 'service' };
}

async function send(ctx: Ctx<Uses>, appId: string, messages: HttpBroadcast[]): Promise<{ sent: number }> {
  await ctx.services.realtime.send(appId, roleOf(ctx.caller), messages);
  return { sent: messages.length };
}

const AUTH = ['none', 'user', 'service', 'platform'] as const;

export const realtimeBroadcast = defineTool({
  name: 'realtime_broadcast',
  title: 'Broadcast to realtime channels',
  description:
    "Send messages to an app's realtime channels: every client subscribed with supabase-js's channel(topic).on('broadcast', { event }) receives its payload. " +
    'Returns { sent }; over REST 202 with no body, as Supabase Realtime answers.',
  input: z.object({
    app_id: AppIdSchema,
    messages: z.array(MessageSchema).min(1).max(MAX_HTTP_MESSAGES),
  }),
  output: z.object({ sent: z.number().int() }),
  auth: AUTH,
  appScoped: true,
  http: wire('/v1/api/broadcast'),
  annotations: { openWorldHint: false },
  handler: (input, ctx) =>
    send(
      ctx,
      input.app_id,
      input.messages.map((m) => ({ topic: m.topic, event: m.event, body: { kind: 'json', value: m.payload }, private: m.private ?? false })),
    ),
});

export const realtimeBroadcastEvent = defineTool({
  name: 'realtime_broadcast_event',
  title: 'Broadcast one message (realtime-js httpSend)',
  description:
    "realtime-js's channel.httpSend(event, payload): one message to the channel named in the path, its payload the body (JSON, or bytes as application/octet-stream); private=true in the query for a private channel.",
  input: z.object({
    app_id: AppIdSchema,
    topic: Topic,
    event: Event,
    private: QueryFlag.optional().describe('In the query: true for a private channel'),
    persist: QueryFlag.optional().describe(`In the query: true keeps it for joins that ask to replay (private channels; ${MAX_STORE_SECONDS / 86_400} days)`),
    'persist[ttl]': z.coerce.number().int().min(1).max(MAX_STORE_SECONDS).optional().describe('In the query: keep it this many seconds'),
    payload: Present.describe('The body: any JSON, or bytes'),
  }),
  output: z.object({ sent: z.number().int() }),
  auth: AUTH,
  appScoped: true,
  mcp: false,
  http: wire('/v1/api/broadcast/{topic}/events/{event}', { query: ['private', 'persist', 'persist[ttl]'], bodyField: 'payload', binaryBody: true }),
  annotations: { openWorldHint: false },
  handler: (input, ctx) => {
    const body = Buffer.isBuffer(input.payload) ? ({ kind: 'binary', bytes: input.payload } as const) : ({ kind: 'json', value: input.payload } as const);
    const persist = input['persist[ttl]'] ?? (input.persist ? MAX_STORE_SECONDS : undefined);
    return send(ctx, input.app_id, [{ topic: input.topic, event: input.event, body, private: input.private ?? false, persist }]);
  },
});

export const realtimeStatus = defineTool({
  name: 'realtime_status',
  title: 'Which tables stream',
  description:
    "An app's tables: realtime (schema_apply's flag) and streams (postgres_changes may subscribe: realtime and a primary key); " +
    'channels: those joined on the api process that answered.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({
    tables: z.array(z.object({ name: z.string(), realtime: z.boolean(), streams: z.boolean() })),
    channels: z.number().int(),
  }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: route('GET', '/status'),
  annotations: { readOnlyHint: true },
  handler: (input, ctx) => ctx.services.realtime.status(input.app_id),
});

export const realtimeToken = defineTool({
  name: 'realtime_token',
  title: 'Mint a realtime token',
  description:
    "A realtime token (valid expires_in seconds) for supabase-js's accessToken: its channels act as the app (every row's changes, " +
    'private channels) until it expires, while the session or platform key that minted it stands. For browsers, which must not hold a secret key.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ token: z.string(), expires_in: z.number().int() }),
  auth: ['platform'],
  appScoped: true,
  // A token for realtime clients: the app at work.
  governed: false,
  // A browser's credential (the console's Live view); agents and servers hold the app's keys.
  mcp: false,
  http: route('POST', '/token', { status: 201 }),
  annotations: { openWorldHint: false },
  handler: async (input, ctx) => {
    const credential = credentialOf(ctx.caller);
    // Only a platform key or a session can be checked for still standing at each join; REST sees no other.
    if (!credential) throw errors.wrongCredential(['platform key', "a person's session"]);
    return ctx.services.realtime.token(input.app_id, credential);
  },
});

export const realtimeTools = [realtimeBroadcast, realtimeBroadcastEvent, realtimeStatus, realtimeToken];
