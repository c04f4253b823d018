import { z } from 'zod';
import { type AnyTool, type HttpBinding } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { BOT_STATUSES } from '../../src/meetings/states.ts';
import { isMeetingUrl, MEETING_PLATFORMS } from '../../src/meetings/hosts.ts';
import { RESERVED_METADATA_PREFIX } from '../../src/meetings/types.ts';
import { guideRef, QueryFlag } from '../shared.ts';

type Uses = 'meetings';
const defineTool = toolsUsing<Uses>();

// Authentication rule 3: the app's owner only, by a service key of the app or the owner's platform key (MCP).
const OWNER = ['platform', 'service'] as const;
const BASE = '/v1/{app_id}/ai/meetings';
/** Every error on these paths in OpenAI's shape (the spec's Meetings table), authentication and validation included. */
const openai = <O>(binding: HttpBinding<O>): HttpBinding<O> => ({ ...binding, errorShape: 'openai' });
const GUIDE = ` Errors, states, events: ${guideRef('meetings')}.`;

const BotId = z.uuid('a bot id is a uuid, as meetings_spawn returned it').describe('The bot id from meetings_spawn or meetings_list');
/** Query strings carry text: "true"/"false" as well as JSON booleans. */
const Timer = z.number().int().min(1).max(86_400);

const Metadata = z
  .record(z.string().min(1).max(100), z.string().max(500))
  .superRefine((map, ctx) => {
    const keys = Object.keys(map);
    if (keys.length > 50) ctx.addIssue({ code: 'custom', message: 'at most 50 keys' });
    for (const key of keys.filter((k) => k.startsWith(RESERVED_METADATA_PREFIX))) {
      ctx.addIssue({ code: 'custom', path: [key], message: `keys must not start with '${RESERVED_METADATA_PREFIX}' (reserved for the platform)` });
    }
  });

const BotSchema = z.object({
  id: z.string(),
  status: z.enum(BOT_STATUSES),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  durationSeconds: z.number().nullable(),
  recordingUrl: z.string().nullable(),
  transcriptUrl: z.string().nullable(),
  botName: z.string(),
  metadata: z.record(z.string(), z.string()),
  meetingUrl: z.string(),
  transcript: z.boolean(),
  recording: z.union([z.enum(['mp4', 'audio_only']), z.literal(false)]),
  createdAt: z.string(),
});

export const meetingsSpawn = defineTool({
  name: 'meetings_spawn',
  title: 'Send a meeting bot',
  description:
    'Send a bot to record (and transcribe) a video meeting; returns the bot in status joining. Holds credit first (402 insufficient_credits ' +
    'when the balance is at its floor); charged per second when done (meetings_estimate). Follow it with meetings_get or the app webhook.' +
    GUIDE,
  input: z.object({
    app_id: AppIdSchema,
    meetingUrl: z.string().max(2000).refine(isMeetingUrl, `must be an https link of a video meeting (${MEETING_PLATFORMS})`).describe('https link of the meeting'),
    transcript: z.boolean().default(true),
    recording: z.union([z.enum(['mp4', 'audio_only']), z.literal(false)]).default('mp4').describe('mp4 (default), audio_only, or false: no recording'),
    botName: z.string().min(1).max(64).optional().describe('Name shown in the meeting (1-64 characters)'),
    metadata: Metadata.default({}).describe(`Your string map, echoed in bots and events; keys must not start with ${RESERVED_METADATA_PREFIX}`),
    automaticLeave: z
      .object({
        waitingRoomTimeoutSec: Timer.optional(),
        noOneJoinedTimeoutSec: Timer.optional(),
        everyoneLeftTimeoutSec: Timer.optional(),
        inCallNotRecordingTimeoutSec: Timer.optional(),
      })
      .default({})
      .describe('Seconds (1-86400) before the bot leaves; omitted: provider defaults'),
  }),
  output: BotSchema,
  auth: OWNER,
  appScoped: true,
  // Bots join calls for the app: its work, not a change to it.
  governed: false,
  http: openai({ method: 'POST', path: BASE, subdomainPath: '/ai/meetings' }),
  annotations: { openWorldHint: true },
  handler: async ({ app_id: _app, ...request }, ctx) => ctx.services.meetings.spawn(ctx.app!, request),
});

export const meetingsGet = defineTool({
  name: 'meetings_get',
  title: 'Read a meeting bot',
  description: 'One bot: status, times, duration; once done, recordingUrl and transcriptUrl (short-lived, fresh on every read).',
  input: z.object({ app_id: AppIdSchema, bot_id: BotId }),
  output: BotSchema,
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: `${BASE}/{bot_id}`, subdomainPath: '/ai/meetings/{bot_id}' }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.meetings.bots.get(input.app_id, input.bot_id),
});

export const meetingsTranscript = defineTool({
  name: 'meetings_transcript',
  title: 'Meeting transcript',
  description: "A done bot's transcript: { bot_id, segments: [{ speaker, text, start, end }], text }. 409 TRANSCRIPT_NOT_READY before.",
  input: z.object({ app_id: AppIdSchema, bot_id: BotId }),
  output: z.object({
    bot_id: z.string(),
    segments: z.array(z.object({ speaker: z.string(), text: z.string(), start: z.number().nullable(), end: z.number().nullable() })),
    text: z.string(),
  }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: `${BASE}/{bot_id}/transcript`, subdomainPath: '/ai/meetings/{bot_id}/transcript' }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async (input, ctx) => ctx.services.meetings.bots.transcript(input.app_id, input.bot_id),
});

export const meetingsList = defineTool({
  name: 'meetings_list',
  title: 'List meeting bots',
  description: "The app's bots, newest first: { bots, nextCursor } (URLs null here; pass nextCursor as cursor for the next page).",
  input: z.object({
    app_id: AppIdSchema,
    status: z.enum(BOT_STATUSES).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('1-100, default 20'),
    cursor: z.string().max(200).optional(),
  }),
  output: z.object({ bots: z.array(BotSchema), nextCursor: z.string().nullable() }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: BASE, subdomainPath: '/ai/meetings' }),
  annotations: { readOnlyHint: true },
  handler: async ({ app_id, ...query }, ctx) => ctx.services.meetings.list(app_id, query),
});

export const meetingsLeave = defineTool({
  name: 'meetings_leave',
  title: 'Make a meeting bot leave',
  description: 'Force the bot out of the call (REST: 204). Idempotent: a bot whose call is over is left as it is. The session is billed when done.',
  input: z.object({ app_id: AppIdSchema, bot_id: BotId }),
  output: z.object({ left: z.literal(true), id: z.string() }),
  auth: OWNER,
  appScoped: true,
  governed: false,
  http: openai({ method: 'DELETE', path: `${BASE}/{bot_id}`, subdomainPath: '/ai/meetings/{bot_id}', status: 204 }),
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: async (input, ctx) => {
    await ctx.services.meetings.bots.leave(input.app_id, input.bot_id);
    return { left: true as const, id: input.bot_id };
  },
});

export const meetingsEstimate = defineTool({
  name: 'meetings_estimate',
  title: 'Estimate a meeting',
  description: 'USD a session of durationMinutes (1-1440) would be charged, with transcription unless transcript is false: { usd }.',
  input: z.object({
    app_id: AppIdSchema,
    durationMinutes: z.coerce.number().int().min(1).max(1440),
    transcript: QueryFlag.default(true),
  }),
  output: z.object({ usd: z.number() }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: `${BASE}/_estimate`, subdomainPath: '/ai/meetings/_estimate' }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.meetings.estimate(input.durationMinutes, input.transcript),
});

export const meetingsUsage = defineTool({
  name: 'meetings_usage',
  title: 'Meeting usage',
  description: "The app's last 100 usage rows, newest first: { rows: [{ id, bot_id, dimension (recording | transcription), seconds, usd_charged, created_at }] }.",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({
    rows: z.array(
      z.object({ id: z.string(), bot_id: z.string(), dimension: z.enum(['recording', 'transcription']), seconds: z.number(), usd_charged: z.string(), created_at: z.string() }),
    ),
  }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: `${BASE}/usage`, subdomainPath: '/ai/meetings/usage' }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.meetings.usage(input.app_id),
});

export const meetingsWebhookSet = defineTool({
  name: 'meetings_webhook_set',
  title: 'Forward meeting events',
  description:
    "Where the app receives its bots' events (signed POSTs, retried). Returns { ok, app_id, forward_url, secret }: the wsec_ secret only when " +
    'first configured or rotate_secret is true, else null. Keep it to verify x-svc-signature.' +
    GUIDE,
  input: z.object({
    app_id: AppIdSchema,
    forward_url: z.string().max(2000).optional().describe('https URL receiving the events; required the first time'),
    rotate_secret: z.boolean().optional().describe('true: mint a new secret (the old one stops verifying)'),
  }),
  output: z.object({ ok: z.literal(true), app_id: z.string(), forward_url: z.string(), secret: z.string().nullable() }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'PUT', path: `${BASE}/webhook`, subdomainPath: '/ai/meetings/webhook' }),
  annotations: { idempotentHint: false },
  handler: async ({ app_id, ...input }, ctx) => ctx.services.meetings.configureWebhook(app_id, input),
});

export const meetingsWebhookDeliveries = defineTool({
  name: 'meetings_webhook_deliveries',
  title: 'Forwarded meeting events',
  description: 'Events forwarded to the app webhook, newest first: { deliveries: [{ id, bot_id, event, status (pending | delivered | dead), attempts, last_status, last_error, created_at, delivered_at }] }.',
  input: z.object({
    app_id: AppIdSchema,
    status: z.enum(['pending', 'delivered', 'dead']).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('1-100, default 20'),
  }),
  output: z.object({
    deliveries: z.array(
      z.object({
        id: z.string(),
        bot_id: z.string(),
        event: z.string(),
        status: z.enum(['pending', 'delivered', 'dead']),
        attempts: z.number(),
        last_status: z.number().nullable(),
        last_error: z.string().nullable(),
        created_at: z.string(),
        delivered_at: z.string().nullable(),
      }),
    ),
  }),
  auth: OWNER,
  appScoped: true,
  http: openai({ method: 'GET', path: `${BASE}/webhook/deliveries`, subdomainPath: '/ai/meetings/webhook/deliveries' }),
  annotations: { readOnlyHint: true },
  handler: async ({ app_id, ...query }, ctx) => ctx.services.meetings.deliveries(app_id, query),
});

export const meetingsStatus = defineTool({
  name: 'meetings_status',
  title: 'Meeting bots available?',
  description: 'Whether this platform has a meeting bot provider: { available }. Needs no credential.',
  input: z.object({}),
  output: z.object({ available: z.boolean() }),
  auth: ['none', 'platform', 'service', 'user', 'substrate'],
  http: openai({ method: 'GET', path: '/v1/ai/meetings/_status' }),
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.meetings.status(),
});

/** Meeting bots. _estimate, usage and webhook come before {bot_id} in the REST table by their fewer path parameters. */
export const meetingsTools: readonly AnyTool[] = [
  meetingsSpawn,
  meetingsGet,
  meetingsTranscript,
  meetingsList,
  meetingsLeave,
  meetingsEstimate,
  meetingsUsage,
  meetingsWebhookSet,
  meetingsWebhookDeliveries,
  meetingsStatus,
];
