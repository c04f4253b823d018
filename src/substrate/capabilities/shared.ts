// Pieces shared by the capabilities that record memory (decisions, commitments, learnings and principles) and by
// those that undo executed actions.
import { z } from 'zod';
import { sql } from 'kysely';
import type { CapabilityContext, Execution, PlannedExecution } from '../types.ts';

export const Salience = z.enum(['ambient', 'normal', 'archival']);
export const DecisionKind = z.enum(['operational', 'strategic', 'mission', 'vision', 'principle', 'policy_decision']);
export const Text = (max: number) => z.string().trim().min(1).max(max);
export const RefId = z.string().min(1).max(100);
export const ActionId = z.string().regex(/^act_[a-z2-7]{20}$/, 'an action id is act_ followed by 20 characters');

/** Deletes the row a record_* capability inserted: its undo is `{ table, id }`. */
export async function deleteRow(ctx: CapabilityContext, undo: { table: string; id: string }): Promise<void> {
  await sql`delete from ${sql.table(undo.table)} where id = ${undo.id} and user_id = ${ctx.actor.userId}`.execute(ctx.tx);
}

/** Runs a planned execution's insert on its own (a capability's execute): the row the ledger would write with the action's. */
export async function runPlanned(ctx: CapabilityContext, planned: PlannedExecution): Promise<Execution> {
  const { write, ...execution } = planned;
  await write.execute(ctx.tx);
  return execution;
}
