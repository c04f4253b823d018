// Branches and governed change: branch an app (a copy with its own URLs, keys, end users and data by choice), change
// the branch with any tool, diff it three ways against production, merge it (a person approves the merge of a protected
// app), delete it; protect an app so that agents change it only through branches.
import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import type { Caller } from '../../src/core/caller.ts';
import { toolsUsing } from '../define.ts';
import { accountOf } from '../caller.ts';
import { AppIdSchema, AppNameSchema } from '../../src/apps/types.ts';
import { BranchDataFields, BranchSchema, DiffSchema, MergeSchema } from '../../src/branches/types.ts';

type Uses = 'branches';
const defineTool = toolsUsing<Uses>();

const BranchIdSchema = AppIdSchema.describe("The branch's app_id (branches_create, branches_list)");

/** Who asked for a merge, as the merge records it: the credential, and the person behind it when there is one. */
function requester(caller: Caller): string {
  if (caller.kind !== 'platform') return caller.kind;
  return caller.via === 'key' ? `platform key ${caller.keyId ?? ''}`.trim() : `${caller.via === 'session' ? 'person' : 'OAuth client of person'} ${caller.personId ?? ''}`.trim();
}

export const branchesCreate = defineTool({
  name: 'branches_create',
  title: 'Branch an app',
  description:
    'Copy an app into a branch, an app of its own (URL, keys, end users): schema, functions, site, AI/RAG settings; rows per data. ' +
    "Change the branch's app_id with any tool, then branches_diff and branches_merge. Poll branches_list until status is ready.",
  input: z.object({
    app_id: AppIdSchema.describe('The app to branch'),
    name: AppNameSchema.optional(),
    ...BranchDataFields,
    secrets: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)).max(100).default([]).describe('Function variables to copy (others: unset)'),
    idle_days: z.number().int().min(1).max(365).optional().describe('Deleted after this many idle days (default 7)'),
  }),
  output: BranchSchema,
  auth: ['platform'],
  appScoped: true,
  // Branching, merging and protection are how a protected app is changed: never refused by its protection.
  governed: false,
  http: { method: 'POST', path: '/v1/{app_id}/branches', status: 201 },
  annotations: { destructiveHint: false, idempotentHint: false },
  audit: { action: 'branch.create', resource: 'app', id: (_input, out) => out.app_id, details: (input) => ({ parent_app_id: input.app_id }) },
  handler: async (input, ctx) => ctx.services.branches.create(ctx.app!, input),
});

export const branchesList = defineTool({
  name: 'branches_list',
  title: 'List branches and merges',
  description: "An app's branches (status, url, expires_at), its latest merges (status, the plan), whether it is protected, and parent_app_id when it is itself a branch.",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ protected: z.boolean(), parent_app_id: z.string().nullable(), branches: z.array(BranchSchema), merges: z.array(MergeSchema) }),
  auth: ['platform'],
  appScoped: true,
  billingGate: 'exempt',
  http: { method: 'GET', path: '/v1/{app_id}/branches' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.branches.list(ctx.app!),
});

export const branchesDiff = defineTool({
  name: 'branches_diff',
  title: 'Diff a branch',
  description:
    'Three-way diff of a branch and its parent since the branch was made (or merged): changes a merge carries over, ' +
    'conflicts (both changed a thing: they block), the SQL production runs. Next: branches_merge.',
  input: z.object({ app_id: BranchIdSchema }),
  output: DiffSchema,
  auth: ['platform'],
  appScoped: true,
  billingGate: 'exempt',
  http: { method: 'GET', path: '/v1/{app_id}/branch/diff' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.branches.diff(ctx.app!),
});

export const branchesMerge = defineTool({
  name: 'branches_merge',
  title: 'Merge a branch',
  description:
    "Merge a branch into its parent: into a protected app an agent's merge is proposed and applies once a person approves it; " +
    'otherwise it applies at once, in one job. 409 MERGE_CONFLICT lists conflicts. Poll branches_list for its status.',
  input: z.object({ app_id: BranchIdSchema }),
  output: MergeSchema,
  auth: ['platform'],
  appScoped: true,
  governed: false,
  http: { method: 'POST', path: '/v1/{app_id}/branch/merge', status: 202 },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: { action: 'branch.merge', resource: 'app', id: (input) => input.app_id, details: (_input, out) => ({ merge_id: out.merge_id, status: out.status }) },
  handler: async (_input, ctx) => ctx.services.branches.merge(ctx.caller, ctx.app!, requester(ctx.caller)),
});

export const branchesDelete = defineTool({
  name: 'branches_delete',
  title: 'Delete a branch',
  description: 'Delete a branch: its app, database and files. Its merges stay in the parent history.',
  input: z.object({ app_id: BranchIdSchema }),
  output: z.object({ deleted: z.literal(true), app_id: z.string() }),
  auth: ['platform'],
  appScoped: true,
  governed: false,
  billingGate: 'exempt',
  http: { method: 'DELETE', path: '/v1/{app_id}/branch' },
  annotations: { destructiveHint: true, idempotentHint: true },
  audit: { action: 'branch.delete', resource: 'app', id: (input) => input.app_id },
  handler: async (input, ctx) => {
    await ctx.services.branches.delete(accountOf(ctx.caller), input.app_id, ctx.caller);
    return { deleted: true as const, app_id: input.app_id };
  },
});

export const branchesProtect = defineTool({
  name: 'branches_protect',
  title: 'Protect an app',
  description:
    'protected: true: agents change the app only through branches whose merges a person approves (direct changes: 403 APP_PROTECTED). ' +
    'Only a person (admin, signed in) sets false.',
  input: z.object({ app_id: AppIdSchema, protected: z.boolean() }),
  output: z.object({ app_id: z.string(), protected: z.boolean() }),
  auth: ['platform'],
  appScoped: true,
  governed: false,
  billingGate: 'exempt',
  http: { method: 'PUT', path: '/v1/{app_id}/protection' },
  annotations: { idempotentHint: true },
  audit: { action: 'app.protect', resource: 'app', id: (input) => input.app_id, details: (input) => ({ protected: input.protected }) },
  handler: async (input, ctx) => ctx.services.branches.protect(ctx.caller, ctx.app!, input.protected),
});

export const branchesTools: readonly AnyTool[] = [branchesCreate, branchesList, branchesDiff, branchesMerge, branchesDelete, branchesProtect];
