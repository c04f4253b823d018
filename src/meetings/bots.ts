// Spawning, reading, listing and dismissing an app's meeting bots. The provider is called only after the account's
// credit is held (402 otherwise, nothing sent); the hold is settled by the session's charge when it is done, or
// released when it fails.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { AppError } from '../core/errors.ts';
import { usd } from '../core/money.ts';
import type { CreditLedger, Reservation } from '../credits/ledger.ts';
import type { AppRecord } from '../apps/types.ts';
import type { MeetingsProvider, TranscriptSegment } from './provider.ts';
import { meetingsErrors, viaProvider } from './errors.ts';
import { sessionNanos } from './pricing.ts';
import { pastCall, type BotStatus } from './states.ts';
import { botView, NO_MEDIA, RESERVED_METADATA_PREFIX, type BotRow, type BotView, type SpawnRequest } from './types.ts';
import type { ControlDatabase } from '../db/types.ts';

/** The credit held at spawn: what an hour of the session would cost, or what is left (a session is charged at most what the account has). */
const HOLD_SECONDS = 3600;
/** Sessions rarely outlive a day; a hold still open then is released by credits_release_expired (the charge still comes). */
const HOLD_TTL_SECONDS = 26 * 3600;

export interface ListQuery {
  status?: BotStatus | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** What the app's delete left in the meetings_leave_orphan job of a bot still running (db/migrations/0021). */
export interface OrphanBot {
  botId: string;
  providerBotId: string;
  accountId: string;
  reservationId: string | null;
  transcript: boolean;
  status: BotStatus;
  startedAt: Date | null;
  completedAt: Date | null;
}

export interface BotDeps {
  db: Kysely<ControlDatabase>;
  credits: CreditLedger;
  config: Config['meetings'];
  provider: MeetingsProvider | undefined;
  log: Logger;
}

export class MeetingBots {
  readonly #deps: BotDeps;

  constructor(deps: BotDeps) {
    this.#deps = deps;
  }

  /** The provider, or 501: every meetings route but _status needs one. */
  requireProvider(): MeetingsProvider {
    if (!this.#deps.provider) throw meetingsErrors.providerUnavailable();
    return this.#deps.provider;
  }

  async spawn(app: AppRecord, request: SpawnRequest): Promise<BotView> {
    const provider = this.requireProvider();
    const id = randomUUID();
    const recording = request.recording === false ? 'none' : request.recording;
    const botName = request.botName ?? this.#deps.config.defaultBotName;
    const reservation = await this.#hold(app.account_id, request.transcript);
    let created: { id: string } | undefined;
    try {
      created = await viaProvider(() =>
        provider.createBot({
          meetingUrl: request.meetingUrl,
          botName,
          transcript: request.transcript,
          recording,
          automaticLeave: request.automaticLeave,
          // Our keys let anyone reading the provider's dashboard trace a bot back to its app.
          metadata: { ...request.metadata, [`${RESERVED_METADATA_PREFIX}app_id`]: app.id, [`${RESERVED_METADATA_PREFIX}bot_id`]: id },
        }),
      );
      const { rows } = await sql<BotRow>`
        insert into meeting_bots (id, app_id, provider_bot_id, bot_name, meeting_url, metadata, transcript, recording, automatic_leave, reservation_id)
        values (${id}, ${app.id}, ${created.id}, ${botName}, ${request.meetingUrl}, ${JSON.stringify(request.metadata)}::jsonb, ${request.transcript},
                ${recording}, ${JSON.stringify(request.automaticLeave)}::jsonb, ${reservation?.id ?? null})
        returning *`.execute(this.#deps.db);
      return botView(rows[0]!, NO_MEDIA);
    } catch (err) {
      await this.release(app.account_id, reservation?.id ?? null, id);
      // A bot the provider made but we could not store would run untracked and unbilled: it is told to leave.
      if (created) await provider.leaveCall(created.id).catch((leaveErr: unknown) => this.#deps.log.error({ err: leaveErr, provider_bot_id: created?.id }, 'could not remove an unstored bot'));
      throw err;
    }
  }

  /** One bot; a done bot's recording and transcript URLs are asked of the provider on every read (they expire). */
  async get(appId: string, botId: string): Promise<BotView> {
    const provider = this.requireProvider();
    const row = await this.#row(appId, botId);
    if (row.status !== 'done') return botView(row, NO_MEDIA);
    return botView(row, await viaProvider(() => provider.media(row.provider_bot_id, row.recording)));
  }

  /**
   * A done bot's transcript, read from the provider and normalized: speaker turns with their times, and the whole as
   * text ("speaker: words" per line). 409 TRANSCRIPT_NOT_READY before the bot is done or when it records no transcript.
   */
  async transcript(appId: string, botId: string): Promise<{ bot_id: string; segments: TranscriptSegment[]; text: string }> {
    const provider = this.requireProvider();
    const row = await this.#row(appId, botId);
    const notReady = (why: string) => new AppError(409, 'TRANSCRIPT_NOT_READY', `Bot '${row.id}' has no transcript: ${why}.`, 'Wait for the bot.done event (or meetings_get status done), then ask again.');
    if (!row.transcript) throw notReady('it was sent with transcript: false');
    if (row.status !== 'done') throw notReady(`it is ${row.status}`);
    const segments = await viaProvider(() => provider.transcript(row.provider_bot_id, row.recording));
    if (!segments) throw notReady('the provider has not made it yet');
    return { bot_id: row.id, segments, text: segments.map((s) => `${s.speaker}: ${s.text}`).join('\n') };
  }

  /** Newest first; URLs are null in lists (read one bot for them). The cursor is the last bot's id, opaque. */
  async list(appId: string, q: ListQuery): Promise<{ bots: BotView[]; nextCursor: string | null }> {
    this.requireProvider();
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
    const { rows } = await sql<BotRow>`
      select * from meeting_bots b
      where b.app_id = ${appId} and (${q.status ?? null}::text is null or b.status = ${q.status ?? null})
        and (${after}::uuid is null or (b.created_at, b.id) < (select created_at, id from meeting_bots where id = ${after}::uuid and app_id = ${appId}))
      order by b.created_at desc, b.id desc
      limit ${q.limit + 1}`.execute(this.#deps.db);
    const page = rows.slice(0, q.limit);
    const more = rows.length > q.limit;
    return { bots: page.map((r) => botView(r, NO_MEDIA)), nextCursor: more ? encodeCursor(page[page.length - 1]!.id) : null };
  }

  /** Asks the provider to take the bot out of the call; a bot whose call is over needs nothing. Idempotent. */
  async leave(appId: string, botId: string): Promise<void> {
    const provider = this.requireProvider();
    const row = await this.#row(appId, botId);
    if (pastCall(row.status)) return;
    await viaProvider(() => provider.leaveCall(row.provider_bot_id));
    await sql`update meeting_bots set leave_requested_at = coalesce(leave_requested_at, now()), updated_at = now() where id = ${row.id}`.execute(this.#deps.db);
  }

  /**
   * A bot of a deleted app (its rows are gone with the app): told to leave its call unless it already has, and the
   * time it ran charged once, with or without a hold (an enterprise account has none; a long session's may have
   * expired). The ledger row is the proof: a second run finds it and charges nothing.
   */
  async leaveOrphan(bot: OrphanBot, now = new Date()): Promise<void> {
    if (this.#deps.provider && !pastCall(bot.status)) await viaProvider(() => this.#deps.provider!.leaveCall(bot.providerBotId));
    const end = bot.completedAt ?? now;
    const seconds = bot.startedAt ? Math.max(0, Math.ceil((end.getTime() - bot.startedAt.getTime()) / 1000)) : 0;
    const nanos = sessionNanos(this.#deps.config, bot.transcript, seconds);
    const usageRef = `meeting_bot:${bot.botId}`;
    await this.#deps.db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${usageRef}))`.execute(tx);
      const charged = await sql`select 1 from credit_ledger where account_id = ${bot.accountId} and usage_ref = ${usageRef}`.execute(tx);
      if (charged.rows.length) return;
      const held = bot.reservationId ? (await sql`select 1 from credit_reservations where id = ${bot.reservationId} for update`.execute(tx)).rows.length > 0 : false;
      const hold = held ? { id: bot.reservationId!, accountId: bot.accountId } : undefined;
      await this.#deps.credits.settle(tx, bot.accountId, hold, nanos, 'meetings', usageRef);
    });
    this.#deps.log.info({ bot_id: bot.botId, account_id: bot.accountId, seconds }, 'bot of a deleted app: left and charged');
  }

  /** Gives a hold back without charging (a spawn that failed, a session that ended in fatal). */
  async release(accountId: string, reservationId: string | null, botId: string, tx: Kysely<ControlDatabase> = this.#deps.db): Promise<void> {
    if (!reservationId) return;
    await this.#deps.credits.settle(tx, accountId, { id: reservationId, accountId }, 0, 'meetings', `meeting_bot:${botId}`);
  }

  async #hold(accountId: string, transcript: boolean): Promise<Reservation | undefined> {
    const prices = this.#deps.config;
    const nanos = sessionNanos(prices, transcript, HOLD_SECONDS);
    try {
      // A session's length is unknown: the hold is an hour or what is left, and the spec refuses only an empty balance.
      return await this.#deps.credits.reserve(accountId, nanos, HOLD_TTL_SECONDS, { upTo: true });
    } catch (err) {
      // The ledger's refusal speaks of AI credits; the balance fields are the spec's for meetings too.
      if (err instanceof AppError && err.code === 'INSUFFICIENT_CREDITS') throw meetingsErrors.insufficientCredits(await this.#availableCredit(accountId));
      throw err;
    }
  }

  /**
   * The 402's figures: the balance is what calls in flight do not hold, the amount the refusal was decided on (the
   * whole balance beside a floor of 0 would read as a contradiction).
   */
  async #availableCredit(accountId: string): Promise<{ balance_usd: number; credit_floor_usd: number }> {
    const { balanceNanos, reservedNanos } = await this.#deps.credits.balance(accountId);
    return { balance_usd: usd(Math.max(0, balanceNanos - reservedNanos)), credit_floor_usd: 0 };
  }

  async #row(appId: string, botId: string): Promise<BotRow> {
    const { rows } = await sql<BotRow>`select * from meeting_bots where id = ${botId}::uuid and app_id = ${appId}`.execute(this.#deps.db);
    if (!rows[0]) throw meetingsErrors.botNotFound(botId);
    return rows[0];
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function encodeCursor(id: string): string {
  return Buffer.from(id).toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!UUID_RE.test(id)) throw meetingsErrors.badCursor();
  return id;
}
