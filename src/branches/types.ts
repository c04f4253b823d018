// The shapes the branches tools take and answer with.
import { z } from 'zod';

const TableName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a table name');
const ColumnName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a column name');

/** The rows a branch starts with (branches_create's data, tables, mask, rows). */
export const BranchDataFields = {
  data: z.enum(['none', 'seed', 'sample']).default('none').describe("seed: tables' rows no end user owns; sample: all rows, mask applied"),
  tables: z.array(TableName).max(50).default([]).describe('For seed or sample, parents first'),
  mask: z.record(TableName, z.array(ColumnName).max(100)).default({}).describe('sample: text columns replaced by a digest, per table'),
  rows: z.number().int().min(1).max(10_000).optional().describe('sample: at most this many rows per table'),
};
const BranchDataSchema = z.object(BranchDataFields);
export type BranchData = z.infer<typeof BranchDataSchema>;

export const BranchSchema = z.object({
  app_id: z.string().describe("The branch's own app_id: change it with every tool, as any app"),
  parent_app_id: z.string(),
  name: z.string(),
  status: z.enum(['copying', 'ready', 'failed']).describe('copying until the clone is done (poll branches_list); failed: error says why'),
  error: z.string().nullable(),
  url: z.string().describe("The branch's own URL: its site is a preview there"),
  data: z.enum(['none', 'seed', 'sample']),
  expires_at: z.string().describe('Deleted when idle until then (each request moves it on)'),
  created_at: z.string(),
  merged_at: z.string().nullable(),
});
export type BranchView = z.infer<typeof BranchSchema>;

const PlanFields = {
  changes: z.array(z.string()).describe('Each change carried over, in words'),
  statements: z.array(z.string()).describe("The SQL production's schema runs"),
  destructive: z.array(z.string()).describe('The statements that destroy data'),
  notes: z.array(z.string()).describe('Branch changes a merge cannot apply'),
};

export const MERGE_STATUSES = ['proposed', 'queued', 'running', 'merged', 'failed'] as const;
export type MergeStatus = (typeof MERGE_STATUSES)[number];

export const MergeSchema = z.object({
  merge_id: z.string(),
  app_id: z.string(),
  branch_app_id: z.string().nullable(),
  status: z.enum([...MERGE_STATUSES, 'rejected']).describe('proposed: waits for a person (action_id in their Approvals); queued/running: applying; merged; failed (error); rejected'),
  action_id: z.string().nullable(),
  ...PlanFields,
  error: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type MergeView = z.infer<typeof MergeSchema>;

export const UnitChangeSchema = z.object({
  unit: z.string(),
  kind: z.enum(['added', 'changed', 'removed']),
  summary: z.string(),
  branch: z.unknown().optional().describe("The branch's value"),
});
export type UnitChangeView = z.infer<typeof UnitChangeSchema>;

export const ConflictSchema = z.object({ unit: z.string(), summary: z.string(), base: z.unknown(), branch: z.unknown(), production: z.unknown() });

export const DiffSchema = z.object({
  app_id: z.string(),
  branch_app_id: z.string(),
  changes: z.array(UnitChangeSchema),
  conflicts: z.array(ConflictSchema).describe('Units both sides changed differently: they block the merge'),
  statements: PlanFields.statements,
  destructive: PlanFields.destructive,
  notes: PlanFields.notes,
  mergeable: z.boolean(),
});
export type DiffView = z.infer<typeof DiffSchema>;
