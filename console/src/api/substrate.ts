// The substrate tabs' calls: the signed-in person's own substrate (/v1/me/substrate/*, the session is that person),
// ledger, memory, entities, attention rules and the outbox. The approvals inbox's calls are in api.ts.
import { call, query, seg, type SubstrateAction } from '../api.ts';

const BASE = '/v1/me/substrate';

/** An action as the ledger lists it, with whether revert_action would undo it now. */
export interface LedgerAction extends SubstrateAction {
  revertible: boolean;
  reverted_by: string | null;
  executed_at: string | null;
  result: unknown;
}

export interface LedgerFilters {
  status?: string | undefined;
  capability?: string | undefined;
  source_app_id?: string | undefined;
  source_rule_id?: string | undefined;
}

/** What substrate_propose answers: the verdict, and the result when it executed at once. */
export interface Proposal {
  action_id: string;
  verdict: SubstrateAction['verdict'];
  requires_approval: boolean;
  result?: unknown;
}

/** A page of a list and the cursor of the next (null: the last page). */
export interface Page<T> {
  rows: T[];
  next_before: string | null;
}

export const ledger = {
  list: async (f: LedgerFilters, before: string | undefined, limit: number): Promise<Page<LedgerAction>> => {
    const got = await call<{ actions: LedgerAction[]; next_before: string | null }>('GET', `${BASE}/actions${query({ ...f, before, limit: String(limit) })}`);
    return { rows: got.actions, next_before: got.next_before };
  },
  get: (id: string) => call<LedgerAction>('GET', `${BASE}/actions/${seg(id)}`),
  /** Through the one door: revert_action proposed like any write. */
  revert: (actionId: string) => call<Proposal>('POST', `${BASE}/actions/propose`, { capability: 'revert_action', payload: { action_id: actionId } }),
};

export const MEMORY_KINDS = ['decisions', 'commitments', 'learnings', 'source_artifacts'] as const;

export interface MemoryRow {
  id: string;
  kind: 'decision' | 'commitment' | 'learning' | 'source_artifact';
  title: string;
  body_text: string | null;
  rank: number | null;
  updated_at: string;
  status: string | null;
}

export const memory = {
  search: async (q: string, kinds: string, match: string) =>
    (await call<{ results: MemoryRow[] }>('GET', `${BASE}/memory${query({ q, kinds, match, limit: '50' })}`)).results,
  list: async (kinds: string, before: string | undefined, limit: number): Promise<Page<MemoryRow>> => {
    const got = await call<{ results: MemoryRow[]; next_before: string | null }>('GET', `${BASE}/memory/list${query({ kinds, before, limit: String(limit) })}`);
    return { rows: got.results, next_before: got.next_before };
  },
};

export const ENTITY_TYPES = ['person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self', 'deal'] as const;

export interface Entity {
  id: string;
  type: string;
  display_name: string;
  primary_email: string | null;
  canonical_keys: Record<string, unknown>;
  attrs: Record<string, unknown>;
  linked_app_user_id: string | null;
  linked_app_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface EntityPatch {
  display_name?: string | undefined;
  primary_email?: string | null | undefined;
  attrs_patch?: Record<string, unknown> | undefined;
  if_updated_at: string;
}

export const entities = {
  list: async (type: string | undefined, q: string | undefined, before: string | undefined, limit: number): Promise<Page<Entity> & { total: number }> => {
    const got = await call<{ entities: Entity[]; next_before: string | null; total: number }>(
      'GET',
      `${BASE}/entities${query({ type, q, before, limit: String(limit), count: 'true' })}`,
    );
    return { rows: got.entities, next_before: got.next_before, total: got.total };
  },
  get: (id: string) => call<Entity>('GET', `${BASE}/entities/${seg(id)}`),
  patch: (id: string, patch: EntityPatch) => call<Proposal>('PATCH', `${BASE}/entities/${seg(id)}`, patch),
};

/** A rule's body as created, updated and previewed. */
export interface RuleBody {
  name: string;
  description?: string | undefined;
  trigger_cron: string;
  condition_mode: 'snapshot_predicate' | 'row_query';
  condition: Record<string, unknown>;
  action_capability: string;
  action_payload_template: Record<string, unknown>;
  max_fires_per_day?: number | undefined;
}

export interface Rule extends Omit<RuleBody, 'description'> {
  rule_id: string;
  description: string | null;
  enabled: boolean;
  max_fires_per_day: number;
  next_fire_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface Preview {
  bindings_count: number;
  sample_proposals: Array<{
    binding: unknown;
    rendered_payload: Record<string, unknown> | null;
    would_require_approval: boolean | null;
    verdict: unknown;
    error?: string;
  }>;
  skip_reason: string | null;
}

export interface Firing {
  firing_id: string;
  slot: string;
  bindings_count: number;
  proposals: Array<{ binding_index: number; action_id: string; verdict: string; requires_approval: boolean }>;
  skipped: Array<{ binding_index: number; reason: string }>;
  skip_reason: string | null;
  created_at: string;
}

const RULES = `${BASE}/attention-rules`;

export const rules = {
  list: async () => (await call<{ rules: Rule[] }>('GET', RULES)).rules,
  get: (id: string) => call<Rule>('GET', `${RULES}/${seg(id)}`),
  preview: (body: RuleBody) => call<Preview>('POST', `${RULES}/preview`, body),
  create: (body: RuleBody) => call<Rule>('POST', RULES, body),
  setEnabled: (id: string, enabled: boolean) => call<Rule>('POST', `${RULES}/${seg(id)}/${enabled ? 'enable' : 'disable'}`),
  remove: (id: string) => call('DELETE', `${RULES}/${seg(id)}`),
  firings: async (id: string, before: string | undefined, limit: number): Promise<Page<Firing>> => {
    const got = await call<{ firings: Firing[]; next_before: string | null }>('GET', `${RULES}/${seg(id)}/firings${query({ before, limit: String(limit) })}`);
    return { rows: got.firings, next_before: got.next_before };
  },
};

export interface Target {
  capability: string;
  webhook_url: string;
  source_app_id: string | null;
  created_at: string;
  updated_at: string;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;

export interface Delivery {
  id: string;
  action_id: string;
  capability: string;
  webhook_url: string;
  status: (typeof DELIVERY_STATUSES)[number];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export const outbox = {
  targets: async () => (await call<{ targets: Target[] }>('GET', `${BASE}/outbox-targets`)).targets,
  setTarget: (capability: string, body: { webhook_url: string; signing_secret: string; source_app_id?: string | undefined }) =>
    call<Target>('PUT', `${BASE}/outbox-targets/${seg(capability)}`, body),
  removeTarget: (capability: string) => call('DELETE', `${BASE}/outbox-targets/${seg(capability)}`),
  deliveries: async (status: string | undefined, capability: string | undefined) =>
    (await call<{ deliveries: Delivery[] }>('GET', `${BASE}/outbox-deliveries${query({ status, capability, limit: '100' })}`)).deliveries,
  redeliver: (id: string) => call<Delivery>('POST', `${BASE}/outbox-deliveries/${seg(id)}/redeliver`),
};
