// Capabilities that record memory: decisions, commitments, learnings and principles.
import { z } from 'zod';
import { sql } from 'kysely';
import { errors } from '../../core/errors.ts';
import { newId } from '../ids.ts';
import type { Capability, CapabilityContext } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';

const Salience = z.enum(['ambient', 'normal', 'archival']);
const DecisionKind = z.enum(['operational', 'strategic', 'mission', 'vision', 'principle', 'policy_decision']);
const CommitmentStatus = z.enum(['proposed', 'tentative', 'confirmed', 'fulfilled', 'expired', 'broken']);
const Text = (max: number) => z.string().trim().min(1).max(max);
const RefId = z.string().min(1).max(100);

/** Deletes the row a record_* capability inserted: its undo is `{ table, id }`. */
async function deleteRow(ctx: CapabilityContext, undo: { table: string; id: string }): Promise<void> {
  await sql`delete from ${sql.table(undo.table)} where id = ${undo.id} and user_id = ${ctx.actor.userId}`.execute(ctx.tx);
}

export const recordDecision: Capability<{
  title: string;
  kind: z.infer<typeof DecisionKind>;
  rationale?: string | undefined;
  salience: z.infer<typeof Salience>;
  source_artifact_id?: string | undefined;
}> = {
  name: 'record_decision',
  payload: z.object({ title: Text(500), kind: DecisionKind, rationale: Text(20_000).optional(), salience: Salience.default('normal'), source_artifact_id: RefId.optional() }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('dec');
    await sql`insert into substrate_decisions (id, user_id, title, kind, rationale, salience, source_artifact_id)
      values (${id}, ${ctx.actor.userId}, ${p.title}, ${p.kind}, ${p.rationale ?? null}, ${p.salience}, ${p.source_artifact_id ?? null})`.execute(ctx.tx);
    return { result: { decision_id: id }, undo: { table: 'substrate_decisions', id } };
  },
  revert: deleteRow,
};

export const recordCommitment: Capability<{
  description: string;
  status: z.infer<typeof CommitmentStatus>;
  from_entity?: string | undefined;
  to_entity?: string | undefined;
  amount?: number | undefined;
  unit?: string | undefined;
  due_at?: string | undefined;
  source_artifact_id?: string | undefined;
  attrs?: Record<string, unknown> | undefined;
}> = {
  name: 'record_commitment',
  payload: z.object({
    description: Text(20_000),
    status: CommitmentStatus,
    from_entity: RefId.optional(),
    to_entity: RefId.optional(),
    amount: z.number().finite().optional(),
    unit: Text(50).optional(),
    due_at: z.iso.datetime({ offset: true }).optional(),
    source_artifact_id: RefId.optional(),
    attrs: z.record(z.string(), z.unknown()).optional(),
  }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('com');
    await sql`insert into substrate_commitments (id, user_id, description, status, from_entity, to_entity, amount, unit, due_at, source_artifact_id, attrs)
      values (${id}, ${ctx.actor.userId}, ${p.description}, ${p.status}, ${p.from_entity ?? null}, ${p.to_entity ?? null}, ${p.amount ?? null},
              ${p.unit ?? null}, ${p.due_at ?? null}, ${p.source_artifact_id ?? null}, ${JSON.stringify(p.attrs ?? {})})`.execute(ctx.tx);
    return { result: { commitment_id: id }, undo: { table: 'substrate_commitments', id } };
  },
  revert: deleteRow,
};

export const recordLearning: Capability<{
  title: string;
  description: string;
  resolution_taken?: string | undefined;
  related_decision_id?: string | undefined;
  source_artifact_id?: string | undefined;
}> = {
  name: 'record_learning',
  payload: z.object({
    title: Text(500),
    description: Text(20_000),
    resolution_taken: Text(20_000).optional(),
    related_decision_id: RefId.optional(),
    source_artifact_id: RefId.optional(),
  }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('lrn');
    await sql`insert into substrate_learnings (id, user_id, title, description, resolution_taken, related_decision_id, source_artifact_id)
      values (${id}, ${ctx.actor.userId}, ${p.title}, ${p.description}, ${p.resolution_taken ?? null}, ${p.related_decision_id ?? null},
              ${p.source_artifact_id ?? null})`.execute(ctx.tx);
    return { result: { learning_id: id }, undo: { table: 'substrate_learnings', id } };
  },
  revert: deleteRow,
};

/**
 * A principle's `applies_to` names the capabilities and the entity types it governs (each list empty or absent: any);
 * its `constraint_spec.logic` is a JSON-Logic expression over `{ capability, payload, entity_type }` that is true for
 * a proposal that complies.
 */
export const AppliesTo = z.object({
  capabilities: z.array(z.string().min(1).max(100)).max(50).optional(),
  entity_types: z.array(z.enum(['person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self'])).max(9).optional(),
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

export const recordPrinciple: Capability<{
  title: string;
  applies_to: z.infer<typeof AppliesTo>;
  constraint_spec: z.infer<typeof ConstraintSpec>;
  rationale?: string | undefined;
  salience: z.infer<typeof Salience>;
}> = {
  name: 'record_principle',
  payload: z.object({ title: Text(500), applies_to: AppliesTo, constraint_spec: ConstraintSpec, rationale: Text(20_000).optional(), salience: Salience.default('ambient') }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const id = newId('prn');
    await sql`insert into substrate_principles (id, user_id, title, applies_to, constraint_spec, rationale, salience)
      values (${id}, ${ctx.actor.userId}, ${p.title}, ${JSON.stringify(p.applies_to)}, ${JSON.stringify(p.constraint_spec)}, ${p.rationale ?? null},
              ${p.salience})`.execute(ctx.tx);
    return { result: { principle_id: id } };
  },
};

export const supersedeDecision: Capability<{ old_decision_id: string; new_title: string; kind: z.infer<typeof DecisionKind>; new_rationale?: string | undefined }> = {
  name: 'supersede_decision',
  payload: z.object({ old_decision_id: RefId, new_title: Text(500), kind: DecisionKind, new_rationale: Text(20_000).optional() }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const old = await sql<{ salience: string }>`
      update substrate_decisions set status = 'superseded', updated_at = now()
      where id = ${p.old_decision_id} and user_id = ${ctx.actor.userId} and status = 'active' returning salience`.execute(ctx.tx);
    if (!old.rows[0]) throw errors.notFound(`Active decision '${p.old_decision_id}'`, 'Search memory for the decision to supersede (it must be active).');
    const id = newId('dec');
    await sql`insert into substrate_decisions (id, user_id, title, kind, rationale, salience, supersedes)
      values (${id}, ${ctx.actor.userId}, ${p.new_title}, ${p.kind}, ${p.new_rationale ?? null}, ${old.rows[0].salience}, ${p.old_decision_id})`.execute(ctx.tx);
    return { result: { decision_id: id, superseded: p.old_decision_id } };
  },
};

export const retirePrinciple: Capability<{ principle_id: string; reason: string }> = {
  name: 'retire_principle',
  payload: z.object({ principle_id: RefId, reason: Text(2000) }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const { rows } = await sql`update substrate_principles set status = 'expired', updated_at = now()
      where id = ${p.principle_id} and user_id = ${ctx.actor.userId} and status = 'active' returning id`.execute(ctx.tx);
    if (!rows[0]) throw errors.notFound(`Active principle '${p.principle_id}'`, 'List the principles; only an active one can be retired.');
    return { result: { principle_id: p.principle_id, status: 'expired' } };
  },
};
