// The memory area's hand-written guide (GET /llms.txt?area=memory); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const MEMORY_GUIDE: AreaGuide = {
  summary:
    "The substrate user's memory: full-text search and a timeline of decisions, commitments, learnings and source artifacts, and daily snapshots.",
  reference: `
Writes go through substrate_propose (toolset substrate): record_decision, record_commitment, record_learning,
upsert_source_artifact.

## Artifacts

upsert_source_artifact finds the artifact by id, else by (external_system, external_id), else inserts a new art_ id.
On a match, omitted fields stay, null clears, links and attrs merge key by key; \`before\` is the previous row (or
null). A linked app's artifacts carry its source_app_id. A record_* source_artifact_id must name one of your
artifacts (404 otherwise); deleting an artifact clears the references to it. substrate_artifacts_list takes kind, q
(full text over title, summary, content), limit 1-200 (default 50), count; substrate_artifacts_get adds content.

## Memory

substrate_memory_search is English full-text search over decisions (title, rationale), commitments (description),
learnings (title, description, resolution) and artifacts (title, summary, content). match: \`and\` every word (web
search syntax: "a phrase", or, -word), \`or\` any word, \`phrase\` the words in order. rank is ts_rank, best first; q
empty or * lists the newest with rank null. kinds: comma-separated decisions, commitments, learnings, source_artifacts.
Rows: { id, kind, title, body_text, rank, updated_at, source_artifact_id, supersedes, status }.
substrate_memory_list pages newest first: pass next_before back as before (a bare ISO time also works);
superseded=false leaves out superseded decisions and expired commitments.

## Snapshots

substrate_snapshots_list (days 1-365, default 7): one row per UTC day of entity, decision, commitment, learning,
active-principle, artifact, open-commitment, action and pending-approval counts at taken_at; written daily at 00:05
UTC, and today's is made on the first read when missing.
`,
};
