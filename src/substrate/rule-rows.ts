// The stored shapes shared by the rules' CRUD (rules.ts) and their engine (rule-engine.ts): the rule row, the
// firing as the API returns it, and the ids of both.
import type { Selectable } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import type { Verdict } from './types.ts';

export type RuleRow = Selectable<ControlDatabase['substrate_attention_rules']>;

export interface FiringProposal {
  binding_index: number;
  action_id: string;
  verdict: Verdict['result'];
  requires_approval: boolean;
  replay?: true;
}

export interface FiringView {
  firing_id: string;
  rule_id: string;
  slot: string;
  bindings_count: number;
  bindings: unknown[];
  proposals: FiringProposal[];
  skipped: Array<{ binding_index: number; reason: string }>;
  /** Set when the whole slot was skipped: no snapshot, or the condition could not be evaluated. */
  skip_reason: string | null;
  created_at: string;
  updated_at: string;
}

export type FiringRow = Selectable<ControlDatabase['substrate_attention_rule_firings']>;

/** A firing row as the API returns it (its jsonb columns hold what the engine wrote in these shapes). */
export function firingView(r: FiringRow): FiringView {
  return {
    firing_id: r.id,
    rule_id: r.rule_id,
    slot: r.slot.toISOString(),
    bindings_count: r.bindings_count,
    bindings: r.bindings as unknown[],
    proposals: r.proposals as unknown as FiringProposal[],
    skipped: r.skipped as FiringView['skipped'],
    skip_reason: r.skip_reason,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

