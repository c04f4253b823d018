// The provider's webhook events applied to our bots, each in one transaction: the event id recorded (a redelivery
// changes nothing), the bot moved (states.ts decides), the forward queued, and on done the session's usage rows with
// their credit charges; on fatal the credit hold is given back.
import { AppError } from '../core/errors.ts';
import { isUuid } from '../core/uuid.ts';
import { sql, type Kysely } from 'kysely';
import type { CreditLedger, Reservation } from '../credits/ledger.ts';
import type { MeetingForwarding } from './forwarding.ts';
import { chargeNanos, dimensionsOf, type MeetingPrices } from './pricing.ts';
import type { ArtifactRef, ProviderEvent } from './provider.ts';
import { inCall, moves, pastCall, statusOfCode, type BotStatus } from './states.ts';
import { FORWARDED_EVENTS, type BotRow } from './types.ts';
import type { ControlDatabase } from '../db/types.ts';

export interface EventOutcome {
  /** false: a redelivery of an event already applied, or an event about no bot of ours. */
  handled: boolean;
  /** The bot's status after the event, when the event was about one of our bots. */
  status?: BotStatus;
}

export interface EventDeps {
  db: Kysely<ControlDatabase>;
  credits: CreditLedger;
  prices: MeetingPrices;
  forwarding: MeetingForwarding;
  /** Gives the spawn's credit hold back without a charge. */
  release: (tx: Kysely<ControlDatabase>, accountId: string, reservationId: string | null, botId: string) => Promise<void>;
}

type LockedBot = BotRow & { account_id: string };

export async function applyProviderEvent(deps: EventDeps, eventId: string, event: ProviderEvent): Promise<EventOutcome> {
  return deps.db.transaction().execute(async (tx) => {
    const bot = (await sql<LockedBot>`
      select b.*, a.account_id from meeting_bots b join apps a on a.id = b.app_id
      where b.provider_bot_id = ${event.providerBotId} for update of b`.execute(tx)).rows[0];
    // Not recorded as seen: a fresh event may be about a bot whose spawn has not stored it yet (the provider answers
    // the create call after its first events can be sent), so the provider is asked to send it again.
    if (!bot) return unknownBot(event);
    const fresh = await sql`insert into meeting_provider_events (id, event, provider_bot_id) values (${eventId}, ${event.event}, ${event.providerBotId})
      on conflict (id) do nothing returning id`.execute(tx);
    if (fresh.rows.length === 0) return { handled: false };
    const next = event.event.startsWith('bot.') ? statusOfCode(event.code) : undefined;
    const at = new Date(event.updatedAt);
    const moved = next !== undefined && moves(bot.status, bot.status_at, next, at);
    if (moved) await moveBot(deps, tx, bot, next, event, at);
    // Status events are forwarded when they moved the bot (a late one changes nothing and says nothing); artifact
    // events (recording.done, transcript.done, ...) whenever they come.
    if (FORWARDED_EVENTS.has(event.event) && (moved || !event.event.startsWith('bot.'))) {
      await deps.forwarding.enqueue(tx, bot.app_id, bot.id, event.event, forwardBody(bot, event));
    }
    return { handled: true, status: moved ? next : bot.status };
  });
}

/** How long after an event a bot we do not know may still be one being spawned. */
const SPAWN_RACE_MS = 10 * 60_000;

/**
 * An event about a bot we do not hold: a recent one is refused with a retryable 503 (the spawn that created the bot
 * may not have stored it yet); an older one is of a bot of another deployment sharing the provider account, or of a
 * deleted app: nothing of ours. An id that is not a uuid (the provider's ids are) can never become one of ours:
 * acknowledged at once, or the provider would redeliver it for as long as it retries.
 */
function unknownBot(event: ProviderEvent): EventOutcome {
  const age = Date.now() - Date.parse(event.updatedAt);
  if (!(age < SPAWN_RACE_MS) || !isUuid(event.providerBotId)) return { handled: false };
  throw new AppError(503, 'PROVIDER_EVENT_EARLY', `No bot ${event.providerBotId} is known yet.`, 'The provider retries the delivery.', { retry_after_seconds: 5 });
}

async function moveBot(deps: EventDeps, tx: Kysely<ControlDatabase>, bot: LockedBot, next: BotStatus, event: ProviderEvent, at: Date): Promise<void> {
  const startedAt = bot.started_at ?? (inCall(next) ? at : null);
  const completedAt = bot.completed_at ?? (pastCall(next) ? at : null);
  const duration = startedAt && completedAt ? Math.max(0, Math.ceil((completedAt.getTime() - startedAt.getTime()) / 1000)) : null;
  await sql`
    update meeting_bots set status = ${next}, status_at = ${at}, status_code = ${event.code}, status_sub_code = ${event.subCode},
      started_at = ${startedAt}, completed_at = ${completedAt}, duration_seconds = ${duration}, updated_at = now()
    where id = ${bot.id}`.execute(tx);
  if (next === 'done') await chargeSession(deps, tx, bot, duration ?? 0);
  if (next === 'fatal') await deps.release(tx, bot.account_id, bot.reservation_id, bot.id);
}

/**
 * One usage row per dimension of the finished session, each with its ledger charge in this transaction; the first
 * charge settles the spawn's hold. A row that exists already (unique per bot and dimension) is not charged again.
 */
async function chargeSession(deps: EventDeps, tx: Kysely<ControlDatabase>, bot: LockedBot, seconds: number): Promise<void> {
  let hold: Reservation | undefined = bot.reservation_id ? { id: bot.reservation_id, accountId: bot.account_id } : undefined;
  for (const dimension of dimensionsOf(bot.transcript)) {
    const nanos = chargeNanos(deps.prices, dimension, seconds);
    const { rows } = await sql<{ id: string }>`
      insert into meeting_usage (app_id, bot_id, dimension, seconds, usd_nanos) values (${bot.app_id}, ${bot.id}, ${dimension}, ${seconds}, ${nanos})
      on conflict (bot_id, dimension) do nothing returning id`.execute(tx);
    if (!rows[0]) continue;
    await deps.credits.settle(tx, bot.account_id, hold, nanos, 'meetings', `meeting_usage:${rows[0].id}`);
    hold = undefined;
  }
}

/** The spec's forward body: our bot id and the caller's metadata, the provider's code; artifacts by id, never URLs. */
function forwardBody(bot: BotRow, event: ProviderEvent): string {
  const data: Record<string, unknown> = {
    bot: { id: bot.id, metadata: bot.metadata },
    data: { code: event.code, sub_code: event.subCode, updated_at: event.updatedAt },
  };
  if (event.recording) data.recording = artifactRef(event.recording);
  if (event.transcript) data.transcript = artifactRef(event.transcript);
  return JSON.stringify({ event: event.event, data });
}

const artifactRef = (a: ArtifactRef): ArtifactRef => ({ id: a.id, metadata: a.metadata });
