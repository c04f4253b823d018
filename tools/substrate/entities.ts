import { z } from 'zod';
import { QueryFlag, SUBSTRATE_ROLE } from '../shared.ts';
import { type HttpBinding } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { ENTITY_TYPES, entityNotFound } from '../../src/substrate/entities.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/me/substrate';
/** As in substrate.ts: substrate keys over REST (a human); over MCP the platform key acts as an agent. */
const AUTH = ['substrate', 'platform'] as const;
const REST = <O>(binding: HttpBinding<O>): HttpBinding<O> => ({ ...binding, restAuth: ['substrate', 'session'] });
const EntityId = z.string().min(1).max(100).describe('An entity id (ent_...); a merged-away id answers its winner');

const Entity = z.object({
  id: z.string(),
  type: z.enum(ENTITY_TYPES),
  display_name: z.string(),
  primary_email: z.string().nullable(),
  canonical_keys: z.record(z.string(), z.unknown()),
  attrs: z.record(z.string(), z.unknown()),
  linked_app_user_id: z.string().nullable(),
  linked_app_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const Verdict = z.object({
  result: z.enum(['auto_approved', 'auto_approved_yolo', 'requires_approval', 'rejected']),
  reason: z.string(),
  conflicts: z.array(z.object({ principle_id: z.string(), title: z.string(), mode: z.enum(['require_approval', 'reject']) })),
});
/** `count=true` over REST (a query string), `count: true` over MCP. */

export const substrateEntitiesList = defineTool({
  name: 'substrate_entities_list',
  title: 'List substrate entities',
  description:
    "The user's entities (people, companies, projects...), newest updated first: { entities, next_before, total? }. q: display names " +
    'containing it, best first, one page. Write with substrate_propose (upsert_entity...).',
  input: z.object({
    type: z.enum(ENTITY_TYPES).optional(),
    q: z.string().max(200).optional().describe('Display-name search, case-insensitive substring'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    count: QueryFlag.optional().describe('true adds total (all matches, ignoring limit)'),
    before: z.string().max(200).optional().describe('next_before, verbatim (not with q)'),
  }),
  output: z.object({ entities: z.array(Entity), next_before: z.string().nullable(), total: z.number().int().optional() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/entities` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.entities.list((await ctx.services.substrate.actor(ctx.caller)).userId, input),
});

export const substrateEntitiesGet = defineTool({
  name: 'substrate_entities_get',
  title: 'Get a substrate entity',
  description: 'One entity by id. An id merged away by merge_entities answers the entity it was merged into (compare the returned id).',
  input: z.object({ entity_id: EntityId }),
  output: Entity,
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/entities/{entity_id}` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.entities.get((await ctx.services.substrate.actor(ctx.caller)).userId, input.entity_id),
});

export const substrateEntitiesPatch = defineTool({
  name: 'substrate_entities_patch',
  title: 'Patch a substrate entity',
  description:
    'Change an entity through the ledger (proposes patch_entity; answers like substrate_propose). attrs_patch is a JSON merge patch ' +
    '(null deletes a key, objects merge, arrays replace). Send the updated_at you read as if_updated_at: a newer write makes it 409 STALE_ENTITY.',
  input: z
    .object({
      entity_id: EntityId,
      display_name: z.string().trim().min(1).max(500).optional(),
      primary_email: z.email().max(320).nullable().optional().describe('null clears it'),
      attrs_patch: z.record(z.string(), z.unknown()).optional(),
      if_updated_at: z.iso.datetime({ offset: true }).optional().describe("The entity's updated_at when you read it"),
      idempotency_key: z.string().min(1).max(200).optional(),
    })
    .refine((p) => p.display_name !== undefined || p.primary_email !== undefined || p.attrs_patch !== undefined, {
      message: 'send at least one of display_name, primary_email, attrs_patch',
    }),
  output: z.object({ action_id: z.string(), verdict: Verdict, requires_approval: z.boolean(), result: z.unknown().optional(), replay: z.literal(true).optional() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'PATCH', path: `${BASE}/entities/{entity_id}` }),
  handler: async (input, ctx) => {
    const { entity_id, idempotency_key, ...fields } = input;
    // A malformed id names no entity: 404 like any unknown id, not a 400 about the payload the route builds.
    if (!/^ent_[a-z2-7]{20}$/.test(entity_id)) throw entityNotFound(entity_id);
    const payload = Object.fromEntries(Object.entries({ id: entity_id, ...fields }).filter(([, v]) => v !== undefined));
    return ctx.services.substrate.propose(await ctx.services.substrate.actor(ctx.caller), { capability: 'patch_entity', payload, idempotency_key });
  },
});

export const substrateEntityTools = [substrateEntitiesList, substrateEntitiesGet, substrateEntitiesPatch];
