// Attention rules of one substrate user: create, list, get, update, delete, enable/disable and the firings. What a
// rule body is and how its template renders is in rule-body.ts; the dispatcher, firing and preview in rule-engine.ts
// (reached through SubstrateRules, which the service exposes).
import { sql, type Kysely } from 'kysely';
import { AppError, errors } from '../core/errors.ts';
import { cronNext, parseCron } from '../core/cron.ts';
import { MAX_FIRES_DEFAULT, type RuleBody } from './rule-body.ts';
import { RuleEngine, type PreviewResult } from './rule-engine.ts';
import { firingView, type FiringRow, type FiringView, type RuleRow } from './rule-rows.ts';
import type { SubstrateService } from './service.ts';
import { newId } from './ids.ts';
import { afterCursor, cursorTs, page, parseCursor } from './cursor.ts';
import type { ControlDatabase } from '../db/types.ts';

// Callers (tools, tests) import the rule body's schema and rendering from here, as before the split.
export { CONDITION_MODES, MAX_FIRES_DEFAULT, RENDERED_MAX_BYTES, ROW_SOURCES, refineBody, renderTemplate, ruleShape, unknownVar, type RuleBody } from './rule-body.ts';
export { BINDINGS_MAX, FIRINGS_KEPT, ROW_SCAN_MAX, type PreviewResult } from './rule-engine.ts';
export type { FiringProposal, FiringView } from './rule-rows.ts';

/** Rules per substrate user. */
export const RULES_PER_USER_MAX = 200;

/** A rule as the API returns it: the stored body, the id as rule_id, the next slot and ISO timestamps. */
export interface RuleView
  extends Omit<RuleRow, 'id' | 'user_id' | 'condition' | 'action_payload_template' | 'cron_cursor' | 'created_at' | 'updated_at'>,
    Pick<RuleBody, 'condition' | 'action_payload_template'> {
  rule_id: string;
  /** The next slot (UTC) when enabled; null when disabled. */
  next_fire_at: string | null;
  created_at: string;
  updated_at: string;
}

function nextFire(r: Pick<RuleRow, 'trigger_cron' | 'enabled'>, now = new Date()): string | null {
  if (!r.enabled) return null;
  try {
    return cronNext(parseCron(r.trigger_cron), now)?.toISOString() ?? null;
  } catch {
    return null;
  }
}

function ruleView(r: RuleRow): RuleView {
  return {
    rule_id: r.id,
    name: r.name,
    description: r.description,
    trigger_cron: r.trigger_cron,
    condition_mode: r.condition_mode,
    // create and update store both from a validated RuleBody.
    condition: r.condition as RuleBody['condition'],
    action_capability: r.action_capability,
    action_payload_template: r.action_payload_template as RuleBody['action_payload_template'],
    enabled: r.enabled,
    max_fires_per_day: r.max_fires_per_day,
    next_fire_at: nextFire(r),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

const ruleNotFound = (ruleId: string) => errors.notFound(`Attention rule '${ruleId.slice(0, 100)}'`, 'List the rules with GET /v1/me/substrate/attention-rules.');

/** Rules of one substrate user (CRUD, firings), and through the engine the preview, dispatcher and firing of every user's rules. */
export class SubstrateRules {
  readonly #db: Kysely<ControlDatabase>;
  readonly #engine: RuleEngine;

  constructor(db: Kysely<ControlDatabase>, service: SubstrateService) {
    this.#db = db;
    this.#engine = new RuleEngine(db, service);
  }

  async list(userId: string): Promise<{ rules: RuleView[] }> {
    const { rows } = await sql<RuleRow>`select * from substrate_attention_rules where user_id = ${userId} order by created_at desc, id desc`.execute(this.#db);
    return { rules: rows.map(ruleView) };
  }

  async get(userId: string, ruleId: string): Promise<RuleView> {
    return ruleView(await this.#row(this.#db, userId, ruleId));
  }

  async create(userId: string, body: RuleBody): Promise<RuleView> {
    return this.#db.transaction().execute(async (tx) => {
      // One user's creates are serialized so the per-user limit holds.
      await sql`select 1 from substrate_users where id = ${userId} for update`.execute(tx);
      const { rows: count } = await sql<{ n: number }>`select count(*)::int as n from substrate_attention_rules where user_id = ${userId}`.execute(tx);
      if (count[0]!.n >= RULES_PER_USER_MAX) {
        throw new AppError(409, 'RULE_LIMIT', `A substrate user has at most ${RULES_PER_USER_MAX} attention rules.`, 'Delete a rule you no longer need.');
      }
      const { rows } = await sql<RuleRow>`
        insert into substrate_attention_rules (id, user_id, name, description, trigger_cron, condition_mode, condition, action_capability,
                                               action_payload_template, enabled, max_fires_per_day)
        values (${newId('rul')}, ${userId}, ${body.name}, ${body.description ?? null}, ${body.trigger_cron}, ${body.condition_mode},
                ${JSON.stringify(body.condition)}::jsonb, ${body.action_capability}, ${JSON.stringify(body.action_payload_template)}::jsonb,
                ${body.enabled ?? true}, ${body.max_fires_per_day ?? MAX_FIRES_DEFAULT})
        returning *`.execute(tx);
      return ruleView(rows[0]!);
    });
  }

  /** Replaces the body; `enabled` omitted stays as it is. A changed schedule starts from now (no catch-up). */
  async update(userId: string, ruleId: string, body: RuleBody): Promise<RuleView> {
    const { rows } = await sql<RuleRow>`
      update substrate_attention_rules set name = ${body.name}, description = ${body.description ?? null},
        cron_cursor = case when trigger_cron = ${body.trigger_cron} then cron_cursor else greatest(cron_cursor, now()) end,
        trigger_cron = ${body.trigger_cron}, condition_mode = ${body.condition_mode}, condition = ${JSON.stringify(body.condition)}::jsonb,
        action_capability = ${body.action_capability}, action_payload_template = ${JSON.stringify(body.action_payload_template)}::jsonb,
        enabled = coalesce(${body.enabled ?? null}::boolean, enabled),
        max_fires_per_day = ${body.max_fires_per_day ?? MAX_FIRES_DEFAULT}, updated_at = date_trunc('milliseconds', now())
      where id = ${ruleId} and user_id = ${userId}
      returning *`.execute(this.#db);
    if (!rows[0]) throw ruleNotFound(ruleId);
    return ruleView(rows[0]);
  }

  async remove(userId: string, ruleId: string): Promise<void> {
    const { rows } = await sql`delete from substrate_attention_rules where id = ${ruleId} and user_id = ${userId} returning id`.execute(this.#db);
    if (!rows[0]) throw ruleNotFound(ruleId);
  }

  /** Enabling starts the schedule from now: slots while it was disabled are not fired. */
  async setEnabled(userId: string, ruleId: string, enabled: boolean): Promise<RuleView> {
    const { rows } = await sql<RuleRow>`
      update substrate_attention_rules set
        cron_cursor = case when ${enabled} and not enabled then greatest(cron_cursor, now()) else cron_cursor end,
        enabled = ${enabled}, updated_at = date_trunc('milliseconds', now())
      where id = ${ruleId} and user_id = ${userId}
      returning *`.execute(this.#db);
    if (!rows[0]) throw ruleNotFound(ruleId);
    return ruleView(rows[0]);
  }

  /** Newest slot first (one firing per slot), after the `before` cursor; `next_before` is null on the last page. */
  async firings(userId: string, ruleId: string, query: { limit: number; before?: string | undefined }): Promise<{ firings: FiringView[]; next_before: string | null }> {
    await this.#row(this.#db, userId, ruleId);
    const { rows } = await sql<FiringRow & { cursor_ts: string }>`
      select *, ${cursorTs('slot')} as cursor_ts from substrate_attention_rule_firings where rule_id = ${ruleId} and user_id = ${userId}
        ${afterCursor('slot', query.before === undefined ? null : parseCursor(query.before))}
      order by slot desc, id desc limit ${query.limit + 1}`.execute(this.#db);
    const shown = page(rows, query.limit);
    return { firings: shown.rows.map(firingView), next_before: shown.next_before };
  }

  /** A dry run of a rule body (rule-engine.ts). */
  preview(userId: string, body: Omit<RuleBody, 'name'> & { name?: string | undefined }): Promise<PreviewResult> {
    return this.#engine.preview(userId, body);
  }

  /** The per-minute tick over every user's rules (rule-engine.ts). */
  dispatch(now: Date): Promise<{ rules: number; enqueued: number }> {
    return this.#engine.dispatch(now);
  }

  /** One slot of one rule (rule-engine.ts). */
  fire(ruleId: string, slot: string): Promise<FiringView | undefined> {
    return this.#engine.fire(ruleId, slot);
  }

  async #row(db: Kysely<ControlDatabase>, userId: string, ruleId: string): Promise<RuleRow> {
    const row = (await sql<RuleRow>`select * from substrate_attention_rules where id = ${ruleId} and user_id = ${userId}`.execute(db)).rows[0];
    if (!row) throw ruleNotFound(ruleId);
    return row;
  }
}
