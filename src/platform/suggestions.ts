import { z } from 'zod';
import type { Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';

export const SuggestionInput = z.object({
  category: z.enum(['bug_report', 'feature_request', 'improvement', 'documentation']),
  description: z.string().trim().min(1, 'description must not be empty').max(10_000),
  severity: z.enum(['low', 'medium', 'high', 'critical']).optional(),
  affected_tool: z.string().max(200).optional(),
  proposed_solution: z.string().max(10_000).optional(),
  source: z.enum(['agent', 'human_prompted']).optional(),
});
export type SuggestionInput = z.infer<typeof SuggestionInput>;

export class SuggestionsService {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  async create(accountId: string, input: SuggestionInput): Promise<{ id: string; status: 'received'; created_at: string }> {
    const row = await this.#db
      .insertInto('suggestions')
      .values({
        account_id: accountId,
        category: input.category,
        description: input.description,
        severity: input.severity ?? null,
        affected_tool: input.affected_tool ?? null,
        proposed_solution: input.proposed_solution ?? null,
        source: input.source ?? null,
      })
      .returning(['id', 'created_at'])
      .executeTakeFirstOrThrow();
    return { id: row.id, status: 'received', created_at: row.created_at.toISOString() };
  }
}
