// Meeting bots: the service the tools, the provider's webhook route and the forwarding job reach. The parts live
// beside it: bots.ts (spawn, read, list, leave), events.ts (provider events), forwarding.ts (the app's webhook).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import type { AppRecord } from '../apps/types.ts';
import { MeetingBots, type ListQuery } from './bots.ts';
import { applyProviderEvent, type EventOutcome } from './events.ts';
import { MeetingForwarding, type DeliveryStatus } from './forwarding.ts';
import { meetingsErrors } from './errors.ts';
import { estimateUsd, usdString, type Dimension } from './pricing.ts';
import { WebhookSignatureError, type MeetingsProvider, type WebhookHeaders } from './provider.ts';
import type { SpawnRequest } from './types.ts';
import type { ControlDatabase } from '../db/types.ts';

/** The spec's "last 100 rows". */
const USAGE_ROWS = 100;

export interface MeetingsDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  credits: CreditLedger;
  config: Config;
  log: Logger;
  /** The bot provider the composition root built from the configuration (undefined: none configured). */
  provider: MeetingsProvider | undefined;
}

export interface UsageView {
  id: string;
  bot_id: string;
  dimension: Dimension;
  seconds: number;
  usd_charged: string;
  created_at: string;
}

type UsageRow = Pick<Selectable<ControlDatabase['meeting_usage']>, 'id' | 'bot_id' | 'dimension' | 'seconds' | 'usd_nanos' | 'created_at'>;

function usageView(r: UsageRow): UsageView {
  return { id: r.id, bot_id: r.bot_id, dimension: r.dimension, seconds: r.seconds, usd_charged: usdString(Number(r.usd_nanos)), created_at: r.created_at.toISOString() };
}

export class MeetingsService {
  readonly bots: MeetingBots;
  readonly forwarding: MeetingForwarding;
  readonly #db: Kysely<ControlDatabase>;
  readonly #config: Config;
  readonly #credits: CreditLedger;
  readonly #provider: MeetingsProvider | undefined;

  constructor(deps: MeetingsDeps) {
    this.#db = deps.db;
    this.#config = deps.config;
    this.#credits = deps.credits;
    this.#provider = deps.provider;
    this.bots = new MeetingBots({ db: deps.db, credits: deps.credits, config: deps.config.meetings, provider: this.#provider, log: deps.log });
    this.forwarding = new MeetingForwarding({ db: deps.db, box: deps.box, config: deps.config, log: deps.log });
  }

  status(): { available: boolean } {
    return { available: this.#provider !== undefined };
  }

  spawn(app: AppRecord, request: SpawnRequest) {
    return this.bots.spawn(app, request);
  }

  estimate(durationMinutes: number, transcript: boolean): { usd: number } {
    this.bots.requireProvider();
    return { usd: estimateUsd(this.#config.meetings, durationMinutes, transcript) };
  }

  async usage(appId: string): Promise<{ rows: UsageView[] }> {
    this.bots.requireProvider();
    const { rows } = await sql<UsageRow>`
      select id, bot_id, dimension, seconds, usd_nanos::text, created_at from meeting_usage where app_id = ${appId}
      order by created_at desc, id desc limit ${USAGE_ROWS}`.execute(this.#db);
    return { rows: rows.map(usageView) };
  }

  list(appId: string, q: ListQuery) {
    return this.bots.list(appId, q);
  }

  configureWebhook(appId: string, input: { forward_url?: string | undefined; rotate_secret?: boolean | undefined }) {
    this.bots.requireProvider();
    return this.forwarding.configure(appId, input);
  }

  deliveries(appId: string, q: { status?: DeliveryStatus | undefined; limit: number }) {
    this.bots.requireProvider();
    return this.forwarding.list(appId, q);
  }

  /**
   * POST /webhooks/meetings/recall: verified on the raw bytes with SVC_MEETINGS_WEBHOOK_SECRET, then applied once
   * per Svix message id. An event about something else than a bot is acknowledged and ignored.
   */
  async receiveWebhook(body: Buffer, headers: WebhookHeaders): Promise<EventOutcome> {
    const secret = this.#config.meetings.webhookSecret;
    if (!this.#provider || !secret) throw meetingsErrors.providerUnavailable();
    let eventId: string;
    try {
      eventId = this.#provider.verifyWebhook(body, headers, secret);
    } catch (err) {
      if (err instanceof WebhookSignatureError) throw meetingsErrors.webhookSignature(err.message);
      throw err;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      throw meetingsErrors.webhookNotJson();
    }
    const event = this.#provider.parseEvent(payload);
    if (!event) return { handled: false };
    return applyProviderEvent(
      {
        db: this.#db,
        credits: this.#credits,
        prices: this.#config.meetings,
        forwarding: this.forwarding,
        release: (tx, accountId, reservationId, botId) => this.bots.release(accountId, reservationId, botId, tx),
      },
      eventId,
      event,
    );
  }
}
