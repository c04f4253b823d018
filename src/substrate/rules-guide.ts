// The rules area's hand-written guide (GET /llms.txt?area=rules); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const RULES_GUIDE: AreaGuide = {
  summary: "Attention rules: scheduled proposals from the substrate user's daily snapshot or memory rows, previewed first, each firing listable.",
  reference: `
substrate_rule_create { name, description?, trigger_cron, condition_mode, condition, action_capability,
action_payload_template, enabled? (true), max_fires_per_day? (default 100, 1-10000) }. trigger_cron: 5 fields (minute
hour day-of-month month day-of-week) or @hourly, @daily..., in UTC. On each slot the condition yields bindings:

- snapshot_predicate: condition is JSON-Logic over the latest daily snapshot (the row of substrate_snapshots_list:
  snapshot_date, entity_count, decision_count, commitment_count, learning_count, principle_count, artifact_count,
  open_commitment_count, action_count, pending_approval_count, taken_at); true gives one binding, the snapshot.
- row_query: condition is { "from": "decisions" | "commitments" | "learnings" | "entities", "where": <JSON-Logic over
  one row> } (where omitted: every row). A row is the table's fields (id, title, description, status, attrs, due_at,
  created_at, ...), read oldest first; at most 5,000 rows are read and 100 bindings kept per slot.

The JSON-Logic operators are those of principles (no merge, cat, map, reduce, substr, log). action_payload_template
is the capability's payload with {{path}} placeholders, a dotted path into the binding ({{description}},
{{attrs.owner}}): a string that is only a placeholder takes the value with its JSON type; inside text the value
becomes text (objects as JSON, null as empty). A path that does not resolve fails that binding.

Each binding is proposed as an agent with source_rule_id set (filter the actions list by it) and the idempotency key
rule:<rule_id>:<slot>:<index>, so a slot never proposes twice; approval capabilities wait for the human as usual.
Proposals beyond max_fires_per_day in one UTC day are skipped. substrate_rule_firings lists, newest slot first,
{ slot, bindings_count, bindings, proposals: [{ binding_index, action_id, verdict, requires_approval }], skipped:
[{ binding_index, reason }], skip_reason } (the last 500 per rule; next_before back as before pages); skip_reason: no snapshot yet, or the condition
cannot be evaluated (e.g. a var naming no field, or past its budget: 100,000 operations and 50 ms for a snapshot;
500,000 operations and 250 ms for all the rows of a row_query, 50 ms per row).

substrate_rule_preview takes the same body (name optional) and writes nothing: { bindings_count, sample_proposals (up
to 10): [{ binding, rendered_payload, would_require_approval, verdict, error? }], skip_reason }. substrate_rule_update
replaces the body (enabled omitted stays); substrate_rule_enable starts the schedule from now. At most 200 rules per
user (409 RULE_LIMIT). 400 VALIDATION_FAILED names the field (trigger_cron, condition.from, condition.where,
action_capability, action_payload_template.<field>); another user's rule is 404.
`,
};
