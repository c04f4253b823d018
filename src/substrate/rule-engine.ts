// The engine of attention rules: a rule names a 5-field UTC cron, a JSON-Logic condition and a capability with a
// payload template; when a slot of its cron fires, every binding the condition yields is rendered into a payload and
// proposed through the ledger as an agent (source_rule_id set), within max_fires_per_day.
//
// Bindings:
// - `snapshot_predicate`: `condition` is JSON-Logic over the user's latest daily snapshot (the GET snapshots row:
//   snapshot_date, entity_count, ..., pending_approval_count, taken_at). True: one binding, the snapshot. No snapshot
//   yet: skipped ("no snapshot").
// - `row_query`: `condition` is `{ "from": "decisions" | "commitments" | "learnings" | "entities", "where": <JSON-Logic
//   over one row> }` (`where` omitted: every row). Rows are the table's columns as JSON (ids, text, status, attrs,
//   ISO timestamps; user_id and search vectors left out), read oldest first (created_at, id), at most ROW_SCAN_MAX;
//   each matching row is a binding, at most BINDINGS_MAX per fire.
import { sql, type Kysely } from 'kysely';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { AppError } from '../core/errors.ts';
import { unknownKeysMessage } from '../core/strict.ts';
import { cronSlots, parseCron } from '../core/cron.ts';
import { enqueue } from '../core/jobs.ts';
import { capabilities, payloadSchemas } from './capabilities/index.ts';
import { findEntity } from './entities.ts';
import { substrateRuleFire } from './jobs.ts';
import { LOGIC_ROW_QUERY_MAX_MS, LOGIC_ROW_QUERY_MAX_OPERATIONS, LogicBudget, LogicBudgetExceeded, logicHolds } from './logic.ts';
import { decide, type PrincipleRow } from './policy.ts';
import { MissingVariable, renderTemplate, unknownVar, type RuleBody, type ROW_SOURCES } from './rule-body.ts';
import { firingView, type FiringProposal, type FiringRow, type FiringView, type RuleRow } from './rule-rows.ts';
import type { SubstrateService } from './service.ts';
import type { SubstrateActor, Verdict } from './types.ts';
import { newId } from './ids.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Bindings one fire (or preview) yields at most. */
export const BINDINGS_MAX = 100;
/**
 * What names a binding in its proposal's idempotency key: a row's id (row_query), so that a retry of the slot after
 * rows changed still matches each row to its own earlier proposal; the position for the snapshot (there is one).
 */
function bindingKey(binding: unknown, index: number): string {
  const rowId = (binding as { id?: unknown } | null)?.id;
  return typeof rowId === 'string' && rowId !== '' ? rowId : String(index);
}

/** Rows a row_query evaluates at most per fire. */
export const ROW_SCAN_MAX = 5000;
/**
 * Evaluation time after which a row_query lets the event loop run before its next row: its budget
 * (LOGIC_ROW_QUERY_MAX_MS) is several times what one stretch of the event loop may take.
 */
const ROW_YIELD_MS = 10;
/** Firings kept per rule (older ones are deleted as new ones are written). */
export const FIRINGS_KEPT = 500;
const SAMPLE_MAX = 10;
/** A binding stored in a firing larger than this is replaced by { id, omitted: true, bytes }. */
const STORED_BINDING_MAX_BYTES = 4096;
/** The dispatcher catches up at most this many slots per rule, from at most this far back. */
const CATCH_UP_SLOTS = 60;
const CATCH_UP_MS = 60 * 60_000;

const TABLES: Record<(typeof ROW_SOURCES)[number], string> = {
  decisions: 'substrate_decisions',
  commitments: 'substrate_commitments',
  learnings: 'substrate_learnings',
  entities: 'substrate_entities',
};

export interface PreviewResult {
  bindings_count: number;
  sample_proposals: Array<{
    binding: unknown;
    rendered_payload: Record<string, unknown> | null;
    would_require_approval: boolean | null;
    /** What policy would decide (our addition); null when the binding fails. */
    verdict: Verdict | null;
    /** Why this binding would not be proposed (missing variable, invalid payload); absent when it would be. */
    error?: string;
  }>;
  skip_reason: string | null;
}

interface Evaluation {
  bindings: unknown[];
  skip_reason: string | null;
}

/** One slot of one rule being fired: the rule, the agent that proposes for it, the slot, its UTC day, and the outcome so far. */
interface Firing {
  rule: RuleRow & { account_id: string };
  actor: SubstrateActor;
  slotIso: string;
  day: string;
  proposals: FiringProposal[];
  skipped: Array<{ binding_index: number; reason: string }>;
}

function storedBinding(b: unknown): unknown {
  const bytes = Buffer.byteLength(JSON.stringify(b ?? null));
  if (bytes <= STORED_BINDING_MAX_BYTES) return b;
  const bid = b && typeof b === 'object' ? (b as Record<string, unknown>).id ?? null : null;
  return { id: bid, omitted: true, bytes };
}

/** The dispatcher and firing of every user's rules, and the dry run of one rule body. */
export class RuleEngine {
  readonly #db: Kysely<ControlDatabase>;
  readonly #service: SubstrateService;

  constructor(db: Kysely<ControlDatabase>, service: SubstrateService) {
    this.#db = db;
    this.#service = service;
  }

  /** A dry run of a rule body: its bindings now, and for the first few the payload and what policy would decide. Never writes. */
  async preview(userId: string, body: Omit<RuleBody, 'name'> & { name?: string | undefined }): Promise<PreviewResult> {
    const evaluation = await evaluate(this.#db, userId, body);
    if (evaluation.skip_reason) return { bindings_count: 0, sample_proposals: [], skip_reason: evaluation.skip_reason };
    const capability = capabilities.get(body.action_capability)!;
    const state = await policyState(this.#db, userId);
    const samples: PreviewResult['sample_proposals'] = [];
    for (const binding of evaluation.bindings.slice(0, SAMPLE_MAX)) {
      // Each sample's principles may take up to LOGIC_MAX_MS: the event loop runs between them.
      if (samples.length) await yieldToLoop();
      let rendered: Record<string, unknown>;
      try {
        rendered = renderTemplate(body.action_payload_template, binding) as Record<string, unknown>;
      } catch (err) {
        if (!(err instanceof MissingVariable)) throw err;
        samples.push({ binding, rendered_payload: null, would_require_approval: null, verdict: null, error: err.message });
        continue;
      }
      const parsed = payloadSchemas.get(capability.name)!.safeParse({ payload: rendered }, { error: unknownKeysMessage });
      if (!parsed.success) {
        const first = parsed.error.issues[0]!;
        samples.push({ binding, rendered_payload: rendered, would_require_approval: null, verdict: null, error: `invalid payload: ${first.path.slice(1).join('.') || 'payload'}: ${first.message}` });
        continue;
      }
      const payload = (parsed.data as { payload: Record<string, unknown> }).payload;
      const entityType = state.principles.some((p) => p.applies_to.entity_types?.length) ? await entityTypeOf(this.#db, userId, payload) : null;
      const verdict = decide({ capability, payload, proposer: 'agent', yolo: state.yolo, skipApproval: false, principles: state.principles, entityType });
      samples.push({ binding, rendered_payload: rendered, would_require_approval: verdict.result === 'requires_approval', verdict });
    }
    return { bindings_count: evaluation.bindings.length, sample_proposals: samples, skip_reason: null };
  }

  /**
   * The per-minute tick: for each enabled rule, the slots after its cursor up to `now` (at most the last hour) become
   * substrate_rule_fire jobs with the job key `rule:<rule id>:<slot>`, and the cursor advances, in one transaction
   * with the rows claimed SKIP LOCKED: concurrent ticks on several workers, or a restart, never enqueue a slot twice.
   */
  async dispatch(now: Date): Promise<{ rules: number; enqueued: number }> {
    return this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<Pick<RuleRow, 'id' | 'trigger_cron' | 'cron_cursor'>>`
        select id, trigger_cron, cron_cursor from substrate_attention_rules
        where enabled and cron_cursor < ${now}
        for update skip locked`.execute(tx);
      let enqueued = 0;
      for (const row of rows) {
        const after = new Date(Math.max(row.cron_cursor.getTime(), now.getTime() - CATCH_UP_MS));
        let slots: Date[] = [];
        try {
          slots = cronSlots(parseCron(row.trigger_cron), after, now, CATCH_UP_SLOTS);
        } catch {
          // Validated on write; a schedule that no longer parses fires nothing.
        }
        for (const slot of slots) {
          const at = slot.toISOString();
          await enqueue(tx, substrateRuleFire, { rule_id: row.id, slot: at }, { jobKey: `rule:${row.id}:${at}`, jobKeyMode: 'preserve_run_at' });
          enqueued++;
        }
        await sql`update substrate_attention_rules set cron_cursor = ${now} where id = ${row.id}`.execute(tx);
      }
      return { rules: rows.length, enqueued };
    });
  }

  /**
   * One slot of one rule: each binding's payload proposed as an agent with source_rule_id and the idempotency key
   * `rule:<rule id>:<slot>:<binding index>` (a rerun replays, never proposes twice), new proposals reserved one at a
   * time against max_fires_per_day for the slot's UTC day; the firing row records it all. A rule that is gone or
   * disabled fires nothing.
   */
  async fire(ruleId: string, slot: string): Promise<FiringView | undefined> {
    const rule = (
      await sql<RuleRow & { account_id: string }>`
        select r.*, u.account_id from substrate_attention_rules r join substrate_users u on u.id = r.user_id where r.id = ${ruleId}`.execute(this.#db)
    ).rows[0];
    if (!rule || !rule.enabled) return undefined;
    const slotIso = new Date(slot).toISOString();
    const actor: SubstrateActor = { accountId: rule.account_id, userId: rule.user_id, proposer: 'agent', sourceAppId: null, sourceRuleId: rule.id };
    const firing: Firing = { rule, actor, slotIso, day: slotIso.slice(0, 10), proposals: [], skipped: [] };
    // rules.ts stored the condition from a validated RuleBody.
    const evaluation = await evaluate(this.#db, rule.user_id, { condition_mode: rule.condition_mode, condition: rule.condition as RuleBody['condition'] });
    for (const [i, binding] of evaluation.bindings.entries()) await this.#fireBinding(firing, i, binding);
    return this.#record(firing, evaluation);
  }

  /** One binding of a slot: rendered, reserved against the daily cap when new, proposed; recorded in the firing. */
  async #fireBinding(firing: Firing, i: number, binding: unknown): Promise<void> {
    const { rule, actor, slotIso, day, proposals, skipped } = firing;
    let payload: Record<string, unknown>;
    try {
      payload = renderTemplate(rule.action_payload_template, binding) as Record<string, unknown>;
    } catch (err) {
      if (!(err instanceof MissingVariable)) throw err;
      skipped.push({ binding_index: i, reason: err.message });
      return;
    }
    const key = `rule:${rule.id}:${slotIso}:${bindingKey(binding, i)}`;
    const seen = await sql`select 1 from substrate_actions where user_id = ${rule.user_id} and idempotency_key = ${key}`.execute(this.#db);
    const reserved = seen.rows.length === 0;
    if (reserved && !(await this.#reserve(rule.id, day, rule.max_fires_per_day))) {
      skipped.push({ binding_index: i, reason: `max_fires_per_day (${rule.max_fires_per_day}) reached for ${day}` });
      return;
    }
    try {
      const out = await this.#service.propose(actor, { capability: rule.action_capability, payload, idempotency_key: key });
      if (reserved && out.replay) await this.#release(rule.id, day);
      proposals.push({
        binding_index: i,
        action_id: out.action_id,
        verdict: out.verdict.result,
        requires_approval: out.requires_approval,
        ...(out.replay ? { replay: true as const } : {}),
      });
    } catch (err) {
      if (reserved) await this.#release(rule.id, day);
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      skipped.push({ binding_index: i, reason: `${err.code}: ${err.message}`.slice(0, 1000) });
    }
  }

  /** The firing row of the slot (a rerun overwrites it), then the firings and daily usage past keeping are deleted. */
  async #record(firing: Firing, evaluation: Evaluation): Promise<FiringView> {
    const { rule, slotIso, day, proposals, skipped } = firing;
    const { rows } = await sql<FiringRow>`
      insert into substrate_attention_rule_firings (id, rule_id, user_id, slot, bindings_count, bindings, proposals, skipped, skip_reason)
      values (${newId('frg')}, ${rule.id}, ${rule.user_id}, ${slotIso}, ${evaluation.bindings.length}, ${JSON.stringify(evaluation.bindings.map(storedBinding))}::jsonb,
              ${JSON.stringify(proposals)}::jsonb, ${JSON.stringify(skipped)}::jsonb, ${evaluation.skip_reason})
      on conflict (rule_id, slot) do update set bindings_count = excluded.bindings_count, bindings = excluded.bindings, proposals = excluded.proposals,
        skipped = excluded.skipped, skip_reason = excluded.skip_reason, updated_at = date_trunc('milliseconds', now())
      returning *`.execute(this.#db);
    await sql`
      delete from substrate_attention_rule_firings where rule_id = ${rule.id} and slot < (
        select slot from substrate_attention_rule_firings where rule_id = ${rule.id} order by slot desc offset ${FIRINGS_KEPT - 1} limit 1)`.execute(this.#db);
    await sql`delete from substrate_attention_rule_usage where rule_id = ${rule.id} and day < ${day}::date - 2`.execute(this.#db);
    return firingView(rows[0]!);
  }

  /** One more proposal of the rule on that day, unless the cap is reached. */
  async #reserve(ruleId: string, day: string, max: number): Promise<boolean> {
    const { rows } = await sql`
      insert into substrate_attention_rule_usage (rule_id, day, proposals) values (${ruleId}, ${day}::date, 1)
      on conflict (rule_id, day) do update set proposals = substrate_attention_rule_usage.proposals + 1
      where substrate_attention_rule_usage.proposals < ${max}
      returning proposals`.execute(this.#db);
    return rows.length > 0;
  }

  async #release(ruleId: string, day: string): Promise<void> {
    await sql`update substrate_attention_rule_usage set proposals = greatest(proposals - 1, 0) where rule_id = ${ruleId} and day = ${day}::date`.execute(this.#db);
  }
}

/** The bindings of a condition now: the latest snapshot's, or the matching rows'; skip_reason when there are none to take. */
async function evaluate(db: Kysely<ControlDatabase>, userId: string, rule: Pick<RuleBody, 'condition_mode' | 'condition'>): Promise<Evaluation> {
  return rule.condition_mode === 'snapshot_predicate' ? evaluateSnapshot(db, userId, rule.condition) : evaluateRows(db, userId, rule.condition);
}

async function evaluateSnapshot(db: Kysely<ControlDatabase>, userId: string, condition: Record<string, unknown>): Promise<Evaluation> {
  const snapshot = (
    await sql<Record<string, unknown>>`
      select snapshot_date::text as snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count, artifact_count,
        open_commitment_count, action_count, pending_approval_count, to_char(taken_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as taken_at
      from substrate_snapshots where user_id = ${userId} order by snapshot_date desc limit 1`.execute(db)
  ).rows[0];
  if (!snapshot) return { bindings: [], skip_reason: 'no snapshot: the user has no daily snapshot yet (GET snapshots takes one)' };
  const unknown = unknownVar(condition, Object.keys(snapshot));
  if (unknown) return { bindings: [], skip_reason: `the condition could not be evaluated: the snapshot has no field '${unknown}'; fields: ${Object.keys(snapshot).join(', ')}` };
  try {
    return { bindings: logicHolds(condition, snapshot) ? [snapshot] : [], skip_reason: null };
  } catch (err) {
    return { bindings: [], skip_reason: `the condition could not be evaluated: ${(err as Error).message}`.slice(0, 500) };
  }
}

async function evaluateRows(db: Kysely<ControlDatabase>, userId: string, condition: Record<string, unknown>): Promise<Evaluation> {
  const from = condition.from as (typeof ROW_SOURCES)[number];
  const table = TABLES[from];
  if (!table) return { bindings: [], skip_reason: `the condition could not be evaluated: unknown row source '${String(from).slice(0, 50)}'` };
  const where = condition.where ?? true;
  const bindings: unknown[] = [];
  // One budget for all the rows: a costly `where` times 5,000 rows is what must stay bounded.
  const budget = new LogicBudget({ operations: LOGIC_ROW_QUERY_MAX_OPERATIONS, ms: LOGIC_ROW_QUERY_MAX_MS });
  let yieldedAt = 0;
  let scanned = 0;
  let after: { created_at: string; id: string } | null = null;
  while (scanned < ROW_SCAN_MAX && bindings.length < BINDINGS_MAX) {
    const { rows } = await sql<{ row: Record<string, unknown>; k_at: string; k_id: string }>`
      select to_jsonb(t) - 'user_id' - 'tsv' as row, t.created_at::text as k_at, t.id as k_id from ${sql.table(table)} t
      where t.user_id = ${userId} ${after ? sql`and (t.created_at, t.id) > (${after.created_at}::timestamptz, ${after.id})` : sql``}
      order by t.created_at, t.id limit 500`.execute(db);
    if (rows.length === 0) break;
    for (const r of rows) {
      if (++scanned > ROW_SCAN_MAX || bindings.length >= BINDINGS_MAX) break;
      const row = isoTimestamps(r.row);
      const unknown = scanned === 1 ? unknownVar(where, Object.keys(row)) : undefined;
      if (unknown) return { bindings: [], skip_reason: `the condition could not be evaluated: ${from} rows have no field '${unknown}'; fields: ${Object.keys(row).join(', ')}` };
      try {
        if (logicHolds(where, row, budget)) bindings.push(row);
      } catch (err) {
        if (err instanceof LogicBudgetExceeded) {
          return { bindings: [], skip_reason: `the condition could not be evaluated over the ${from} rows (one budget for all of them): ${err.message}` };
        }
        return { bindings: [], skip_reason: `the condition could not be evaluated on ${String(row.id)}: ${(err as Error).message}`.slice(0, 500) };
      }
      if (budget.ms - yieldedAt >= ROW_YIELD_MS) {
        await yieldToLoop();
        yieldedAt = budget.ms;
      }
    }
    after = { created_at: rows.at(-1)!.k_at, id: rows.at(-1)!.k_id };
    if (rows.length < 500) break;
  }
  return { bindings, skip_reason: null };
}

/** Postgres' JSON timestamps ("2031-05-05T10:00:00.123+00:00") as the API's ISO strings ("...Z"). */
function isoTimestamps(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const k of ['created_at', 'updated_at', 'due_at']) {
    const v = out[k];
    if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) out[k] = new Date(v).toISOString();
  }
  return out;
}

async function policyState(db: Kysely<ControlDatabase>, userId: string): Promise<{ yolo: boolean; principles: PrincipleRow[] }> {
  const row = (
    await sql<{ yolo_mode: boolean; principles: PrincipleRow[] }>`
      select u.yolo_mode, coalesce((select json_agg(json_build_object('id', p.id, 'title', p.title, 'applies_to', p.applies_to, 'constraint_spec', p.constraint_spec))
                                    from substrate_principles p where p.user_id = u.id and p.status = 'active'), '[]') as principles
      from substrate_users u where u.id = ${userId}`.execute(db)
  ).rows[0];
  return { yolo: row?.yolo_mode ?? false, principles: row?.principles ?? [] };
}

/** As the ledger's policy sees it: payload.type, else the type of the entity named by id or loser_id. */
async function entityTypeOf(db: Kysely<ControlDatabase>, userId: string, payload: Record<string, unknown>): Promise<string | null> {
  if (typeof payload.type === 'string') return payload.type;
  const eid = typeof payload.id === 'string' ? payload.id : typeof payload.loser_id === 'string' ? payload.loser_id : null;
  if (!eid?.startsWith('ent_')) return null;
  return (await findEntity(db, userId, eid))?.type ?? null;
}
