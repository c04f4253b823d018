// record_principle: a rule the user's proposals are checked against (see principles.ts).
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability } from '../types.ts';
import { AppliesTo, ConstraintSpec } from './principles.ts';
import { Salience, Text } from './shared.ts';

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
