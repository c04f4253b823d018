// The substrate ledger: every write is proposed, decided by policy or a human, executed in the transaction that
// records it, and undoable. Scoped to one substrate user of one account (org) per call.
import { setTimeout as delay } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { AppError, errors, fromZod } from '../core/errors.ts';
import { capabilities, payloadSchemas } from './capabilities/index.ts';
import { unknownKeysMessage } from '../core/strict.ts';
import { newId } from './ids.ts';
import { afterCursor, cursorTs, page, parseCursor } from './cursor.ts';
import type { OutboxTarget, SubstrateOutbox } from './outbox.ts';
import type { SubstrateStream } from './stream.ts';
import { decide, type PrincipleRow } from './policy.ts';
import { ENTITY_TYPES, SubstrateEntities, findEntity, type EntityType } from './entities.ts';
import type { ActionView, AppSourceVia, Capability, CapabilityContext, SubstrateActor, Verdict } from './types.ts';
import { actingOn, audit, clientAddress } from '../identity/audit.ts';
import { SubstrateArtifacts } from './artifacts.ts';
import { SubstrateMemory, parseKinds } from './memory.ts';
import { SubstrateSnapshots } from './snapshots.ts';
import { SubstrateRules } from './rules.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject } from '../db/json.ts';
import { prepared, withCommit } from '../db/deferred-begin.ts';

export interface ProposeInput {
  capability: string;
  payload: Record<string, unknown>;
  idempotency_key?: string | undefined;
  dangerously_skip_approval?: boolean | undefined;
  /** The proposer asks for a person's approval even where the policy would execute at once. */
  require_approval?: boolean | undefined;
}

export interface ProposeResult {
  action_id: string;
  verdict: Verdict;
  requires_approval: boolean;
  result?: unknown;
  replay?: true;
}

export interface ActionQuery {
  status?: 'proposed' | 'executed' | 'rejected' | 'all' | undefined;
  capability?: string | undefined;
  limit: number;
  before?: string | undefined;
  source_app_id?: string | undefined;
  source_rule_id?: string | undefined;
}

/**
 * `decided_via`, how a person decided on a proposed action: 'rest' is their substrate key or signed-in session (over
 * REST, or on the approval page, which calls the same route; `decided_by` names the person, the key's too). 'mcp_elicitation' marks decisions of earlier versions, confirmed by a
 * form at an agent's MCP client; none are made so any more (the client that proposed could answer the form itself).
 */
type ActionRow = Selectable<ControlDatabase['substrate_actions']>;

export const substrateErrors = {
  wrongStatus: (id: string, status: string) =>
    new AppError(409, 'wrong_status', `Action '${id}' is ${status}, not proposed.`, 'Only a proposed action can be approved or rejected; read it with GET actions/{action_id}.'),
  platformOnly: (name: string) =>
    new AppError(403, 'FORBIDDEN', `Capability '${name}' is proposed by the platform only.`, name === 'merge_branch' ? 'Propose a merge with branches_merge.' : 'Use the tool that proposes it.'),
  unknownCapability: (name: string) =>
    errors.validation(`Unknown capability '${name.slice(0, 100)}'; known: ${[...capabilities.keys()].join(', ')}.`, [{ path: 'capability', message: 'not a capability' }]),
  actionNotFound: (id: string) => errors.notFound(`Action '${id.slice(0, 100)}'`, 'List the actions with GET /v1/me/substrate/actions.'),
  /** 403 HUMAN_CONFIRMATION_REQUIRED: what was asked is a person's act, and the caller is not that person. */
  humanRequired: (message: string, remediation: string) => new AppError(403, 'HUMAN_CONFIRMATION_REQUIRED', message, remediation),
  personRequired: (verb: 'approve' | 'reject', url: string) =>
    substrateErrors.humanRequired(
      `Only a person can ${verb} a proposed action; an agent never decides, whoever proposed.`,
      `The person opens ${url} (signed in with their substrate key), or calls POST /v1/me/substrate/actions/{action_id}/${verb} with it.`,
    ),
  notLinked: (appId: string) =>
    new AppError(
      409,
      'SUBSTRATE_NOT_LINKED',
      `App '${appId}' is not linked to a substrate user.`,
      "The app's owner links it with substrate_app_link (POST /apps/{app_id}/substrate-link) first.",
    ),
};

/** How often a tool waiting for a person's decision looks at the action. */
const DECISION_POLL_MS = 1000;

/** The platform's approval page of an action: where a person signs in and decides. */
export function approvalPageUrl(baseUrl: string, actionId: string): string {
  return `${baseUrl}/approve/${encodeURIComponent(actionId)}`;
}

/** Approving and rejecting are a person's acts: a substrate key (REST, the approval page), never an agent. */
function requirePerson(actor: SubstrateActor, verb: 'approve' | 'reject'): void {
  if (actor.proposer !== 'human') throw substrateErrors.personRequired(verb, '/approve/{action_id}');
}

/** How long this process trusts an app's link state (checked on every function invocation). */
const LINK_TTL_MS = 5_000;

/** Who decided, as the ledger records it: a person (REST, the approval page) or an end user of the proposing app. */
interface Decider {
  via: 'rest' | 'app_end_user';
  personId: string | null;
  endUserId: string | null;
}

/** The columns a proposal writes in its action row. */
const ACTION_COLUMNS = sql.raw(`id, user_id, capability, payload, proposer_kind, source_app_id, source_rule_id, source_via, status, verdict,
  requires_approval, skip_approval, idempotency_key, decided_at, executed_at, result, undo`);

/** A proposal whose idempotency key a concurrent twin committed first: its transaction rolls back, the twin replays. */
class Replay extends Error {}

export class SubstrateService {
  readonly #db: Kysely<ControlDatabase>;
  readonly #links = new Map<string, { linked: boolean; until: number }>();
  /** Account -> its default user: fixed once known. */
  readonly #defaultUsers = new Map<string, string>();

  readonly #outbox: SubstrateOutbox;
  /** Stream tickets and the LISTEN fan-out of committed changes (started by api processes). */
  readonly stream: SubstrateStream;

  constructor(db: Kysely<ControlDatabase>, outbox: SubstrateOutbox, stream: SubstrateStream) {
    this.#db = db;
    this.#outbox = outbox;
    this.stream = stream;
  }

  /** Outbox targets and deliveries (webhooks for executed actions). */
  get outbox(): SubstrateOutbox {
    return this.#outbox;
  }

  /** Entity reads (list, one; an alias id answers its winner). Entity writes are capabilities, through propose. */
  get entities(): SubstrateEntities {
    return new SubstrateEntities(this.#db);
  }

  /** Source artifact reads (list with full-text search, one with content); upsert_source_artifact writes them. */
  get artifacts(): SubstrateArtifacts {
    return new SubstrateArtifacts(this.#db);
  }

  /** Memory reads: full-text search and the chronological list over decisions, commitments, learnings and artifacts. */
  get memory(): SubstrateMemory {
    return new SubstrateMemory(this.#db);
  }

  /** Daily snapshots: the cron's writes and GET snapshots. */
  get snapshots(): SubstrateSnapshots {
    return new SubstrateSnapshots(this.#db);
  }

  /** Attention rules: CRUD, preview, the per-minute dispatcher and the firing of a slot (proposing through this ledger). */
  get rules(): SubstrateRules {
    return new SubstrateRules(this.#db, this);
  }

  /**
   * Who a call acts for. A substrate key: the substrate user of the person who minted it (their own), proposing as a
   * human. A person's browser session: that person's own substrate user, as a human. An OAuth token (an MCP client
   * acting for a person): that person's user, as an agent. A platform key (MCP): the account's default user, as an
   * agent. Other credentials never reach the substrate.
   */
  async actor(caller: Caller): Promise<SubstrateActor> {
    if (caller.kind === 'substrate') {
      return { accountId: caller.accountId, userId: caller.userId, proposer: 'human', sourceAppId: null, sourceRuleId: null, personId: caller.personId };
    }
    if (caller.kind === 'platform' && caller.personId !== null) {
      const userId = await this.#personUser(caller.accountId, caller.personId, caller.role === 'owner');
      const proposer = caller.via === 'session' ? 'human' : 'agent';
      return { accountId: caller.accountId, userId, proposer, sourceAppId: null, sourceRuleId: null, personId: caller.personId };
    }
    if (caller.kind === 'platform') {
      return { accountId: caller.accountId, userId: await this.#defaultUser(caller.accountId), proposer: 'agent', sourceAppId: null, sourceRuleId: null };
    }
    throw errors.wrongCredential(['substrate key']);
  }

  /**
   * Who an app's own calls act for: the substrate user it is linked to, proposing as an agent with source_app_id set
   * (`via` its functions through ctx.substrate, or its service key through /v1/{app_id}/substrate/...). 409 when not
   * linked.
   */
  async actorForApp(appId: string, via: AppSourceVia): Promise<SubstrateActor> {
    return { ...(await this.#appLink(appId)).actor, sourceVia: via };
  }

  /** The app's agent actor and since when its end users may decide (null: they may not); 409 when not linked. */
  async #appLink(appId: string): Promise<{ actor: SubstrateActor; endUsersDecideSince: Date | null }> {
    const row = (
      await sql<{ account_id: string; substrate_user_id: string | null; decide_since: Date | null }>`
        select account_id, substrate_user_id, case when ${endUsersDecide(sql.ref('apps'))} then substrate_end_users_decide_at end as decide_since
        from apps where id = ${appId}`.execute(this.#db)
    ).rows[0];
    if (!row?.substrate_user_id) throw substrateErrors.notLinked(appId);
    const actor: SubstrateActor = { accountId: row.account_id, userId: row.substrate_user_id, proposer: 'agent', sourceAppId: appId, sourceRuleId: null };
    return { actor, endUsersDecideSince: row.decide_since };
  }

  /**
   * Whether the app is linked (ctx.substrate exists in its functions); cached briefly, refreshed by link/unlink here.
   * Answered at once while cached (no turn of the event loop on a function invocation's path).
   */
  isLinked(appId: string): boolean | Promise<boolean> {
    const cached = this.#links.get(appId);
    return cached && cached.until > Date.now() ? cached.linked : this.#readLink(appId);
  }

  async #readLink(appId: string): Promise<boolean> {
    const { rows } = await sql<{ linked: boolean }>`select substrate_user_id is not null as linked from apps where id = ${appId}`.execute(this.#db);
    const linked = rows[0]?.linked ?? false;
    if (this.#links.size > 10_000) this.#links.clear();
    this.#links.set(appId, { linked, until: Date.now() + LINK_TTL_MS });
    return linked;
  }

  /**
   * Links the app to a substrate user of its owner's account (default: the account's default user). `consent`: the
   * person (signed in, checked by the tool) who lets the app's end users decide on the proposals its functions make
   * from now on, for their own substrate user; null withdraws it; omitted, it stays while the app stays linked to the
   * same user. Whether it holds now is answered (see endUsersDecide).
   */
  async link(
    accountId: string,
    appId: string,
    substrateUserId: string | undefined,
    consent?: string | null,
  ): Promise<{ app_id: string; substrate_user_id: string | null; end_users_decide: boolean }> {
    const userId = substrateUserId ?? (await this.#defaultUser(accountId));
    const by = consent === undefined ? sql`case when apps.substrate_user_id = u.id then apps.substrate_end_users_decide_by end` : sql`${consent}::uuid`;
    const at = consent === undefined ? sql`case when apps.substrate_user_id = u.id then apps.substrate_end_users_decide_at end` : sql`case when ${consent}::uuid is null then null else now() end`;
    const { rows } = await sql<{ id: string; end_users_decide: boolean }>`
      update apps set substrate_user_id = u.id, substrate_end_users_decide_by = ${by}, substrate_end_users_decide_at = ${at}
      from substrate_users u
      where apps.id = ${appId} and apps.account_id = ${accountId} and u.id = ${userId}::uuid and u.account_id = ${accountId}
      returning apps.id, ${endUsersDecide(sql.ref('apps'))} as end_users_decide`.execute(this.#db);
    if (!rows[0]) throw errors.notFound(`Substrate user '${userId}'`, "Link to a substrate user of the app owner's account (omit substrate_user_id for the default one).");
    this.#links.delete(appId);
    return { app_id: appId, substrate_user_id: userId, end_users_decide: rows[0].end_users_decide };
  }

  async unlink(appId: string): Promise<{ app_id: string; substrate_user_id: null; end_users_decide: false }> {
    await sql`update apps set substrate_user_id = null, substrate_end_users_decide_by = null, substrate_end_users_decide_at = null where id = ${appId}`.execute(this.#db);
    this.#links.delete(appId);
    return { app_id: appId, substrate_user_id: null, end_users_decide: false };
  }

  /**
   * Before anyone but the person who let the app's end users decide changes its functions (code, triggers, variables,
   * deletion), that consent ends: they allowed the app's functions as they were, and whoever holds a platform or
   * service key could otherwise deploy a function that approves, then sign up an end user and call it. Ended before
   * the change, in a transaction of its own with its audit entry, so new code never runs under the old consent (a
   * change that then fails has ended it too). `changer` and `clientId`: who changes, and from where.
   */
  async endUserDecisionsBefore(appId: string, changer: Caller, clientId: string, change: string): Promise<void> {
    const personId = changer.kind === 'platform' && changer.via === 'session' ? changer.personId : null;
    const acting = actingOn(changer);
    if (!acting) throw new Error(`a caller of kind ${changer.kind} changes no app's functions`);
    await this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<{ account_id: string; allowed_by: string }>`
        update apps a set substrate_end_users_decide_by = null, substrate_end_users_decide_at = null
        from (select id, substrate_end_users_decide_by as allowed_by from apps where id = ${appId} for update) was
        where a.id = was.id and was.allowed_by is not null and was.allowed_by is distinct from ${personId}::uuid
        returning a.account_id, was.allowed_by`.execute(tx);
      const ended = rows[0];
      if (!ended) return;
      await audit.record(tx, {
        actor: acting.actor,
        ip: clientAddress(clientId),
        accountId: ended.account_id,
        action: 'substrate.end_users_decide_end',
        resourceType: 'app',
        resourceId: appId,
        details: { change, allowed_by: ended.allowed_by },
      });
    });
  }

  /**
   * An end user of a linked app approving or rejecting one of the proposals its functions made since the person whose
   * substrate it is let its end users decide: 403 END_USER_DECISIONS_OFF without that consent; 403
   * HUMAN_CONFIRMATION_REQUIRED for what its service key proposed, or what was proposed before the consent (code or
   * keys the person never allowed to decide); another proposer's action is not found. Recorded as decided_via
   * 'app_end_user' with the end user's id.
   */
  async decideForApp(appId: string, endUserId: string, actionId: string, verb: 'approve' | 'reject', reason?: string): Promise<ActionView> {
    const { actor: app, endUsersDecideSince: since } = await this.#appLink(appId);
    if (!since) {
      throw new AppError(
        403,
        'END_USER_DECISIONS_OFF',
        `End users of app '${appId}' may not decide on its proposals.`,
        'The person whose substrate the app is linked to allows it with substrate_app_link { end_users_decide: true } from their signed-in session; until then they decide on the approval page.',
      );
    }
    const row = await this.#row(this.#db, app, actionId);
    if (row.source_app_id !== appId) throw substrateErrors.actionNotFound(actionId);
    if (row.source_via !== 'function' || row.created_at < since) {
      throw substrateErrors.humanRequired(
        `Action '${actionId}' was not proposed by this app's functions since its end users were allowed to decide (its service key, or earlier code, proposed it): only the person decides it.`,
        `The person opens /approve/${actionId} and decides there, signed in.`,
      );
    }
    const person: SubstrateActor = { ...app, proposer: 'human', sourceAppId: null };
    const decider: Decider = { via: 'app_end_user', personId: null, endUserId };
    return verb === 'approve' ? this.#approve(person, actionId, decider) : this.#reject(person, actionId, reason, decider);
  }

  /** ctx.substrate's reads for the actor's user: getEntity(id), findEntities({ type?, q?, limit? }), searchMemory(q, opts). */
  async read(actor: SubstrateActor, op: string, args: readonly unknown[]): Promise<unknown> {
    const [a, b] = args;
    const opts = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
    const limit = (v: unknown, max: number, fallback: number) => {
      if (v === undefined) return fallback;
      if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max) return v;
      throw errors.validation(`ctx.substrate.${op}: 'limit' must be an integer from 1 to ${max}.`);
    };
    switch (op) {
      case 'getEntity':
        if (typeof a !== 'string') throw errors.validation("ctx.substrate.getEntity: 'entity_id' must be a string.");
        return this.entities.get(actor.userId, a);
      case 'findEntities': {
        const q = opts(a);
        if (q.type !== undefined && !ENTITY_TYPES.includes(q.type as EntityType)) {
          throw errors.validation(`ctx.substrate.findEntities: 'type' must be one of ${ENTITY_TYPES.join(', ')}.`);
        }
        return this.entities.list(actor.userId, {
          type: q.type as EntityType | undefined,
          q: typeof q.q === 'string' ? q.q : undefined,
          limit: limit(q.limit, 200, 50),
        });
      }
      case 'searchMemory': {
        if (a !== undefined && typeof a !== 'string') throw errors.validation("ctx.substrate.searchMemory: 'query' must be a string.");
        const o = opts(b);
        const kinds = Array.isArray(o.kinds) || typeof o.kinds === 'string' ? parseKinds(o.kinds as string | string[]) : undefined;
        const match = o.match === 'or' || o.match === 'phrase' ? o.match : 'and';
        return this.memory.search(actor.userId, { q: a, kinds, limit: limit(o.limit, 200, 20), match });
      }
      default:
        throw errors.validation(`ctx.substrate.${op} is not available.`);
    }
  }

  async settings(actor: SubstrateActor): Promise<{ yolo_mode: boolean; user_id: string }> {
    const { rows } = await sql<{ yolo_mode: boolean }>`select yolo_mode from substrate_users where id = ${actor.userId}`.execute(this.#db);
    return { yolo_mode: rows[0]?.yolo_mode ?? false, user_id: actor.userId };
  }

  async setYolo(actor: SubstrateActor, yolo: boolean): Promise<{ yolo_mode: boolean; user_id: string }> {
    await sql`update substrate_users set yolo_mode = ${yolo} where id = ${actor.userId}`.execute(this.#db);
    return { yolo_mode: yolo, user_id: actor.userId };
  }

  /**
   * One proposal: validated, decided, and (when approved by policy) executed, all in one transaction with its ledger
   * row. A known idempotency key replays the original outcome and executes nothing; two concurrent proposals with
   * the same key meet at the unique index, so one executes and the other replays it.
   */
  async propose(actor: SubstrateActor, input: ProposeInput): Promise<ProposeResult> {
    const capability = capabilities.get(input.capability);
    if (!capability) throw substrateErrors.unknownCapability(input.capability);
    if (capability.platformOnly) throw substrateErrors.platformOnly(capability.name);
    return this.#propose(actor, input, capability);
  }

  /** A proposal the platform makes for an agent (merge_branch: src/branches/service.ts), in the actor's ledger. */
  proposeForPlatform(actor: SubstrateActor, capability: string, payload: Record<string, unknown>): Promise<ProposeResult> {
    return this.#propose(actor, { capability, payload }, capabilities.get(capability)!);
  }

  async #propose(actor: SubstrateActor, input: ProposeInput, capability: Capability): Promise<ProposeResult> {
    const parsed = payloadSchemas.get(capability.name)!.safeParse({ payload: input.payload }, { error: unknownKeysMessage });
    if (!parsed.success) throw fromZod(parsed.error);
    const payload = (parsed.data as { payload: Record<string, unknown> }).payload;
    if (capability.name === 'record_principle') checkPrincipleScope(payload);
    let outcome: ProposeResult;
    try {
      outcome = await this.#proposeOnce(actor, input, capability, payload);
    } catch (err) {
      if (err instanceof Replay) return this.#replay(actor, input.idempotency_key!);
      throw err;
    }
    return outcome;
  }

  async #proposeOnce(actor: SubstrateActor, input: ProposeInput, capability: Capability, payload: Record<string, unknown>): Promise<ProposeResult> {
    const outcome = await this.#db.transaction().execute(async (tx) => {
      // A key seen before replays without executing anything; a twin committing meanwhile is caught at the insert.
      if (input.idempotency_key) {
        const seen = await sql`select 1 from substrate_actions where user_id = ${actor.userId} and idempotency_key = ${input.idempotency_key}`.execute(tx);
        if (seen.rows.length) throw new Replay();
      }
      // The capability's outbox target comes with the user's state: one round trip fewer for every executed proposal.
      const state = (
        await prepared(tx, sql<{ yolo_mode: boolean; principles: PrincipleRow[]; outbox_target: OutboxTarget | null }>`
          select u.yolo_mode, coalesce((select json_agg(json_build_object('id', p.id, 'title', p.title, 'applies_to', p.applies_to, 'constraint_spec', p.constraint_spec))
                                        from substrate_principles p where p.user_id = u.id and p.status = 'active'), '[]') as principles,
                 (select json_build_object('webhook_url', t.webhook_url, 'source_app_id', t.source_app_id)
                    from substrate_outbox_targets t where t.user_id = u.id and t.capability = ${capability.name}) as outbox_target
          from substrate_users u where u.id = ${actor.userId}`)
      ).rows[0];
      const user = state;
      const principles = state?.principles ?? [];
      // The skip flag is the owner's: an agent's is ignored (and not recorded as used).
      const skip = input.dangerously_skip_approval === true && actor.proposer === 'human';
      const entityType = principles.some((p) => p.applies_to.entity_types?.length) ? await entityTypeOf(tx, actor.userId, payload) : null;
      const verdict = askedForPerson(
        decide({ capability, payload, proposer: actor.proposer, yolo: user?.yolo_mode ?? false, skipApproval: input.dangerously_skip_approval === true, principles, entityType }),
        input.require_approval === true,
      );
      const id = newId('act');
      const status = verdict.result === 'rejected' ? 'rejected' : verdict.result === 'requires_approval' ? 'proposed' : 'executed';
      const outboxTarget = status === 'executed' ? (state?.outbox_target ?? null) : null;
      // The action row is the last statement unless the outbox follows or a taken idempotency key must roll the
      // execution back: then COMMIT rides with it (one round trip fewer).
      const last = outboxTarget === null && !input.idempotency_key;
      // A last row also carries the execution when the capability plans it as one insert (nothing to read first):
      // one statement for both rows, one round trip fewer again.
      const planned = status === 'executed' && last ? capability.plan?.(actor, payload) : undefined;
      // Otherwise an approved proposal executes first and its row is written once, complete; should the idempotency
      // key turn out to be taken (a concurrent twin committed it), the Replay rolls the execution back with the
      // transaction.
      const execution = planned ?? (status === 'executed' ? await capability.execute(this.#context(tx, actor, id), payload) : undefined);
      const undo = execution && capability.reversible && execution.undo !== undefined ? JSON.stringify(execution.undo) : null;
      const row = sql`${id}, ${actor.userId}, ${capability.name}, ${JSON.stringify(payload)}, ${actor.proposer}, ${actor.sourceAppId}, ${actor.sourceRuleId},
        ${actor.sourceVia ?? null}, ${status}, ${JSON.stringify(verdict)}, ${status === 'proposed'}, ${skip}, ${input.idempotency_key ?? null},
        ${status === 'proposed' ? null : sql`now()`}, ${status === 'executed' ? sql`now()` : null},
        ${execution ? JSON.stringify(execution.result ?? null) : null}::jsonb, ${undo}::jsonb`;
      // The action row selects from the planned insert, so that insert runs first (its row, its constraint checks
      // and its change notice come before the action's, as when it runs on its own).
      const insert = planned
        ? sql<{ id: string }>`with execution as (${planned.write} returning 1)
            insert into substrate_actions (${ACTION_COLUMNS}) select ${row} from execution
            on conflict (user_id, idempotency_key) do nothing returning id`
        : sql<{ id: string }>`insert into substrate_actions (${ACTION_COLUMNS}) values (${row})
            on conflict (user_id, idempotency_key) do nothing returning id`;
      const inserted = await (last ? withCommit(tx, insert) : prepared(tx, insert));
      if (!inserted.rows[0]) throw new Replay();
      if (execution) await this.#outbox.enqueue(tx, actor, { id, capability: capability.name, payload, result: execution.result }, outboxTarget);
      return { action_id: id, verdict, requires_approval: status === 'proposed', ...(execution ? { result: execution.result } : {}) } satisfies ProposeResult;
    });
    return outcome;
  }

  /**
   * Executes a proposed action as its proposer would have, and returns the updated row. A person's act only: an
   * agent (MCP, a function, a rule) never decides, whoever proposed.
   */
  async approve(actor: SubstrateActor, actionId: string): Promise<ActionView> {
    requirePerson(actor, 'approve');
    return this.#approve(actor, actionId, { via: 'rest', personId: actor.personId ?? null, endUserId: null });
  }

  async #approve(actor: SubstrateActor, actionId: string, decider: Decider): Promise<ActionView> {
    return this.#db.transaction().execute(async (tx) => {
      const row = await this.#lockProposed(tx, actor, actionId);
      const capability = capabilities.get(row.capability)!;
      const proposer: SubstrateActor = { ...actor, proposer: row.proposer_kind, sourceAppId: row.source_app_id, sourceRuleId: row.source_rule_id };
      await sql`update substrate_actions set decided_at = now(), requires_approval = false, decided_via = ${decider.via}, decided_by = ${decider.personId},
        decided_by_end_user = ${decider.endUserId} where id = ${row.id}`.execute(tx);
      const payload = jsonObject(row.payload);
      const result = await this.#execute(tx, proposer, row.id, capability, payload);
      await this.#outbox.enqueue(tx, proposer, { id: row.id, capability: capability.name, payload, result });
      return actionView(await this.#row(tx, actor, actionId));
    });
  }

  async reject(actor: SubstrateActor, actionId: string, reason: string | undefined): Promise<ActionView> {
    requirePerson(actor, 'reject');
    return this.#reject(actor, actionId, reason, { via: 'rest', personId: actor.personId ?? null, endUserId: null });
  }

  async #reject(actor: SubstrateActor, actionId: string, reason: string | undefined, decider: Decider): Promise<ActionView> {
    return this.#db.transaction().execute(async (tx) => {
      const row = await this.#lockProposed(tx, actor, actionId);
      await sql`update substrate_actions set status = 'rejected', requires_approval = false, reject_reason = ${reason ?? null}, decided_at = now(),
        decided_via = ${decider.via}, decided_by = ${decider.personId}, decided_by_end_user = ${decider.endUserId} where id = ${row.id}`.execute(tx);
      return actionView(await this.#row(tx, actor, actionId));
    });
  }

  /**
   * The action once it is no longer proposed (a person decided), or as it still is after `timeoutMs` or when `signal`
   * aborts. Polled: decisions are rare and a person takes seconds at least.
   */
  async awaitDecision(actor: SubstrateActor, actionId: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<ActionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const action = await this.get(actor, actionId);
      if (action.status !== 'proposed' || Date.now() >= deadline || signal?.aborted) return action;
      await delay(Math.min(DECISION_POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(() => undefined);
    }
  }

  async get(actor: SubstrateActor, actionId: string): Promise<ActionView> {
    return actionView(await this.#row(this.#db, actor, actionId));
  }

  /**
   * Newest first by `(created_at, id)`, after the `before` cursor (a previous page's next_before, or an ISO time:
   * rows created before it); `next_before` is null on the last page.
   */
  async list(actor: SubstrateActor, q: ActionQuery): Promise<{ actions: ActionView[]; next_before: string | null }> {
    const status = q.status && q.status !== 'all' ? q.status : null;
    const { rows } = await sql<ActionRow & { cursor_ts: string }>`
      select *, ${cursorTs('created_at')} as cursor_ts from substrate_actions
      where user_id = ${actor.userId}
        and (${status}::text is null or status = ${status})
        and (${q.capability ?? null}::text is null or capability = ${q.capability ?? null})
        and (${q.source_app_id ?? null}::text is null or source_app_id = ${q.source_app_id ?? null})
        and (${q.source_rule_id ?? null}::text is null or source_rule_id = ${q.source_rule_id ?? null})
        ${afterCursor('created_at', q.before === undefined ? null : parseCursor(q.before))}
      order by created_at desc, id desc
      limit ${q.limit + 1}`.execute(this.#db);
    const shown = page(rows, q.limit);
    return { actions: shown.rows.map((r) => compact(actionView(r))), next_before: shown.next_before };
  }

  #context(tx: Kysely<ControlDatabase>, actor: SubstrateActor, actionId: string): CapabilityContext {
    const ctx: CapabilityContext = { tx, actor, actionId, revert: (target) => this.#revert(ctx, target) };
    return ctx;
  }

  /** Executes an approved action whose row exists (approve) and writes its outcome on the row. */
  async #execute(tx: Kysely<ControlDatabase>, actor: SubstrateActor, actionId: string, capability: Capability, payload: Record<string, unknown>): Promise<unknown> {
    const { result, undo } = await capability.execute(this.#context(tx, actor, actionId), payload);
    await sql`update substrate_actions set status = 'executed', executed_at = now(), result = ${JSON.stringify(result ?? null)}::jsonb,
      undo = ${capability.reversible && undo !== undefined ? JSON.stringify(undo) : null}::jsonb where id = ${actionId}`.execute(tx);
    return result;
  }

  /** Restores what an executed reversible action changed, once; the revert is recorded on the reverted action. */
  async #revert(ctx: CapabilityContext, target: string): Promise<void> {
    const row = (await sql<ActionRow>`select * from substrate_actions where id = ${target} and user_id = ${ctx.actor.userId} for update`.execute(ctx.tx)).rows[0];
    if (!row) throw substrateErrors.actionNotFound(target);
    const capability = capabilities.get(row.capability);
    if (row.status !== 'executed') throw new AppError(409, 'NOT_EXECUTED', `Action '${target}' is ${row.status}: there is nothing to revert.`, 'Only executed actions can be reverted.');
    if (row.reverted_by) throw new AppError(409, 'ALREADY_REVERTED', `Action '${target}' was already reverted by ${row.reverted_by}.`, 'Nothing to do.');
    if (!capability?.reversible || !capability.revert || row.undo === null) {
      throw new AppError(409, 'NOT_REVERSIBLE', `Action '${target}' (${row.capability}) cannot be reverted.`, 'Reversible capabilities: record_decision, record_commitment, record_learning, upsert_entity, update_entity, patch_entity, upsert_source_artifact.');
    }
    await capability.revert(ctx, row.undo);
    await sql`update substrate_actions set reverted_by = ${ctx.actionId} where id = ${target}`.execute(ctx.tx);
  }

  async #lockProposed(tx: Kysely<ControlDatabase>, actor: SubstrateActor, actionId: string): Promise<ActionRow> {
    const row = (await sql<ActionRow>`select * from substrate_actions where id = ${actionId} and user_id = ${actor.userId} for update`.execute(tx)).rows[0];
    if (!row) throw substrateErrors.actionNotFound(actionId);
    if (row.status !== 'proposed') throw substrateErrors.wrongStatus(actionId, row.status);
    return row;
  }

  async #row(db: Kysely<ControlDatabase>, actor: SubstrateActor, actionId: string): Promise<ActionRow> {
    const row = (await sql<ActionRow>`select * from substrate_actions where id = ${actionId} and user_id = ${actor.userId}`.execute(db)).rows[0];
    if (!row) throw substrateErrors.actionNotFound(actionId);
    return row;
  }

  /** The original outcome of an idempotency key: conflicts empty, requires_approval as it is now, nothing executed. */
  async #replay(actor: SubstrateActor, key: string): Promise<ProposeResult> {
    const row = (await sql<ActionRow>`select * from substrate_actions where user_id = ${actor.userId} and idempotency_key = ${key}`.execute(this.#db)).rows[0]!;
    const action = actionView(row);
    return {
      action_id: action.action_id,
      verdict: { ...action.verdict, conflicts: [] },
      requires_approval: action.requires_approval,
      ...(action.status === 'executed' ? { result: action.result } : {}),
      replay: true,
    };
  }

  /**
   * A person's own substrate user in the account, made on first use. The account's default user (where platform-key
   * agents propose) belongs to its first owner to sign in, so that owner decides what those agents propose.
   */
  async #personUser(accountId: string, personId: string, owner: boolean): Promise<string> {
    const mine = await sql<{ id: string }>`select id from substrate_users where account_id = ${accountId} and person_id = ${personId}`.execute(this.#db);
    if (mine.rows[0]) return mine.rows[0].id;
    if (owner) {
      const defaultUser = await this.#defaultUser(accountId);
      const claimed = await sql<{ id: string }>`
        update substrate_users set person_id = ${personId} where id = ${defaultUser} and person_id is null
          and not exists (select 1 from substrate_users where account_id = ${accountId} and person_id = ${personId})
        returning id`.execute(this.#db).catch(unlessRaced);
      if (claimed.rows[0]) return claimed.rows[0].id;
    }
    await sql`insert into substrate_users (account_id, name, person_id)
      select ${accountId}, p.email, p.id from persons p where p.id = ${personId}
      on conflict (account_id, person_id) where person_id is not null do nothing`.execute(this.#db);
    // A concurrent first call may have made it (or claimed the default user): read it in a statement of its own.
    return (await sql<{ id: string }>`select id from substrate_users where account_id = ${accountId} and person_id = ${personId}`.execute(this.#db)).rows[0]!.id;
  }

  async #defaultUser(accountId: string): Promise<string> {
    const known = this.#defaultUsers.get(accountId);
    if (known) return known;
    const { rows } = await sql<{ id: string }>`
      insert into substrate_users (account_id, name, is_default) values (${accountId}, 'owner', true)
      on conflict (account_id) where is_default do nothing returning id`.execute(this.#db);
    // A concurrent first call may have made it: read it in a statement of its own, which sees that commit.
    const id =
      rows[0]?.id ?? (await sql<{ id: string }>`select id from substrate_users where account_id = ${accountId} and is_default`.execute(this.#db)).rows[0]!.id;
    if (this.#defaultUsers.size > 10_000) this.#defaultUsers.clear();
    this.#defaultUsers.set(accountId, id);
    return id;
  }
}

/**
 * Whether an app's end users may decide now: a person let them, the app is linked to that person's own substrate user,
 * and the person is still a member of the account who may link apps (developer or above). A consent whose person left,
 * was demoted to viewer or whose app was linked elsewhere holds nothing, with no write needed when that happens.
 */
function endUsersDecide(apps: RawBuilder<unknown>) {
  return sql<boolean>`(${apps}.substrate_end_users_decide_by is not null and exists (
    select 1 from substrate_users u join account_members m on m.account_id = u.account_id and m.person_id = u.person_id
    where u.id = ${apps}.substrate_user_id and u.person_id = ${apps}.substrate_end_users_decide_by and m.role <> 'viewer'))`;
}

/** A concurrent first call of the same person took the row first (unique violation): no rows, the caller reads theirs. */
function unlessRaced(err: unknown): { rows: { id: string }[] } {
  if ((err as { code?: string }).code === '23505') return { rows: [] };
  throw err;
}

/** A principle scoped to a capability that does not exist would govern nothing: refused, naming the known ones. */
function checkPrincipleScope(payload: Record<string, unknown>): void {
  const scope = (payload.applies_to as { capabilities?: string[] } | undefined)?.capabilities ?? [];
  const unknown = scope.filter((c) => !capabilities.has(c));
  if (unknown.length) {
    throw errors.validation(`applies_to.capabilities names unknown capabilities: ${unknown.join(', ')}; known: ${[...capabilities.keys()].join(', ')}.`, [
      { path: 'payload.applies_to.capabilities', message: 'unknown capability' },
    ]);
  }
}

/**
 * The type of the entity a proposal is about: `payload.type` (upsert_entity), else the entity named by `id` or
 * `loser_id` (aliases followed); null for proposals about no entity.
 */
async function entityTypeOf(tx: Kysely<ControlDatabase>, userId: string, payload: Record<string, unknown>): Promise<string | null> {
  if (typeof payload.type === 'string') return payload.type;
  const id = typeof payload.id === 'string' ? payload.id : typeof payload.loser_id === 'string' ? payload.loser_id : null;
  if (!id?.startsWith('ent_')) return null;
  const entity = await findEntity(tx, userId, id);
  return entity?.type ?? null;
}

/** A list shows payloads and results up to this size; larger ones are in GET actions/{action_id}. */
const LIST_VALUE_MAX_BYTES = 8192;

function compact(action: ActionView): ActionView {
  const shrink = (value: unknown) => {
    const bytes = Buffer.byteLength(JSON.stringify(value ?? null));
    return bytes > LIST_VALUE_MAX_BYTES ? { omitted: true, bytes } : value;
  };
  return { ...action, payload: shrink(action.payload), result: shrink(action.result) };
}

/** A proposer may always ask for a person's approval, even where the policy would execute at once (never the reverse). */
function askedForPerson(verdict: Verdict, asked: boolean): Verdict {
  if (!asked || (verdict.result !== 'auto_approved' && verdict.result !== 'auto_approved_yolo')) return verdict;
  return { ...verdict, result: 'requires_approval', reason: "the proposer asked for a person's approval" };
}

/** What revert_action would accept now: executed, by a reversible capability that left its undo, not reverted yet. */
function isRevertible(r: ActionRow): boolean {
  const capability = capabilities.get(r.capability);
  return r.status === 'executed' && r.reverted_by === null && r.undo !== null && !!capability?.reversible && !!capability.revert;
}

function actionView(r: ActionRow): ActionView {
  return {
    action_id: r.id,
    capability: r.capability,
    payload: r.payload,
    status: r.status,
    proposer_kind: r.proposer_kind,
    source_app_id: r.source_app_id,
    source_rule_id: r.source_rule_id,
    // Written by #proposeOnce: the policy's decision (decide).
    verdict: r.verdict as unknown as Verdict,
    requires_approval: r.status === 'proposed',
    dangerously_skip_approval: r.skip_approval,
    result: r.result,
    reverted_by: r.reverted_by,
    revertible: isRevertible(r),
    reject_reason: r.reject_reason,
    decided_via: r.decided_via as ActionView['decided_via'],
    decided_by: r.decided_by,
    ...(r.decided_by_end_user ? { decided_by_end_user: r.decided_by_end_user } : {}),
    idempotency_key: r.idempotency_key,
    created_at: r.created_at.toISOString(),
    decided_at: r.decided_at ? r.decided_at.toISOString() : null,
    executed_at: r.executed_at ? r.executed_at.toISOString() : null,
  };
}
