// Attention rules: a substrate user's scheduled proposals. A rule names a 5-field UTC cron, a JSON-Logic condition and
// a capability with a payload template; when a slot of its cron fires, every binding the condition yields is rendered
// into a payload and proposed through the ledger as an agent (source_rule_id set), within max_fires_per_day.
//
// Bindings:
// - `snapshot_predicate`: `condition` is JSON-Logic over the user's latest daily snapshot (the GET snapshots row:
//   snapshot_date, entity_count, ..., pending_approval_count, taken_at). True: one binding, the snapshot. No snapshot
//   yet: skipped ("no snapshot").
// - `row_query`: `condition` is `{ "from": "decisions" | "commitments" | "learnings" | "entities", "where": <JSON-Logic
//   over one row> }` (`where` omitted: every row). Rows are the table's columns as JSON (ids, text, status, attrs,
//   ISO timestamps; user_id and search vectors left out), read oldest first (created_at, id), at most ROW_SCAN_MAX;
//   each matching row is a binding, at most BINDINGS_MAX per fire.
// Placeholders: `{{path}}` in any string of the template, a dotted path into the binding (`{{attrs.owner}}`,
// `{{title}}`). A string that is only a placeholder takes the value with its JSON type; inside text it is the value
// as text (objects as JSON, null as empty). A path that does not resolve fails that binding (recorded, not proposed).
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import { AppError, errors } from '../core/errors.ts';
import { unknownKeysMessage } from '../core/strict.ts';
import { CronError, cronNext, cronSlots, parseCron } from '../core/cron.ts';
import { capabilities, payloadSchemas } from './capabilities/index.ts';
import { logicProblem } from './capabilities/principles.ts';
import { findEntity } from './entities.ts';
import { LOGIC_ROW_QUERY_MAX_MS, LOGIC_ROW_QUERY_MAX_OPERATIONS, LogicBudget, LogicBudgetExceeded, logicHolds } from './logic.ts';
import { decide, type PrincipleRow } from './policy.ts';
import type { SubstrateService } from './service.ts';
import type { SubstrateActor, Verdict } from './types.ts';
import { enqueue } from '../core/jobs.ts';
import { substrateRuleFire } from './jobs.ts';

export const CONDITION_MODES = ['snapshot_predicate', 'row_query'] as const;
export const ROW_SOURCES = ['decisions', 'commitments', 'learnings', 'entities'] as const;
/** Bindings one fire (or preview) yields at most. */
export const BINDINGS_MAX = 100;
/**
 * What names a binding in its proposal's idempotency key: a row's id (row_query), so that a retry of the slot after
 * rows changed still matches each row to its own earlier proposal; the position for the snapshot (there is one).
 */
function bindingKey(binding: unknown, index: number): string {
  const id = (binding as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id !== '' ? id : String(index);
}

/** Rows a row_query evaluates at most per fire. */
export const ROW_SCAN_MAX = 5000;
/**
 * Evaluation time after which a row_query lets the event loop run before its next row: its budget
 * (LOGIC_ROW_QUERY_MAX_MS) is several times what one stretch of the event loop may take.
 */
const ROW_YIELD_MS = 10;
/** Rules per substrate user. */
export const RULES_PER_USER_MAX = 200;
/** Firings kept per rule (older ones are deleted as new ones are written). */
export const FIRINGS_KEPT = 500;
export const MAX_FIRES_DEFAULT = 100;
const SAMPLE_MAX = 10;
/** A binding stored in a firing larger than this is replaced by { id, omitted: true, bytes }. */
const STORED_BINDING_MAX_BYTES = 4096;
const TEMPLATE_MAX_BYTES = 16 * 1024;
/** The dispatcher catches up at most this many slots per rule, from at most this far back. */
const CATCH_UP_SLOTS = 60;
const CATCH_UP_MS = 60 * 60_000;

const TABLES: Record<(typeof ROW_SOURCES)[number], string> = {
  decisions: 'substrate_decisions',
  commitments: 'substrate_commitments',
  learnings: 'substrate_learnings',
  entities: 'substrate_entities',
};

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{([^{}]*)\}\}$/;
const PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

const Logic = z.unknown().superRefine((v, ctx) => {
  const problem = logicProblem(v);
  if (problem) ctx.addIssue({ code: 'custom', message: `not an allowed JSON-Logic expression: ${problem}` });
});

/** The rule body fields (create, update, preview); the cross-field checks are in refineBody. */
export const ruleShape = {
  name: z.string().min(1).max(200).describe('Display name'),
  description: z.string().max(2000).nullable().optional(),
  trigger_cron: z.string().min(1).max(200).describe('5-field cron (minute hour day-of-month month day-of-week), UTC, e.g. "0 9 * * 1-5"'),
  condition_mode: z.enum(CONDITION_MODES),
  condition: z
    .record(z.string(), z.unknown())
    .describe('snapshot_predicate: JSON-Logic over the latest snapshot; row_query: { from: decisions|commitments|learnings|entities, where?: JSON-Logic over a row }'),
  action_capability: z.string().min(1).max(100).describe('The capability proposed for each binding'),
  action_payload_template: z.record(z.string(), z.unknown()).describe('The payload, with {{path}} placeholders filled from the binding'),
  enabled: z.boolean().optional().describe('Default true'),
  max_fires_per_day: z.number().int().min(1).max(10_000).optional().describe(`Proposals per UTC day at most (default ${MAX_FIRES_DEFAULT})`),
};

export interface RuleBody {
  name: string;
  description?: string | null | undefined;
  trigger_cron: string;
  condition_mode: (typeof CONDITION_MODES)[number];
  condition: Record<string, unknown>;
  action_capability: string;
  action_payload_template: Record<string, unknown>;
  enabled?: boolean | undefined;
  max_fires_per_day?: number | undefined;
}

/** The checks that need more than one field or more than a type: cron, condition per mode, capability, template. */
export function refineBody(body: Partial<RuleBody>, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (typeof body.trigger_cron === 'string') {
    try {
      parseCron(body.trigger_cron);
    } catch (err) {
      if (!(err instanceof CronError)) throw err;
      issue(['trigger_cron'], `not a 5-field UTC cron expression: ${err.message}`);
    }
  }
  const cond = body.condition;
  if (cond && body.condition_mode === 'snapshot_predicate') {
    const problem = logicProblem(cond);
    if (problem) issue(['condition'], `not an allowed JSON-Logic expression: ${problem}`);
  } else if (cond && body.condition_mode === 'row_query') {
    const extra = Object.keys(cond).filter((k) => k !== 'from' && k !== 'where');
    if (extra.length) issue(['condition', extra[0]!], `a row_query condition is { from, where }; '${extra[0]!.slice(0, 50)}' is not allowed`);
    if (!ROW_SOURCES.includes(cond.from as never)) issue(['condition', 'from'], `must be one of ${ROW_SOURCES.join(', ')}`);
    const problem = logicProblem(cond.where);
    if (problem) issue(['condition', 'where'], `not an allowed JSON-Logic expression: ${problem}`);
  }
  const capability = typeof body.action_capability === 'string' ? capabilities.get(body.action_capability) : undefined;
  if (typeof body.action_capability === 'string' && !capability) {
    issue(['action_capability'], `not a capability; known: ${[...capabilities.keys()].join(', ')}`);
  }
  const template = body.action_payload_template;
  if (template) {
    if (Buffer.byteLength(JSON.stringify(template)) > TEMPLATE_MAX_BYTES) issue(['action_payload_template'], `at most ${TEMPLATE_MAX_BYTES} bytes of JSON`);
    const bad = badPlaceholder(template);
    if (bad) issue(['action_payload_template', ...bad.path], `placeholder '{{${bad.inner.slice(0, 100)}}}' is not a dotted path (letters, digits, _ and -)`);
    const shape = (capability?.payload as unknown as { shape?: Record<string, unknown> } | undefined)?.shape;
    if (shape) {
      const unknown = Object.keys(template).find((k) => !(k in shape));
      if (unknown) issue(['action_payload_template', unknown], `not a field of ${capability!.name}'s payload; fields: ${Object.keys(shape).join(', ')}`);
    }
  }
}

function badPlaceholder(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; inner: string } | undefined {
  if (typeof value === 'string') {
    for (const m of value.matchAll(PLACEHOLDER)) if (!PATH.test(m[1]!.trim())) return { path, inner: m[1]! };
    return undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const bad = badPlaceholder(v, [...path, i]);
      if (bad) return bad;
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const bad = badPlaceholder(v, [...path, k]);
      if (bad) return bad;
    }
  }
  return undefined;
}

class MissingVariable extends Error {}

function resolve(binding: unknown, path: string): unknown {
  let at: unknown = binding;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** What one rendered payload may weigh as JSON: a rule must not multiply large rows into huge proposals. */
export const RENDERED_MAX_BYTES = 256 * 1024;

/**
 * The template with its placeholders filled from the binding; throws MissingVariable naming the first unresolved one,
 * or when the result would exceed RENDERED_MAX_BYTES (which fails that binding, as a missing variable does).
 */
export function renderTemplate(template: unknown, binding: unknown): unknown {
  const budget = { left: RENDERED_MAX_BYTES };
  const out = renderWithin(template, binding, budget);
  if (Buffer.byteLength(JSON.stringify(out) ?? '') > RENDERED_MAX_BYTES) throw new MissingVariable(`the rendered payload exceeds ${RENDERED_MAX_BYTES} bytes`);
  return out;
}

function charge(budget: { left: number }, value: unknown): void {
  budget.left -= typeof value === 'string' ? value.length : (JSON.stringify(value)?.length ?? 0);
  if (budget.left < 0) throw new MissingVariable(`the rendered payload exceeds ${RENDERED_MAX_BYTES} bytes`);
}

function renderWithin(template: unknown, binding: unknown, budget: { left: number }): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE_PLACEHOLDER.exec(template);
    if (whole) {
      const v = resolve(binding, whole[1]!.trim());
      if (v === undefined) throw new MissingVariable(`missing variable '${whole[1]!.trim()}'`);
      charge(budget, v);
      return v;
    }
    return template.replace(PLACEHOLDER, (_m, inner: string) => {
      const v = resolve(binding, inner.trim());
      if (v === undefined) throw new MissingVariable(`missing variable '${inner.trim()}'`);
      const text = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      charge(budget, text);
      return text;
    });
  }
  if (Array.isArray(template)) return template.map((t) => renderWithin(t, binding, budget));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderWithin(v, binding, budget)]));
  return template;
}

interface RuleRow {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  trigger_cron: string;
  condition_mode: RuleBody['condition_mode'];
  condition: Record<string, unknown>;
  action_capability: string;
  action_payload_template: Record<string, unknown>;
  enabled: boolean;
  max_fires_per_day: number;
  created_at: Date;
  updated_at: Date;
}

export interface RuleView {
  rule_id: string;
  name: string;
  description: string | null;
  trigger_cron: string;
  condition_mode: RuleBody['condition_mode'];
  condition: Record<string, unknown>;
  action_capability: string;
  action_payload_template: Record<string, unknown>;
  enabled: boolean;
  max_fires_per_day: number;
  /** The next slot (UTC) when enabled; null when disabled. */
  next_fire_at: string | null;
  created_at: string;
  updated_at: string;
}

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

function id(prefix: 'rul' | 'frg'): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let out = '';
  for (const b of randomBytes(20)) out += alphabet[b & 31];
  return `${prefix}_${out}`;
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
    condition: r.condition,
    action_capability: r.action_capability,
    action_payload_template: r.action_payload_template,
    enabled: r.enabled,
    max_fires_per_day: r.max_fires_per_day,
    next_fire_at: nextFire(r),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

const ruleNotFound = (ruleId: string) => errors.notFound(`Attention rule '${ruleId.slice(0, 100)}'`, 'List the rules with GET /v1/me/substrate/attention-rules.');

function storedBinding(b: unknown): unknown {
  const bytes = Buffer.byteLength(JSON.stringify(b ?? null));
  if (bytes <= STORED_BINDING_MAX_BYTES) return b;
  const bid = b && typeof b === 'object' ? (b as Record<string, unknown>).id ?? null : null;
  return { id: bid, omitted: true, bytes };
}

/** Rules of one substrate user (CRUD, preview, firings), and the dispatcher and firing of every user's rules. */
export class SubstrateRules {
  readonly #db: Kysely<any>;
  readonly #service: SubstrateService;

  constructor(db: Kysely<any>, service: SubstrateService) {
    this.#db = db;
    this.#service = service;
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
        values (${id('rul')}, ${userId}, ${body.name}, ${body.description ?? null}, ${body.trigger_cron}, ${body.condition_mode},
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

  /** Newest slot first. */
  async firings(userId: string, ruleId: string, limit: number): Promise<{ firings: FiringView[] }> {
    await this.#row(this.#db, userId, ruleId);
    const { rows } = await sql<any>`
      select * from substrate_attention_rule_firings where rule_id = ${ruleId} and user_id = ${userId}
      order by slot desc, created_at desc limit ${limit}`.execute(this.#db);
    return {
      firings: rows.map(firingView),
    };
  }

  /** A dry run of a rule body: its bindings now, and for the first few the payload and what policy would decide. Never writes. */
  async preview(userId: string, body: Omit<RuleBody, 'name'> & { name?: string | undefined }): Promise<PreviewResult> {
    const evaluation = await this.#evaluate(this.#db, userId, body);
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
      const { rows } = await sql<{ id: string; trigger_cron: string; cron_cursor: Date }>`
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
    const day = slotIso.slice(0, 10);
    const actor: SubstrateActor = { accountId: rule.account_id, userId: rule.user_id, proposer: 'agent', sourceAppId: null, sourceRuleId: rule.id };
    const evaluation = await this.#evaluate(this.#db, rule.user_id, rule);
    const proposals: FiringProposal[] = [];
    const skipped: Array<{ binding_index: number; reason: string }> = [];
    for (const [i, binding] of evaluation.bindings.entries()) {
      let payload: Record<string, unknown>;
      try {
        payload = renderTemplate(rule.action_payload_template, binding) as Record<string, unknown>;
      } catch (err) {
        if (!(err instanceof MissingVariable)) throw err;
        skipped.push({ binding_index: i, reason: err.message });
        continue;
      }
      const key = `rule:${rule.id}:${slotIso}:${bindingKey(binding, i)}`;
      const seen = await sql`select 1 from substrate_actions where user_id = ${rule.user_id} and idempotency_key = ${key}`.execute(this.#db);
      const reserved = seen.rows.length === 0;
      if (reserved && !(await this.#reserve(rule.id, day, rule.max_fires_per_day))) {
        skipped.push({ binding_index: i, reason: `max_fires_per_day (${rule.max_fires_per_day}) reached for ${day}` });
        continue;
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
    const { rows } = await sql<any>`
      insert into substrate_attention_rule_firings (id, rule_id, user_id, slot, bindings_count, bindings, proposals, skipped, skip_reason)
      values (${id('frg')}, ${rule.id}, ${rule.user_id}, ${slotIso}, ${evaluation.bindings.length}, ${JSON.stringify(evaluation.bindings.map(storedBinding))}::jsonb,
              ${JSON.stringify(proposals)}::jsonb, ${JSON.stringify(skipped)}::jsonb, ${evaluation.skip_reason})
      on conflict (rule_id, slot) do update set bindings_count = excluded.bindings_count, bindings = excluded.bindings, proposals = excluded.proposals,
        skipped = excluded.skipped, skip_reason = excluded.skip_reason, updated_at = date_trunc('milliseconds', now())
      returning *`.execute(this.#db);
    await sql`
      delete from substrate_attention_rule_firings where rule_id = ${rule.id} and slot < (
        select slot from substrate_attention_rule_firings where rule_id = ${rule.id} order by slot desc offset ${FIRINGS_KEPT - 1} limit 1)`.execute(this.#db);
    await sql`delete from substrate_attention_rule_usage where rule_id = ${rule.id} and day < ${day}::date - 2`.execute(this.#db);
    return firingView(rows[0]);
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

  async #evaluate(db: Kysely<any>, userId: string, rule: Pick<RuleBody, 'condition_mode' | 'condition'>): Promise<Evaluation> {
    if (rule.condition_mode === 'snapshot_predicate') {
      const snapshot = (
        await sql<Record<string, unknown>>`
          select snapshot_date::text as snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count, artifact_count,
            open_commitment_count, action_count, pending_approval_count, to_char(taken_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as taken_at
          from substrate_snapshots where user_id = ${userId} order by snapshot_date desc limit 1`.execute(db)
      ).rows[0];
      if (!snapshot) return { bindings: [], skip_reason: 'no snapshot: the user has no daily snapshot yet (GET snapshots takes one)' };
      const unknown = unknownVar(rule.condition, Object.keys(snapshot));
      if (unknown) return { bindings: [], skip_reason: `the condition could not be evaluated: the snapshot has no field '${unknown}'; fields: ${Object.keys(snapshot).join(', ')}` };
      try {
        return { bindings: logicHolds(rule.condition, snapshot) ? [snapshot] : [], skip_reason: null };
      } catch (err) {
        return { bindings: [], skip_reason: `the condition could not be evaluated: ${(err as Error).message}`.slice(0, 500) };
      }
    }
    const from = rule.condition.from as (typeof ROW_SOURCES)[number];
    const table = TABLES[from];
    if (!table) return { bindings: [], skip_reason: `the condition could not be evaluated: unknown row source '${String(from).slice(0, 50)}'` };
    const where = rule.condition.where ?? true;
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

  async #row(db: Kysely<any>, userId: string, ruleId: string): Promise<RuleRow> {
    const row = (await sql<RuleRow>`select * from substrate_attention_rules where id = ${ruleId} and user_id = ${userId}`.execute(db)).rows[0];
    if (!row) throw ruleNotFound(ruleId);
    return row;
  }
}

/**
 * The first `var` whose top-level name is not a field of the data (and has no default), or undefined. The bodies of
 * all/some/none are not checked: their vars name the array's elements.
 */
export function unknownVar(logic: unknown, fields: readonly string[]): string | undefined {
  const pending: unknown[] = [logic];
  while (pending.length) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    else if (node && typeof node === 'object') {
      const [op, arg] = Object.entries(node)[0] ?? [];
      if (op === 'var') {
        const args = Array.isArray(arg) ? arg : [arg];
        const name = args[0];
        if (typeof name === 'string' && name !== '' && args.length < 2 && !fields.includes(name.split('.')[0]!)) return name.slice(0, 100);
      } else if (op === 'all' || op === 'some' || op === 'none') {
        pending.push(Array.isArray(arg) ? arg[0] : arg);
      } else pending.push(arg);
    }
  }
  return undefined;
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

async function policyState(db: Kysely<any>, userId: string): Promise<{ yolo: boolean; principles: PrincipleRow[] }> {
  const row = (
    await sql<{ yolo_mode: boolean; principles: PrincipleRow[] }>`
      select u.yolo_mode, coalesce((select json_agg(json_build_object('id', p.id, 'title', p.title, 'applies_to', p.applies_to, 'constraint_spec', p.constraint_spec))
                                    from substrate_principles p where p.user_id = u.id and p.status = 'active'), '[]') as principles
      from substrate_users u where u.id = ${userId}`.execute(db)
  ).rows[0];
  return { yolo: row?.yolo_mode ?? false, principles: row?.principles ?? [] };
}

/** As the ledger's policy sees it: payload.type, else the type of the entity named by id or loser_id. */
async function entityTypeOf(db: Kysely<any>, userId: string, payload: Record<string, unknown>): Promise<string | null> {
  if (typeof payload.type === 'string') return payload.type;
  const eid = typeof payload.id === 'string' ? payload.id : typeof payload.loser_id === 'string' ? payload.loser_id : null;
  if (!eid?.startsWith('ent_')) return null;
  return (await findEntity(db, userId, eid))?.type ?? null;
}

/** A firing row as the API returns it. */
function firingView(r: any): FiringView {
  return {
    firing_id: r.id,
    rule_id: r.rule_id,
    slot: r.slot.toISOString(),
    bindings_count: r.bindings_count,
    bindings: r.bindings,
    proposals: r.proposals,
    skipped: r.skipped,
    skip_reason: r.skip_reason,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

