// The substrate outbox: webhook targets per user and capability, and the deliveries of executed actions to them,
// signed with the target's secret, retried by graphile-worker with backoff, dead after SVC_OUTBOX_MAX_ATTEMPTS.
import { createHmac, randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import { errors } from '../core/errors.ts';
import { checkOutboundUrl, parseOutboundUrl, postOutbound } from '../core/outbound.ts';
import { newId } from './ids.ts';
import type { SubstrateActor } from './types.ts';
import { enqueue } from '../core/jobs.ts';
import { substrateOutboxDeliver } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';


export interface TargetView {
  capability: string;
  webhook_url: string;
  source_app_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  action_id: string;
  capability: string;
  webhook_url: string;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryQuery {
  status?: DeliveryView['status'] | undefined;
  capability?: string | undefined;
  action_id?: string | undefined;
  limit: number;
}

/** The signature header: `sha256=` and the hex HMAC-SHA256 of the raw body with the target's signing secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class SubstrateOutbox {
  readonly #db: Kysely<ControlDatabase>;
  readonly #box: SecretBox;
  readonly #config: Config;
  readonly #log: Logger;

  constructor(deps: { db: Kysely<ControlDatabase>; box: SecretBox; config: Config; log: Logger }) {
    this.#db = deps.db;
    this.#box = deps.box;
    this.#config = deps.config;
    this.#log = deps.log;
  }

  async targets(userId: string): Promise<{ targets: TargetView[] }> {
    const { rows } = await sql<TargetRow>`select * from substrate_outbox_targets where user_id = ${userId} order by capability`.execute(this.#db);
    return { targets: rows.map(targetView) };
  }

  /** Registers or replaces the target of a capability; the URL must not point inside (unless the operator allows). */
  async setTarget(userId: string, capability: string, input: { webhook_url: string; signing_secret: string; source_app_id?: string | undefined }): Promise<TargetView> {
    const url = parseOutboundUrl(input.webhook_url, 'webhook_url');
    await checkOutboundUrl(url, this.#config.outboundAllowPrivate, 'webhook_url');
    const { rows } = await sql<TargetRow>`
      insert into substrate_outbox_targets (user_id, capability, webhook_url, signing_secret_sealed, source_app_id)
      values (${userId}, ${capability}, ${url.toString()}, ${this.#box.seal(input.signing_secret)}, ${input.source_app_id ?? null})
      on conflict (user_id, capability) do update set webhook_url = excluded.webhook_url, signing_secret_sealed = excluded.signing_secret_sealed,
        source_app_id = excluded.source_app_id, updated_at = now()
      returning *`.execute(this.#db);
    return targetView(rows[0]!);
  }

  async deleteTarget(userId: string, capability: string): Promise<void> {
    const { rows } = await sql`delete from substrate_outbox_targets where user_id = ${userId} and capability = ${capability} returning 1`.execute(this.#db);
    if (!rows.length) throw errors.notFound(`Outbox target for '${capability.slice(0, 100)}'`, 'List the targets with GET /v1/me/substrate/outbox-targets.');
  }

  /**
   * In the transaction that executed the action: a delivery row and its job, when the user has a target for the
   * capability (and, for a target scoped to an app, the action came from that app). `known`: the target as the
   * transaction already read it with another statement (null when there is none), saving the round trip of reading
   * it here.
   */
  async enqueue(tx: Kysely<ControlDatabase>, actor: SubstrateActor, action: { id: string; capability: string; payload: unknown; result: unknown }, known?: OutboxTarget | null): Promise<void> {
    const target =
      known !== undefined
        ? known
        : (
            await sql<OutboxTarget>`
              select webhook_url, source_app_id from substrate_outbox_targets where user_id = ${actor.userId} and capability = ${action.capability}`.execute(tx)
          ).rows[0];
    if (!target || (target.source_app_id !== null && target.source_app_id !== actor.sourceAppId)) return;
    const id = newId('dlv');
    const body = JSON.stringify({
      delivery_id: id,
      action_id: action.id,
      capability: action.capability,
      payload: action.payload,
      result: action.result ?? null,
      proposer_kind: actor.proposer,
      source_app_id: actor.sourceAppId,
      source_rule_id: actor.sourceRuleId,
      created_at: new Date().toISOString(),
    });
    await sql`insert into substrate_outbox_deliveries (id, user_id, action_id, capability, webhook_url, body)
      values (${id}, ${actor.userId}, ${action.id}, ${action.capability}, ${target.webhook_url}, ${body})`.execute(tx);
    await this.#addJob(tx, id, `dlv:${id}`);
  }

  /** Newest first; each filter given narrows it (a capability's deliveries, an action's). */
  async deliveries(userId: string, q: DeliveryQuery): Promise<{ deliveries: DeliveryView[] }> {
    const { rows } = await sql<DeliveryRow>`
      select * from substrate_outbox_deliveries where user_id = ${userId}
        and (${q.status ?? null}::text is null or status = ${q.status ?? null})
        and (${q.capability ?? null}::text is null or capability = ${q.capability ?? null})
        and (${q.action_id ?? null}::text is null or action_id = ${q.action_id ?? null})
      order by created_at desc, id desc limit ${q.limit}`.execute(this.#db);
    return { deliveries: rows.map(deliveryView) };
  }

  /** A dead delivery goes out again (attempts start over); a pending or delivered one is 409. */
  async redeliver(userId: string, id: string): Promise<DeliveryView> {
    return this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<DeliveryRow>`
        update substrate_outbox_deliveries set status = 'pending', attempts = 0, last_error = null, updated_at = now()
        where id = ${id} and user_id = ${userId} and status = 'dead' returning *`.execute(tx);
      if (!rows[0]) {
        const exists = await sql<{ status: string }>`select status from substrate_outbox_deliveries where id = ${id} and user_id = ${userId}`.execute(tx);
        if (!exists.rows[0]) throw errors.notFound(`Delivery '${id.slice(0, 100)}'`, 'List the deliveries with GET /v1/me/substrate/outbox-deliveries.');
        throw errors.conflict(`Delivery '${id}' is ${exists.rows[0].status}; only a dead delivery can be redelivered.`, 'Wait for a pending one; a delivered one arrived.');
      }
      await this.#addJob(tx, id, `dlv:${id}:${randomBytes(4).toString('hex')}`);
      return deliveryView(rows[0]);
    });
  }

  /**
   * One attempt (the job): POST the stored body, signed with the target's current secret. 2xx: delivered. Otherwise
   * the attempt is recorded and the job throws so graphile-worker retries it with backoff; the last attempt makes the
   * delivery dead. Safe to run twice: a delivery no longer pending is left alone.
   */
  async deliver(id: string, attempt: { number: number; max: number }): Promise<void> {
    // The target as it is now: a changed URL or secret applies to deliveries still pending (and to redeliveries).
    const row = (await sql<DeliveryRow & { secret: string | null; target_url: string | null }>`
      select d.*, t.signing_secret_sealed as secret, t.webhook_url as target_url from substrate_outbox_deliveries d
      left join substrate_outbox_targets t on t.user_id = d.user_id and t.capability = d.capability
      where d.id = ${id}`.execute(this.#db)).rows[0];
    if (!row || row.status !== 'pending') return;
    if (!row.secret) return this.#fail(row, null, 'the outbox target was removed', true);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.#box.open(row.secret);
      const res = await postOutbound(new URL(row.target_url ?? row.webhook_url), row.body, {
        'x-svc-signature': signature(secret, row.body),
        'x-svc-timestamp': String(Math.floor(Date.now() / 1000)),
        'x-svc-delivery': row.id,
        'user-agent': 'svc-platform-outbox',
      }, { allowPrivate: this.#config.outboundAllowPrivate, timeoutMs: this.#config.outbox.timeoutMs });
      status = res.status;
      if (res.status >= 200 && res.status < 300) {
        await sql`update substrate_outbox_deliveries set status = 'delivered', attempts = attempts + 1, last_status = ${res.status}, last_error = null,
          delivered_at = now(), updated_at = now() where id = ${id} and status = 'pending'`.execute(this.#db);
        return;
      }
      error = `answered ${res.status}: ${res.excerpt.slice(0, 200)}`;
    } catch (err) {
      error = err instanceof Error ? err.message.slice(0, 300) : String(err);
    }
    await this.#fail(row, status, error, attempt.number >= attempt.max);
    throw new Error(`outbox delivery ${id} failed (attempt ${attempt.number} of ${attempt.max}): ${error}`);
  }

  async #fail(row: DeliveryRow, status: number | null, error: string, last: boolean): Promise<void> {
    await sql`update substrate_outbox_deliveries set attempts = attempts + 1, last_status = ${status}, last_error = ${error},
      status = ${last ? 'dead' : 'pending'}, updated_at = now() where id = ${row.id} and status = 'pending'`.execute(this.#db);
    if (last) this.#log.warn({ delivery_id: row.id, error }, 'outbox delivery is dead');
  }

  #addJob(tx: Kysely<ControlDatabase>, id: string, key: string): Promise<unknown> {
    return enqueue(tx, substrateOutboxDeliver, { delivery_id: id }, { jobKey: key, maxAttempts: this.#config.outbox.maxAttempts });
  }
}

type TargetRow = Selectable<ControlDatabase['substrate_outbox_targets']>;

/** What a delivery needs of a capability's target. */
export type OutboxTarget = Pick<TargetRow, 'webhook_url' | 'source_app_id'>;
type DeliveryRow = Selectable<ControlDatabase['substrate_outbox_deliveries']>;

function targetView(r: TargetRow): TargetView {
  return { capability: r.capability, webhook_url: r.webhook_url, source_app_id: r.source_app_id, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() };
}

function deliveryView(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    action_id: r.action_id,
    capability: r.capability,
    webhook_url: r.webhook_url,
    status: r.status,
    attempts: r.attempts,
    last_status: r.last_status,
    last_error: r.last_error,
    created_at: r.created_at.toISOString(),
    delivered_at: r.delivered_at ? r.delivered_at.toISOString() : null,
  };
}
