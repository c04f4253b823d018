// The substrate's shared types: who proposes, what a capability is, and the shapes the API returns.
import type { Kysely, RawBuilder } from 'kysely';
import type { z } from 'zod';
import type { ControlDatabase } from '../db/types.ts';

export type ProposerKind = 'human' | 'agent';

export type AppSourceVia = 'function' | 'service_key';

/** The substrate user a call acts for, and as whom (a person with a substrate key, or an agent). */
export interface SubstrateActor {
  accountId: string;
  userId: string;
  proposer: ProposerKind;
  sourceAppId: string | null;
  sourceRuleId: string | null;
  /** How a linked app proposes: from its functions (ctx.substrate) or with its service key (REST). */
  sourceVia?: AppSourceVia;
  /** The person behind the call (a browser session, or an OAuth token an MCP client holds for them). */
  personId?: string;
}

export type VerdictResult = 'auto_approved' | 'auto_approved_yolo' | 'requires_approval' | 'rejected';

export interface Conflict {
  principle_id: string;
  title: string;
  /** `reject` principles refuse the proposal; `require_approval` ones (the default) send it to the human. */
  mode: 'require_approval' | 'reject';
}

export interface Verdict {
  result: VerdictResult;
  reason: string;
  conflicts: Conflict[];
}

/** What a capability's execute and revert run with: the ledger's transaction and the actor. */
export interface CapabilityContext {
  tx: Kysely<ControlDatabase>;
  actor: SubstrateActor;
  actionId: string;
  /** Undoes an executed action of the same user in this transaction (revert_action, bulk_revert_actions). */
  revert(actionId: string): Promise<void>;
}

export interface Execution {
  result: unknown;
  /** What revert needs to restore the previous state; only reversible capabilities return it. */
  undo?: unknown;
}

/**
 * An execution that is one insert and reads nothing first, not yet run: the ledger may send it in the statement that
 * writes the action row (a common table expression ahead of it), one round trip fewer than running it on its own.
 */
export interface PlannedExecution extends Execution {
  /** An insert of exactly one row, without a `returning` clause (the ledger adds its own). */
  write: RawBuilder<unknown>;
}

/** One capability: adding one is one file in src/substrate/capabilities/ and a line in its index. */
export interface Capability<P = any> {
  name: string;
  payload: z.ZodType<P>;
  policy: 'auto' | 'approval_required';
  reversible: boolean;
  /** Acts outside the substrate (e.g. sends mail): needs approval even in yolo mode. */
  sideEffecting: boolean;
  /** Proposed by the platform itself (a merge of a branch), never through actions/propose. */
  platformOnly?: boolean;
  execute(ctx: CapabilityContext, payload: P): Promise<Execution>;
  /**
   * What execute would do, planned and not run, when that is one insert with nothing to read first; undefined when
   * this payload needs a read (a reference to check): then the ledger calls execute.
   */
  plan?(actor: SubstrateActor, payload: P): PlannedExecution | undefined;
  revert?(ctx: CapabilityContext, undo: any): Promise<void>;
}

/** An action as the API returns it. */
export interface ActionView {
  action_id: string;
  capability: string;
  payload: unknown;
  status: 'proposed' | 'executed' | 'rejected';
  proposer_kind: ProposerKind;
  source_app_id: string | null;
  source_rule_id: string | null;
  verdict: Verdict;
  requires_approval: boolean;
  dangerously_skip_approval: boolean;
  result: unknown;
  reverted_by: string | null;
  /** Whether revert_action would undo it now (executed, reversible with its undo kept, not reverted yet). */
  revertible: boolean;
  reject_reason: string | null;
  /** How the human decided: 'rest' (their substrate key or session) or 'mcp_elicitation' (confirmed at an agent's client). */
  decided_via: 'rest' | 'mcp_elicitation' | 'app_end_user' | null;
  /** The end user of the proposing app who decided (decided_via 'app_end_user'); absent otherwise. */
  decided_by_end_user?: string;
  /** The person who decided, when they did it signed in (a substrate key names no person). */
  decided_by: string | null;
  idempotency_key: string | null;
  created_at: string;
  decided_at: string | null;
  executed_at: string | null;
}
