// Forwarding provider events to the app's own webhook: its configuration (URL and a wsec_ secret sealed at rest), the
// deliveries (written with their graphile-worker job in the transaction that applied the event), one attempt per job
// run, retried with backoff by graphile-worker and dead after the attempt limit, and their list.
import { createHmac } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { generateKey, type SecretBox } from '../core/crypto.ts';
import { checkOutboundUrl, parseOutboundUrl, postOutbound } from '../core/outbound.ts';
import { meetingsErrors } from './errors.ts';
import { enqueue } from '../core/jobs.ts';
import { meetingsForward } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';


export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

export interface WebhookResult {
  ok: true;
  app_id: string;
  forward_url: string;
  /** Only when minted (first configuration, rotation); null otherwise: the secret is never shown again. */
  secret: string | null;
}

export interface DeliveryView {
  id: string;
  bot_id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

type ForwardRow = Selectable<ControlDatabase['meeting_forwards']>;
type DeliveryRow = Pick<ForwardRow, 'id' | 'bot_id' | 'event' | 'status' | 'attempts' | 'last_status' | 'last_error' | 'created_at' | 'delivered_at'>;

function deliveryView(r: DeliveryRow): DeliveryView {
  return { ...r, created_at: r.created_at.toISOString(), delivered_at: r.delivered_at?.toISOString() ?? null };
}

/** `v1,` and the base64 HMAC-SHA256 of the raw body keyed with the app's secret (the whole wsec_... string). */
export function forwardSignature(secret: string, body: string): string {
  return `v1,${createHmac('sha256', secret).update(body).digest('base64')}`;
}

export interface ForwardingDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  config: Config;
  log: Logger;
}

export class MeetingForwarding {
  readonly #deps: ForwardingDeps;

  constructor(deps: ForwardingDeps) {
    this.#deps = deps;
  }

  /** PUT webhook: sets the URL (checked against internal addresses) and mints a secret when asked or when there was none. */
  async configure(appId: string, input: { forward_url?: string | undefined; rotate_secret?: boolean | undefined }): Promise<WebhookResult> {
    const { db, box, config } = this.#deps;
    const existing = (await sql<{ forward_url: string }>`select forward_url from meeting_webhooks where app_id = ${appId}`.execute(db)).rows[0];
    if (!existing && input.forward_url === undefined) throw meetingsErrors.noForwardUrl();
    let url = existing?.forward_url;
    if (input.forward_url !== undefined) {
      const parsed = parseOutboundUrl(input.forward_url, 'forward_url');
      await checkOutboundUrl(parsed, config.outboundAllowPrivate, 'forward_url');
      url = parsed.toString();
    }
    const secret = !existing || input.rotate_secret === true ? generateKey('wsec_') : null;
    const sealed = secret === null ? null : box.seal(secret);
    // Without a new secret the row exists (a first configuration always mints one): the conflict branch keeps its secret.
    await sql`
      insert into meeting_webhooks (app_id, forward_url, secret_sealed) values (${appId}, ${url!}, ${sealed ?? ''})
      on conflict (app_id) do update set forward_url = excluded.forward_url, updated_at = now(),
        secret_sealed = coalesce(${sealed}::text, meeting_webhooks.secret_sealed)`.execute(db);
    return { ok: true, app_id: appId, forward_url: url!, secret };
  }

  /** In the transaction that applied the event: a delivery and its job, when the app forwards at all. */
  async enqueue(tx: Kysely<ControlDatabase>, appId: string, botId: string, event: string, body: string): Promise<void> {
    const { rows } = await sql<{ id: string }>`
      insert into meeting_forwards (app_id, bot_id, event, body)
      select ${appId}, ${botId}::uuid, ${event}, ${body} where exists (select 1 from meeting_webhooks where app_id = ${appId})
      returning id`.execute(tx);
    if (!rows[0]) return;
    await enqueue(tx, meetingsForward, { forward_id: rows[0].id }, { jobKey: `mfw:${rows[0].id}`, maxAttempts: this.#deps.config.outbox.maxAttempts });
  }

  /**
   * One attempt (the job): POST the stored body to the app's current URL, signed with its current secret. A non-2xx
   * answer or a network failure is recorded and thrown, so graphile-worker retries; the last attempt marks it dead.
   * A delivery no longer pending is left alone, so a job run twice sends nothing twice.
   */
  async deliver(id: string, attempt: { number: number; max: number }): Promise<void> {
    const { db, box } = this.#deps;
    const row = (await sql<Pick<ForwardRow, 'body' | 'event' | 'status'> & { forward_url: string | null; secret_sealed: string | null }>`
      select f.body, f.event, f.status, w.forward_url, w.secret_sealed from meeting_forwards f
      left join meeting_webhooks w on w.app_id = f.app_id where f.id = ${id}::uuid`.execute(db)).rows[0];
    if (!row || row.status !== 'pending') return;
    const outcome = row.forward_url && row.secret_sealed ? await this.#post(id, row.forward_url, box.open(row.secret_sealed), row) : { status: null, error: 'no forward_url configured' };
    const last = attempt.number >= attempt.max || !row.forward_url;
    await this.#record(id, outcome, last);
    if (outcome.error !== null && !last) throw new Error(`meeting forward ${id} failed (attempt ${attempt.number} of ${attempt.max}): ${outcome.error}`);
  }

  async list(appId: string, q: { status?: DeliveryStatus | undefined; limit: number }): Promise<{ deliveries: DeliveryView[] }> {
    const { rows } = await sql<DeliveryRow>`
      select id, bot_id, event, status, attempts, last_status, last_error, created_at, delivered_at from meeting_forwards where app_id = ${appId} and (${q.status ?? null}::text is null or status = ${q.status ?? null})
      order by created_at desc, id desc limit ${q.limit}`.execute(this.#deps.db);
    return { deliveries: rows.map(deliveryView) };
  }

  async #post(id: string, url: string, secret: string, row: { body: string; event: string }): Promise<{ status: number | null; error: string | null }> {
    const { config } = this.#deps;
    const headers = { 'x-svc-event': row.event, 'x-svc-signature': forwardSignature(secret, row.body), 'x-svc-delivery': id, 'user-agent': 'svc-platform-meetings' };
    try {
      const res = await postOutbound(new URL(url), row.body, headers, { allowPrivate: config.outboundAllowPrivate, timeoutMs: config.outbox.timeoutMs });
      const ok = res.status >= 200 && res.status < 300;
      return { status: res.status, error: ok ? null : `answered ${res.status}: ${res.excerpt.slice(0, 200)}` };
    } catch (err) {
      return { status: null, error: err instanceof Error ? err.message.slice(0, 300) : String(err) };
    }
  }

  async #record(id: string, outcome: { status: number | null; error: string | null }, last: boolean): Promise<void> {
    const status: DeliveryStatus = outcome.error === null ? 'delivered' : last ? 'dead' : 'pending';
    await sql`update meeting_forwards set status = ${status}, attempts = attempts + 1, last_status = ${outcome.status}, last_error = ${outcome.error},
      delivered_at = ${status === 'delivered' ? sql`now()` : null}, updated_at = now() where id = ${id}::uuid and status = 'pending'`.execute(this.#deps.db);
    if (status === 'dead') this.#deps.log.warn({ forward_id: id, error: outcome.error }, 'meeting forward is dead');
  }
}
