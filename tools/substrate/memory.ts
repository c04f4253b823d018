import { z } from 'zod';
import { QueryFlag, SUBSTRATE_ROLE } from '../shared.ts';
import { type HttpBinding } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { MEMORY_KINDS, parseKinds } from '../../src/substrate/memory.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/me/substrate';
/** As in substrate.ts: substrate keys over REST (a human); over MCP the platform key acts as an agent. */
const AUTH = ['substrate', 'platform'] as const;
const REST = <O>(binding: HttpBinding<O>): HttpBinding<O> => ({ ...binding, restAuth: ['substrate', 'session'] });
/** `count=true` over REST (a query string), `count: true` over MCP. */
/** Memory kinds, comma-separated (checked by parseKinds: 400 naming an unknown one). */
const Kinds = z.string().max(200).optional().describe(`Comma-separated: ${MEMORY_KINDS.join(', ')} (default all)`);

const Links = z.object({ entity_ids: z.array(z.string()).optional(), project_tags: z.array(z.string()).optional() });
const Artifact = z.object({
  id: z.string(),
  kind: z.string(),
  external_system: z.string().nullable(),
  external_id: z.string().nullable(),
  title: z.string(),
  summary: z.string().nullable(),
  url: z.string().nullable(),
  storage_object_id: z.string().nullable(),
  links: Links,
  attrs: z.record(z.string(), z.unknown()),
  source_app_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const MemoryRow = z.object({
  id: z.string(),
  kind: z.enum(['decision', 'commitment', 'learning', 'source_artifact']),
  title: z.string(),
  body_text: z.string().nullable(),
  rank: z.number().nullable(),
  updated_at: z.string(),
  source_artifact_id: z.string().nullable(),
  supersedes: z.string().nullable(),
  status: z.string().nullable(),
});
const Snapshot = z.object({
  snapshot_date: z.string(),
  entity_count: z.number().int(),
  decision_count: z.number().int(),
  commitment_count: z.number().int(),
  learning_count: z.number().int(),
  principle_count: z.number().int(),
  artifact_count: z.number().int(),
  open_commitment_count: z.number().int(),
  action_count: z.number().int(),
  pending_approval_count: z.number().int(),
  taken_at: z.string(),
});

export const substrateArtifactsList = defineTool({
  name: 'substrate_artifacts_list',
  title: 'List source artifacts',
  description:
    "The user's source artifacts (mails, documents, transcripts...), without content: { artifacts, total? }. Newest first; q searches " +
    'title, summary and content, best match first. Written with upsert_source_artifact.',
  input: z.object({
    kind: z.string().max(100).optional(),
    q: z.string().max(500).optional().describe('Every word; "a phrase", or, -word work'),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    count: QueryFlag.optional().describe('true adds total (all matches, ignoring limit)'),
  }),
  output: z.object({ artifacts: z.array(Artifact), total: z.number().int().optional() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/source-artifacts` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.artifacts.list((await ctx.services.substrate.actor(ctx.caller)).userId, input),
});

export const substrateArtifactsGet = defineTool({
  name: 'substrate_artifacts_get',
  title: 'Get a source artifact',
  description: 'One source artifact by id (art_...), with its content.',
  input: z.object({ artifact_id: z.string().min(1).max(100) }),
  output: Artifact.extend({ content: z.string().nullable() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/source-artifacts/{artifact_id}` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.artifacts.get((await ctx.services.substrate.actor(ctx.caller)).userId, input.artifact_id),
});

export const substrateMemorySearch = defineTool({
  name: 'substrate_memory_search',
  title: 'Search substrate memory',
  description:
    "Full-text search of the user's decisions, commitments, learnings and source artifacts, best rank first: { results: [{ id, kind, title, " +
    'body_text, rank, ... }] }. q empty or * lists the newest. Search before recording what may be known.',
  input: z.object({
    q: z.string().max(500).optional(),
    kinds: Kinds,
    limit: z.coerce.number().int().min(1).max(200).default(20),
    match: z.enum(['and', 'or', 'phrase']).default('and').describe('and: every word; or: any; phrase: in order'),
  }),
  output: z.object({ results: z.array(MemoryRow) }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/memory` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) =>
    ctx.services.substrate.memory.search((await ctx.services.substrate.actor(ctx.caller)).userId, { ...input, kinds: parseKinds(input.kinds) }),
});

export const substrateMemoryList = defineTool({
  name: 'substrate_memory_list',
  title: 'Browse substrate memory',
  description:
    'Memory rows newest first: { results, next_before }; send next_before as before for the next page (null: no more). source_artifact_id: ' +
    'the rows citing it; superseded=false hides superseded decisions and expired commitments.',
  input: z.object({
    kinds: Kinds,
    source_artifact_id: z.string().min(1).max(100).optional(),
    superseded: QueryFlag.optional(),
    before: z.string().max(200).optional().describe('next_before, verbatim'),
    limit: z.coerce.number().int().min(1).max(100).default(25),
  }),
  output: z.object({ results: z.array(MemoryRow), next_before: z.string().nullable() }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/memory/list` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) =>
    ctx.services.substrate.memory.list((await ctx.services.substrate.actor(ctx.caller)).userId, { ...input, kinds: parseKinds(input.kinds) }),
});

export const substrateSnapshotsList = defineTool({
  name: 'substrate_snapshots_list',
  title: 'Daily substrate snapshots',
  description:
    "Daily counters of the user's substrate (entities, decisions, commitments, learnings, principles, artifacts, actions, pending " +
    'approvals), newest first: { snapshots }. days 1-365, default 7, today included.',
  input: z.object({ days: z.coerce.number().int().min(1).max(365).default(7) }),
  output: z.object({ snapshots: z.array(Snapshot) }),
  auth: AUTH,
  role: SUBSTRATE_ROLE,
  http: REST({ method: 'GET', path: `${BASE}/snapshots` }),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.substrate.snapshots.list((await ctx.services.substrate.actor(ctx.caller)).userId, input.days),
});

export const substrateMemoryTools = [substrateArtifactsList, substrateArtifactsGet, substrateMemorySearch, substrateMemoryList, substrateSnapshotsList];
