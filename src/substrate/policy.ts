// The policy engine: a proposal's verdict from the capability's policy, the user's yolo mode, who proposes, the
// owner's skip flag, and the user's active principles (JSON-Logic constraints evaluated on every proposal).
import { performance } from 'node:perf_hooks';
import type { Selectable } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import { applyLogic, LOGIC_MAX_MS, LogicBudget } from './logic.ts';
import type { Capability, Conflict, ProposerKind, Verdict } from './types.ts';

/** An active principle as the policy reads it; its jsonb fields have the shapes record_principle validated. */
export type PrincipleRow = Pick<Selectable<ControlDatabase['substrate_principles']>, 'id' | 'title'> & {
  applies_to: { capabilities?: string[]; entity_types?: string[] };
  constraint_spec: { logic: Record<string, unknown>; mode?: 'require_approval' | 'reject' };
};

export interface PolicyInput {
  capability: Capability;
  payload: unknown;
  proposer: ProposerKind;
  yolo: boolean;
  skipApproval: boolean;
  principles: readonly PrincipleRow[];
  /** The type of the entity the proposal is about (entity capabilities), for principles scoped to entity types. */
  entityType: string | null;
}

/**
 * The principles a proposal violates: those that apply to its capability (and, when they name entity types, to the
 * type of the entity it is about) and whose logic is not true for it.
 *
 * Each principle's logic has its own budget of operations (LOGIC_MAX_OPERATIONS), so one costly principle does not
 * starve the others; all of them share LOGIC_MAX_MS of evaluation time, so that however many principles the user has,
 * one proposal never holds the event loop longer. A principle left without time counts as a conflict.
 */
export function conflictsOf(capability: string, payload: unknown, principles: readonly PrincipleRow[], entityType: string | null = null): Conflict[] {
  const data = { capability, payload, entity_type: entityType };
  const out: Conflict[] = [];
  const started = performance.now();
  for (const p of principles) {
    const scope = p.applies_to.capabilities;
    if (scope && scope.length > 0 && !scope.includes(capability)) continue;
    const types = p.applies_to.entity_types;
    if (types && types.length > 0 && (entityType === null || !types.includes(entityType))) continue;
    const ms = Math.max(0, LOGIC_MAX_MS - (performance.now() - started));
    if (!complies(p.constraint_spec.logic, data, new LogicBudget({ ms }))) {
      out.push({ principle_id: p.id, title: p.title, mode: p.constraint_spec.mode ?? 'require_approval' });
    }
  }
  return out;
}

/**
 * Whether the logic is true for the proposal (JavaScript truthiness of the result, as before: an empty array
 * complies). A constraint that cannot be evaluated, within its budget or at all, cannot vouch for the proposal: the
 * human decides.
 */
function complies(logic: unknown, data: unknown, budget: LogicBudget): boolean {
  try {
    return Boolean(applyLogic(logic, data, budget));
  } catch {
    return false;
  }
}

/**
 * In order: a `reject` principle refuses; any other conflict needs approval (even with the skip flag); an owner's
 * `dangerously_skip_approval` executes; an agent never skips; `auto` capabilities execute; in yolo mode a human's
 * proposal of an approval capability executes unless it acts outside the substrate; the rest waits for approval.
 */
export function decide(input: PolicyInput): Verdict {
  const conflicts = conflictsOf(input.capability.name, input.payload, input.principles, input.entityType);
  // Retiring a principle is never refused outright, or a principle that rejects everything would lock its user out:
  // at most it waits for the human.
  if (conflicts.some((c) => c.mode === 'reject') && input.capability.name !== 'retire_principle') {
    return { result: 'rejected', reason: `conflicts with a principle that rejects such proposals: ${conflicts.filter((c) => c.mode === 'reject').map((c) => c.title).join('; ')}`, conflicts };
  }
  const human = input.proposer === 'human';
  if (conflicts.length) return { result: 'requires_approval', reason: `conflicts with ${conflicts.length} principle(s)`, conflicts };
  if (input.skipApproval && human) return { result: 'auto_approved', reason: 'dangerously_skip_approval by the owner', conflicts };
  const skipNote = input.skipApproval ? ' (dangerously_skip_approval is ignored for agents)' : '';
  if (input.capability.policy === 'auto') return { result: 'auto_approved', reason: 'capability policy: auto', conflicts };
  if (input.yolo && human && !input.capability.sideEffecting) return { result: 'auto_approved_yolo', reason: 'yolo mode, proposed by a human', conflicts };
  const why = input.capability.sideEffecting && input.yolo && human ? 'acts outside the substrate, so it needs approval even in yolo mode' : 'capability policy: approval_required';
  return { result: 'requires_approval', reason: why + skipNote, conflicts };
}
