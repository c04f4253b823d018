// An attention rule's body: its schema, the checks across its fields, and the rendering of its payload template.
// Placeholders: `{{path}}` in any string of the template, a dotted path into the binding (`{{attrs.owner}}`,
// `{{title}}`). A string that is only a placeholder takes the value with its JSON type; inside text it is the value
// as text (objects as JSON, null as empty). A path that does not resolve fails that binding (recorded, not proposed).
import { z } from 'zod';
import { CronError, parseCron } from '../core/cron.ts';
import { capabilities } from './capabilities/index.ts';
import { logicProblem } from './capabilities/principles.ts';

export const CONDITION_MODES = ['snapshot_predicate', 'row_query'] as const;
export const ROW_SOURCES = ['decisions', 'commitments', 'learnings', 'entities'] as const;
export const MAX_FIRES_DEFAULT = 100;
const TEMPLATE_MAX_BYTES = 16 * 1024;

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{([^{}]*)\}\}$/;
const PATH = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

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

/** Why one binding yields no payload: a placeholder that does not resolve, or a payload over RENDERED_MAX_BYTES. */
export class MissingVariable extends Error {}

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
