import { z } from 'zod';
import { SUBSTRATE_ROLE } from '../shared.ts';
import { toolsUsing } from '../define.ts';
import { capabilities } from '../../src/substrate/capabilities/index.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/me/substrate';
const AUTH = ['substrate', 'platform'] as const;
const REST = { restAuth: ['substrate', 'session'] as const };

const Capability = z
  .string()
  .refine((c) => capabilities.has(c), { message: 'not a capability (see substrate_propose)' })
  .describe('A capability name, e.g. send_email_draft');
const Target = z.object({ capability: z.string(), webhook_url: z.string(), source_app_id: z.string().nullable(), created_at: z.string(), updated_at: z.string() });
const Delivery = z.object({
  id: z.string(),
  action_id: z.string(),
  capability: z.string(),
  webhook_url: z.string(),
  status: z.enum(['pending', 'delivered', 'dead']),
  attempts: z.number().int(),
  last_status: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: z.string(),
  delivered_at: z.string().nullable(),
});

const userOf = async (ctx: Parameters<Parameters<typeof defineTool>[0]['handler']>[1]) => (await ctx.services.substrate.actor(ctx.caller)).userId;

export const outboxTargetsList = defineTool({
  name: 'substrate_outbox_targets_list',
  title: 'List outbox targets',
  description: 'The webhooks receiving executed actions, by capability: { targets } (secrets never shown).',
  input: z.object({}),
  output: z.object({ targets: z.array(Target) }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'GET', path: `${BASE}/outbox-targets`, ...REST },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.substrate.outbox.targets(await userOf(ctx)),
});

export const outboxTargetSet = defineTool({
  name: 'substrate_outbox_target_set',
  title: 'Set an outbox target',
  description:
    'Register or replace the webhook for a capability: every executed action of it is POSTed there as JSON, signed X-Svc-Signature: ' +
    'sha256=<hex HMAC-SHA256 of the raw body with signing_secret>. source_app_id: only actions from that app. Private addresses are refused.',
  input: z.object({
    capability: Capability,
    webhook_url: z.string().max(2000),
    signing_secret: z.string().min(8).max(500).describe('At least 8 characters; sealed at rest, never returned'),
    source_app_id: z.string().max(100).optional(),
  }),
  output: Target,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'PUT', path: `${BASE}/outbox-targets/{capability}`, ...REST },
  annotations: { idempotentHint: true },
  handler: async ({ capability, ...input }, ctx) => ctx.services.substrate.outbox.setTarget(await userOf(ctx), capability, input),
});

export const outboxTargetDelete = defineTool({
  name: 'substrate_outbox_target_delete',
  title: 'Remove an outbox target',
  description: "Remove a capability's webhook (REST: 204); its pending deliveries become dead.",
  input: z.object({ capability: z.string().max(100) }),
  output: z.object({ deleted: z.literal(true), capability: z.string() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'DELETE', path: `${BASE}/outbox-targets/{capability}`, status: 204, ...REST },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    await ctx.services.substrate.outbox.deleteTarget(await userOf(ctx), input.capability);
    return { deleted: true as const, capability: input.capability };
  },
});

export const outboxDeliveriesList = defineTool({
  name: 'substrate_outbox_deliveries_list',
  title: 'List outbox deliveries',
  description: 'Deliveries to outbox targets, newest first, with status (dead: gave up), attempts and the last error.',
  input: z.object({
    status: z.enum(['pending', 'delivered', 'dead']).optional(),
    capability: z.string().max(100).optional(),
    action_id: z.string().max(100).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  }),
  output: z.object({ deliveries: z.array(Delivery) }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'GET', path: `${BASE}/outbox-deliveries`, ...REST },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.outbox.deliveries(await userOf(ctx), input),
});

export const outboxRedeliver = defineTool({
  name: 'substrate_outbox_redeliver',
  title: 'Redeliver a dead delivery',
  description: 'Send a dead delivery again (its attempts start over); 409 unless it is dead.',
  input: z.object({ delivery_id: z.string().min(1).max(100) }),
  output: Delivery,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: { method: 'POST', path: `${BASE}/outbox-deliveries/{delivery_id}/redeliver`, ...REST },
  handler: async (input, ctx) => ctx.services.substrate.outbox.redeliver(await userOf(ctx), input.delivery_id),
});

export const substrateOutboxTools = [outboxTargetsList, outboxTargetSet, outboxTargetDelete, outboxDeliveriesList, outboxRedeliver];
