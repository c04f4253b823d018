// What a principle governs and the constraint it states: the payload schemas of record_principle, and the JSON-Logic
// allowlist its constraint is checked against.
import { z } from 'zod';
import { ENTITY_TYPES } from '../entities.ts';

/**
 * A principle's `applies_to` names the capabilities and the entity types it governs (each list empty or absent: any);
 * its `constraint_spec.logic` is a JSON-Logic expression over `{ capability, payload, entity_type }` that is true for
 * a proposal that complies.
 */
export const AppliesTo = z.object({
  capabilities: z.array(z.string().min(1).max(100)).max(50).optional(),
  entity_types: z.array(z.enum(ENTITY_TYPES)).max(ENTITY_TYPES.length).optional(),
});
/**
 * The JSON-Logic operators a principle may use: comparisons, logic, arithmetic and tests over the proposal's own
 * arrays. Operators that build values (merge, cat, map, reduce, substr) or write to the log are left out: a principle
 * runs on every proposal of its user, and those could grow without bound inside one evaluation.
 */
export const LOGIC_OPERATORS: ReadonlySet<string> = new Set([
  '==', '===', '!=', '!==', '>', '>=', '<', '<=', '!', '!!', 'or', 'and', 'if', '?:', 'var', 'missing', 'missing_some', 'in',
  '+', '-', '*', '/', '%', 'min', 'max', 'all', 'some', 'none',
]);
/** Nodes (objects, arrays and values) a principle's logic may have. */
export const LOGIC_MAX_NODES = 500;

/** Why a logic expression is refused, or undefined when it is acceptable. */
export function logicProblem(logic: unknown): string | undefined {
  let nodes = 0;
  const pending: unknown[] = [logic];
  while (pending.length) {
    const node = pending.pop();
    if (++nodes > LOGIC_MAX_NODES) return `at most ${LOGIC_MAX_NODES} nodes`;
    if (Array.isArray(node)) pending.push(...node);
    else if (node && typeof node === 'object') {
      const keys = Object.keys(node);
      if (keys.length !== 1) return 'every operation is an object with exactly one operator';
      if (!LOGIC_OPERATORS.has(keys[0]!)) return `operator '${keys[0]!.slice(0, 50)}' is not allowed; allowed: ${[...LOGIC_OPERATORS].join(' ')}`;
      pending.push((node as Record<string, unknown>)[keys[0]!]);
    }
  }
  return undefined;
}

export const ConstraintSpec = z.object({
  logic: z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
    const problem = logicProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: `not an allowed JSON-Logic expression: ${problem}` });
  }),
  mode: z.enum(['require_approval', 'reject']).default('require_approval'),
});
