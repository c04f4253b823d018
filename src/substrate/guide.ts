// The substrate area's hand-written guide (GET /llms.txt?area=substrate); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const SUBSTRATE_GUIDE: AreaGuide = {
  summary:
    "The user's own layer of record: every write is a proposed action that a policy runs at once or holds for the human's approval, recorded in a ledger with its undo.",
  reference: `
## Who acts

Over MCP (platform key) you act for the account's substrate user as an **agent**; over REST a substrate key
(svc_sub_...) acts as the **human** who minted it, on their own substrate. Yolo mode is the human's (REST). Approving
and rejecting are the person's: over MCP the tool sends them to the platform's approval page (URL elicitation;
/approve/<action_id>, signed in with their substrate key) and returns the action once they decided; a client without
URL elicitation gets the link to pass on. Agents never mint substrate keys: only a person signed in does (a platform
key gets 403 HUMAN_CONFIRMATION_REQUIRED). A linked app
(substrate_app_link) proposes as an agent with its service key or from functions (ctx.substrate). A person signed
in to the platform may link with \`end_users_decide: true\` (for their own substrate): the app's signed-in end users
may then approve or reject what its functions propose from then on (ctx.substrate.approve; decided_via
\`app_end_user\`), never what its service key proposes. Deploying, deleting or changing the variables of its functions
by anyone but that person ends that consent: the person gives it again.
substrate_ws_ticket mints a 60-second, single-use ticket for the live change stream (websocket
/v1/me/substrate/stream?ticket=...): { type: "hello" }, then { org, op, tbl, id } per committed change.

## From functions

\`ctx.substrate\` exists while the app is linked to a substrate user (substrate_app_link): \`propose(capability, payload,
{ idempotency_key, require_approval }?)\` (require_approval: true waits for a person even where the policy is auto),
\`getEntity\`, \`findEntities\`, \`searchMemory\`, \`patchEntity\`, \`mergeEntities\`, \`deleteEntity\`, \`wsTicket()\`, \`actions({
status, capability, limit, before })\` and \`action(id)\` (this app's own proposals), for that user as an agent;
\`approve(id)\` / \`reject(id, reason)\`: the calling end user decides on something this app's functions proposed since a
person linked the app with end_users_decide (else 403 END_USER_DECISIONS_OFF; what its service key or earlier code
proposed, or a call without an end user: 403 HUMAN_CONFIRMATION_REQUIRED). A refusal rejects with a SubstrateError
(code, status).

## Propose

\`substrate_propose\` \`{ capability, payload, idempotency_key?, dangerously_skip_approval? }\` ->
\`{ action_id, verdict: { result, reason, conflicts }, requires_approval, result?, replay? }\`. Verdicts, in order: a
conflict with an active principle in \`reject\` mode -> \`rejected\`; any other conflict -> \`requires_approval\`; the
owner's skip flag -> \`auto_approved\` (ignored for agents); policy auto -> \`auto_approved\`; yolo mode and a human
proposer (not for side-effecting capabilities) -> \`auto_approved_yolo\`; otherwise \`requires_approval\`. A payload
that fails validation is a 400 naming \`payload.<field>\`. The same \`idempotency_key\` (per user, forever) returns the
first outcome with \`replay: true\` and runs nothing.

## Capabilities (built so far)

| capability | payload (required; optional) | policy |
|---|---|---|
| record_decision | title, kind (operational, strategic, mission, vision, principle, policy_decision); rationale, salience (ambient, normal, archival; default normal), source_artifact_id | auto, reversible |
| record_commitment | description, status (proposed, tentative, confirmed, fulfilled, expired, broken); from_entity, to_entity, amount, unit, due_at, source_artifact_id, attrs | auto, reversible |
| record_learning | title, description; resolution_taken, related_decision_id, source_artifact_id | auto, reversible |
| record_principle | title, applies_to \`{ capabilities?: [...], entity_types?: [...] }\`, constraint_spec \`{ logic: <JSON-Logic over { capability, payload }>, mode?: "require_approval" or "reject" }\`; rationale, salience (default ambient) | approval |
| supersede_decision | old_decision_id, new_title, kind; new_rationale | approval |
| retire_principle | principle_id, reason | approval |
| revert_action | action_id | auto |
| bulk_revert_actions | action_ids (1-200), reason; failures are collected in the result | approval |
| upsert_entity | type (person, company, fund, workspace, team, project, event, agent, self), display_name; id, primary_email, canonical_keys (flat, scalar values), linked_app_user_id (uuid), linked_app_id, attrs -> { entity_id, was_insert } | auto, reversible |
| update_entity | id; display_name, primary_email (null clears), attrs (replaced wholesale); at least one | auto, reversible |
| patch_entity | id; display_name, primary_email, attrs_patch (JSON merge patch), if_updated_at; at least one of the first three | auto, reversible |
| merge_entities | loser_id, winner_id, reason | approval |
| delete_entity | id, reason | approval |
| send_email_draft | to (an address, or 1-50), subject, body; target_role | approval, even in yolo mode (side-effecting) |
| upsert_source_artifact | kind, title; id, external_system + external_id (together), summary, content, url, storage_object_id, links { entity_ids?, project_tags? }, attrs -> { artifact_id, was_insert, before } | auto, reversible |

A principle applies to the capabilities in \`applies_to.capabilities\` and the entity types in \`applies_to.entity_types\`
(each empty: any); its \`logic\` over \`{ capability, payload, entity_type }\` must be true for a proposal, e.g.
\`{ "<=": [{ "var": "payload.amount" }, 100] }\`. A logic that cannot be evaluated counts as a conflict, as does one
needing more than 100,000 operations or 50 ms (a proposal's principles share the 50 ms).

## Entities

Read with substrate_entities_list (type, q = display-name substring, limit 1-200 default 50, count; pass
next_before back as before for the next page, without q) and
substrate_entities_get; write through substrate_propose or substrate_entities_patch. upsert_entity matches, in order:
id, then an entity of the same type whose canonical_keys contain every pair you send, then the same type and email
(case-insensitive); otherwise it inserts (primary_email is also stored as canonical_keys.email). Send what you know
as canonical_keys ({ "linkedin": "...", "domain": "..." }) so later upserts find the entity. To patch safely, send
the updated_at you read as if_updated_at: if someone wrote since, you get 409 STALE_ENTITY; read again and reapply.
After merge_entities the loser's id still works everywhere and answers the winner (compare the returned id).

## Errors

400 VALIDATION_FAILED; 401 AUTH_INVALID_TOKEN (REST without a substrate key); 403 FORBIDDEN (a service key); 404
RESOURCE_NOT_FOUND; 409 wrong_status (approve or reject of an action not proposed), ALREADY_REVERTED, NOT_REVERSIBLE,
NOT_EXECUTED, STALE_ENTITY
(patch with an old if_updated_at), ENTITY_GONE and ENTITY_MERGED_INTO (reverts), ARTIFACT_GONE (revert of a deleted
artifact), CONFLICT (external ids already used by another artifact), SUBSTRATE_NOT_LINKED (an app's
proposal before substrate_app_link); 403 HUMAN_CONFIRMATION_REQUIRED, HUMAN_DECLINED and HUMAN_DECISION_PENDING
(approve or reject over MCP: the person has not decided on the page).
`,
};
