// An app's branches and governed change (branches_*): the branches and merges of an app and whether it is protected
// (GET /v1/{app_id}/branches), a branch made (POST), protection set or lifted (PUT /v1/{app_id}/protection); on a
// branch's own app_id: its three-way diff, its merge into the parent (202; 409 lists conflicts), its deletion.
import { apps, call, seg } from '../api.ts';

export type BranchStatus = 'copying' | 'ready' | 'failed';
export type MergeStatus = 'proposed' | 'queued' | 'running' | 'merged' | 'failed' | 'rejected';
/** The rows a branch starts with; a sample (all rows, columns masked) is left to the API and MCP, where the mask is declared. */
export const BRANCH_DATA = ['none', 'seed'] as const;

export interface Branch {
  app_id: string;
  parent_app_id: string;
  name: string;
  status: BranchStatus;
  error: string | null;
  url: string;
  data: 'none' | 'seed' | 'sample';
  expires_at: string;
  created_at: string;
  merged_at: string | null;
}

/** What a merge carries over, in words, the SQL production runs, the statements among them that destroy data, and what it cannot apply. */
export interface MergePlan {
  changes: string[];
  statements: string[];
  destructive: string[];
  notes: string[];
}

export interface Merge extends MergePlan {
  merge_id: string;
  app_id: string;
  branch_app_id: string | null;
  status: MergeStatus;
  /** The substrate action a person approves (status proposed). */
  action_id: string | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface Conflict {
  unit: string;
  summary: string;
  base: unknown;
  branch: unknown;
  production: unknown;
}

export interface BranchDiff {
  /** The parent's. */
  app_id: string;
  branch_app_id: string;
  changes: Array<{ unit: string; kind: 'added' | 'changed' | 'removed'; summary: string }>;
  conflicts: Conflict[];
  statements: string[];
  destructive: string[];
  notes: string[];
  mergeable: boolean;
}

export interface Branches {
  protected: boolean;
  branches: Branch[];
  merges: Merge[];
}

export interface BranchInput {
  name?: string | undefined;
  data: (typeof BRANCH_DATA)[number];
  tables: string[];
  idle_days?: number | undefined;
}

/** A state a branch or merge will not leave by itself. */
export const branchSettled = (b: Branch): boolean => b.status !== 'copying';
export const mergeSettled = (m: Merge): boolean => m.status !== 'queued' && m.status !== 'running';

export const branches = {
  list: (appId: string) => call<Branches>('GET', `/v1/${seg(appId)}/branches`),
  create: (appId: string, input: BranchInput) => call<Branch>('POST', `/v1/${seg(appId)}/branches`, input),
  /** Lifting takes a person signed in with the admin role; the API refuses anyone else with its reason. */
  protect: (appId: string, value: boolean) => call<{ app_id: string; protected: boolean }>('PUT', `/v1/${seg(appId)}/protection`, { protected: value }),
  diff: (branchId: string) => call<BranchDiff>('GET', `/v1/${seg(branchId)}/branch/diff`),
  merge: (branchId: string) => call<Merge>('POST', `/v1/${seg(branchId)}/branch/merge`),
  remove: (branchId: string) => call('DELETE', `/v1/${seg(branchId)}/branch`),
};

/** An app's name, or its id when it cannot be read (gone, or another account's): a parent or branch named in a plan. */
export const appName = (id: string): Promise<string> => apps.get(id).then((a) => a.name, () => id);
