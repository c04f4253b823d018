// AI usage rows (ai_usage): one per gateway call, written with its meters and its credit charge in one transaction.
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { DURABLE_MARK, type SetStatement } from '../credits/balance-queue.ts';
import { CreditLedger, insufficientCredits, type AdvanceTerms } from '../credits/ledger.ts';
import { NANOS_PER_USD } from '../core/money.ts';
import type { ControlDatabase } from '../db/types.ts';

export type AiCallKind = 'chat' | 'embedding';
export type AiCallStatus = 'ok' | 'error' | 'aborted';

export interface TokenCounts {
  prompt: number;
  completion: number;
}

/** A call about to be made: its usage row is written (and, with the platform's key, charged) at the worst case. */
export interface AiCallStart {
  appId: string;
  accountId: string;
  endUserId: string | null;
  kind: AiCallKind;
  model: string;
  /** The estimate: the prompt's rough size and the most output tokens the call may take. */
  tokens: TokenCounts;
  /** The worst case's price (0 with the app's own key, which pays no credits). */
  costNanos: number;
  ownKey: boolean;
  /** How long the row may hold its worst case before the meter job takes it as it is (its process died). */
  settleWithinSeconds: number;
}

/** What the call's start wrote, for settleAiCall. */
export interface AiCallAdvance {
  usageId: string;
  /** The row's created_at as Postgres wrote it: with the id, what tells the row from one that reused a lost id. */
  createdAt: string;
  /** The charge made in advance, or null (own key, or a worst case of nothing). */
  chargeId: string | null;
  /** How the account is billed, as the advance was; null with the app's own key. */
  terms: AdvanceTerms | null;
}

/** How the call ended. */
export interface AiCallEnd {
  tokens: TokenCounts;
  costNanos: number;
  latencyMs: number;
  status: AiCallStatus;
  httpStatus: number | null;
  /** End-user tokens held against the day's budget before the call; the real count replaces them. */
  userTokensHeld: number;
}

export interface UsageTotals {
  tokens: number;
  cost: number;
  requests: number;
}

export interface DayUsage extends UsageTotals {
  /** A UTC day, YYYY-MM-DD. */
  date: string;
}

export interface AiUsageReport {
  startDate: string;
  endDate: string;
  totalTokens: number;
  totalCost: number;
  /** Cost of the calls made with the platform's key: what the account's AI credits paid. */
  creditsUsed: number;
  byModel: Record<string, UsageTotals>;
  /** End-user calls only, by end-user id: the USAGE_TOP_USERS who used the most tokens. */
  byUser: Record<string, UsageTotals>;
  /** The end users beyond byUser, added up (null when byUser holds them all). */
  otherUsers: (UsageTotals & { users: number }) | null;
  /** The days that had calls, oldest first. */
  byDay: DayUsage[];
}

/** End users listed one by one in a usage report: an app with many end users would otherwise answer megabytes. */
export const USAGE_TOP_USERS = 50;

const USAGE_REF = 'ai_usage:';

/**
 * Writes the call's usage row at its worst case before the upstream is asked and, with the platform's key, charges
 * that worst case in the same statement (CreditLedger.chargesInAdvance): refused (402) when the account cannot cover
 * it. So an answered call is billed even when its process dies before settleAiCall, which corrects both in place.
 * A platform-key call goes in the account's queue, in one statement with the account's calls that arrive beside it,
 * committed without waiting for the WAL flush (Postgres flushes it within a fraction of a second, and the
 * correction's durable write takes it along); should a database crash lose it first, the settlement writes the row and its
 * charge afresh.
 */
export async function startAiCall(db: Kysely<ControlDatabase>, ledger: CreditLedger, call: AiCallStart, known?: AdvanceTerms): Promise<AiCallAdvance> {
  if (call.ownKey) {
    const row = sql`${call.appId}, ${call.accountId}::uuid, ${call.endUserId}::uuid, ${call.kind}, ${call.model}, ${call.tokens.prompt}::int, ${call.tokens.completion}::int,
      ${call.tokens.prompt + call.tokens.completion}::int, ${call.costNanos}::bigint, true, 0, 'ok', null::int, now() + make_interval(secs => ${call.settleWithinSeconds}::int)`;
    const { rows } = await sql<{ usage_id: string; created_at: string }>`
      insert into ai_usage (${USAGE_COLUMNS}, settle_by) values (${row}) returning id::text as usage_id, created_at::text
    `.execute(db);
    return { usageId: rows[0]!.usage_id, createdAt: rows[0]!.created_at, chargeId: null, terms: null };
  }
  const terms = known ?? (await ledger.advanceTerms(call.accountId, call.costNanos));
  const [advance] = await ledger.runInSet<{ usage_id: string; created_at: string; charge_id: string | null }>(call.accountId, statements(db).advances, 'before', {
    app_id: call.appId,
    account_id: call.accountId,
    end_user_id: call.endUserId,
    kind: call.kind,
    model: call.model,
    prompt: call.tokens.prompt,
    completion: call.tokens.completion,
    nanos: call.costNanos,
    settle_secs: call.settleWithinSeconds,
    capped: terms.capped,
    floor: terms.floor,
  });
  if (!advance) throw insufficientCredits(await ledger.balance(call.accountId));
  return { usageId: advance.usage_id, createdAt: advance.created_at, chargeId: advance.charge_id, terms };
}

/**
 * Whether an advance on these terms may be refused for want of credit (402): on a plan whose credits run out (free).
 * Such a call waits for its advance before the upstream is asked; any other (own key, no terms; a plan that bills
 * overage or has unlimited credits, whose advances take what is left and are never refused) asks the upstream beside
 * it, and its answer waits for it.
 */
export function advanceMayBeRefused(terms: AdvanceTerms | null): boolean {
  return terms !== null && terms.floor !== null && terms.floor > 0;
}

/** The columns a usage row is written with, in the order of startAiCall's and settleAiCall's values. */
const USAGE_COLUMNS = sql.raw(
  'app_id, account_id, end_user_id, kind, model, prompt_tokens, completion_tokens, total_tokens, cost_nanos, own_key, latency_ms, status, http_status',
);

/** The placeholder of a set statement's rows, its first parameter (see SetStatement). */
const ROWS = '$rows';

/**
 * The advances of a set of platform-key calls of one account, and the corrections of a set of calls (see
 * startAiCall and settleAiCall): fixed texts, compiled once, each prepared once per connection.
 */
interface UsageStatements {
  advances: SetStatement;
  corrections: SetStatement;
}
let compiled: UsageStatements | undefined;

function statements(db: Kysely<ControlDatabase>): UsageStatements {
  if (compiled) return compiled;
  const set = (query: RawBuilder<unknown>): SetStatement => {
    const { sql: text, parameters } = query.compile(db);
    if (parameters[0] !== ROWS) throw new Error('a set statement must bind its rows first');
    return { sql: text, parameters: parameters.slice(1) };
  };
  const advances = sql`
    with recursive calls as (
      select * from jsonb_to_recordset(${ROWS}::jsonb) as c(ord int, app_id text, account_id uuid, end_user_id uuid, kind text, model text,
        prompt int, completion int, nanos bigint, settle_secs int, capped boolean, floor bigint)
    ),
    ${CreditLedger.chargesInAdvance('ai', USAGE_REF, sql`
      usage_ids as (select ord, nextval('ai_usage_id_seq') as id from paid),
      usage as (
        insert into ai_usage (id, ${USAGE_COLUMNS}, settle_by)
        select u.id, c.app_id, c.account_id, c.end_user_id, c.kind, c.model, c.prompt, c.completion, c.prompt + c.completion, c.nanos,
          false, 0, 'ok', null, now() + make_interval(secs => c.settle_secs)
        from usage_ids u join calls c using (ord)
      )`)}
    select u.ord, u.id::text as usage_id, now()::text as created_at, ch.id::text as charge_id
    from usage_ids u left join advance_charge ch on ch.usage_ref = ${USAGE_REF}::text || u.id`;
  // A call corrected twice in one set (a retry beside its first try) is corrected once, as the second run alone would
  // change nothing. Rows are looked up one by one (lateral, limit 1): a generic plan made while the tables were small
  // would otherwise scan them whole.
  const corrections = sql`
    with recursive calls as (
      select distinct on (usage_id) * from jsonb_to_recordset(${ROWS}::jsonb) as c(ord int, usage_id bigint, created_at timestamptz,
        app_id text, account_id uuid, end_user_id uuid, kind text, model text, own_key boolean, prompt int, completion int, cost bigint,
        latency int, status text, http_status int, user_delta bigint, charge_id bigint, nanos bigint, capped boolean, billed boolean)
      order by usage_id, ord
    ),
    existing as (
      select c.ord, u.id, u.settle_by from calls c
      cross join lateral (select id, settle_by from ai_usage where id = c.usage_id and created_at = c.created_at limit 1 for update) u
    ),
    corrected as (
      update ai_usage u set (prompt_tokens, completion_tokens, total_tokens, cost_nanos, latency_ms, status, http_status, settle_by) =
        (c.prompt, c.completion, c.prompt + c.completion, c.cost, c.latency, c.status, c.http_status, null)
      from existing e join calls c using (ord) where u.id = e.id and e.settle_by is not null
      returning e.ord, u.id
    ),
    lost as (
      insert into ai_usage (id, created_at, ${USAGE_COLUMNS})
      select c.usage_id, c.created_at, c.app_id, c.account_id, c.end_user_id, c.kind, c.model, c.prompt, c.completion, c.prompt + c.completion,
        c.cost, c.own_key, c.latency, c.status, c.http_status
      from calls c where not exists (select 1 from existing e where e.ord = c.ord)
      on conflict (id) do nothing
      returning id
    ),
    target as (select ord, id, false as fresh from corrected union all select c.ord, l.id, true from lost l join calls c on c.usage_id = l.id),
    user_day as (
      insert into ai_user_daily (app_id, end_user_id, day, tokens)
      select c.app_id, c.end_user_id, (now() at time zone 'utc')::date, sum(c.user_delta)::bigint
      from target t join calls c using (ord) where c.end_user_id is not null and c.user_delta <> 0
      group by c.app_id, c.end_user_id
      on conflict (app_id, end_user_id, day) do update set tokens = greatest(0, ai_user_daily.tokens + excluded.tokens)
    ),
    ${CreditLedger.correctionsInSet('ai', USAGE_REF)}
    select c.ord, coalesce(cc.shortfall_nanos, 0)::text as shortfall from calls c left join corrected_charge cc using (ord)`;
  // Made durable after the group's commit by a transaction of its own that writes one WAL record, not the rows again:
  // its flush takes the WAL up to it (see SetStatement.durably), with the corrections' commit and the advances before.
  compiled = { advances: set(advances), corrections: { ...set(corrections), durably: DURABLE_MARK } };
  return compiled;
}

/**
 * Replaces the call's worst case by what it used: the usage row and its charge corrected in place, and the end user's
 * day by the real count, in one statement (for a platform-key call in the account's queue, in one statement with the
 * account's other corrections, made durable in the same round trip once the account's row is free). Run after the
 * answer went out. Any run after the first
 * changes nothing, so a failure of any kind may be retried: a row the advance wrote and a crash lost is written again
 * with the advance's id and time, unless another row took that id since (then the call stays unbilled: a crash of the
 * database, then a reused id, before the correction). Returns the part of the cost the account could not pay (see
 * CreditLedger.correctionsInSet). The meters (ai_tokens, and ai_credits in nano-dollars of credit charged) are added
 * to usage_daily from settled rows by the ai_usage_meter job.
 */
export async function settleAiCall(
  db: Kysely<ControlDatabase>,
  ledger: CreditLedger,
  call: AiCallStart,
  advance: AiCallAdvance,
  end: AiCallEnd,
): Promise<{ shortfallNanos: number }> {
  const row = {
    usage_id: advance.usageId,
    created_at: advance.createdAt,
    app_id: call.appId,
    account_id: call.accountId,
    end_user_id: call.endUserId,
    kind: call.kind,
    model: call.model,
    own_key: call.ownKey,
    prompt: end.tokens.prompt,
    completion: end.tokens.completion,
    cost: end.costNanos,
    latency: end.latencyMs,
    status: end.status,
    http_status: end.httpStatus,
    user_delta: end.tokens.prompt + end.tokens.completion - end.userTokensHeld,
    charge_id: advance.chargeId,
    nanos: call.ownKey ? 0 : end.costNanos,
    capped: advance.terms?.capped ?? false,
    billed: advance.terms !== null,
  };
  const { corrections } = statements(db);
  if (!advance.terms) {
    // Nothing of the account's is written: not queued.
    await db.executeQuery(CompiledQuery.raw(corrections.sql, [JSON.stringify([{ ...row, ord: 0 }]), ...corrections.parameters]));
    return { shortfallNanos: 0 };
  }
  const [corrected] = await ledger.runInSet<{ shortfall: string }>(call.accountId, corrections, 'after', row);
  return { shortfallNanos: Number(corrected?.shortfall ?? 0) };
}

/**
 * Adds up to `batch` unmetered usage rows to the ai_tokens and ai_credits meters of their app and UTC day, marking
 * them metered in the same statement; concurrent runs take disjoint rows (SKIP LOCKED). Returns the rows taken. A row
 * still holding its worst case waits for its settlement until settle_by, then is taken as it is (its process died),
 * and its settle_by cleared so that no late correction changes it.
 */
export const METER_AI_USAGE_SQL = (batch: number) => `
  with taken as (
    update ai_usage set metered = true, settle_by = null
    where id in (select id from ai_usage where not metered and (settle_by is null or settle_by < now()) order by id limit ${Math.trunc(batch)} for update skip locked)
    returning app_id, (created_at at time zone 'utc')::date as day, total_tokens, case when own_key then 0 else cost_nanos end as credits
  ),
  sums as (
    select app_id, day, sum(total_tokens)::bigint as tokens, sum(credits)::bigint as credits, count(*) as n from taken group by app_id, day
  ),
  metered as (
    insert into usage_daily (app_id, meter, day, quantity)
    select app_id, 'ai_tokens', day, tokens from sums where tokens > 0
    union all
    select app_id, 'ai_credits', day, credits from sums where credits > 0
    on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity
  )
  select coalesce(sum(n), 0)::int as taken from sums`;

/**
 * Holds `tokens` of the end user's budget for today (UTC) if they have not used it up: one conditional upsert, so
 * parallel calls of one end user are counted as they start. False when the budget is used up.
 */
export async function holdEndUserTokens(db: Kysely<ControlDatabase>, appId: string, endUserId: string, tokens: number, limit: number): Promise<boolean> {
  const { rows } = await sql<{ tokens: string }>`
    insert into ai_user_daily as d (app_id, end_user_id, day, tokens) values (${appId}, ${endUserId}, (now() at time zone 'utc')::date, ${tokens})
    on conflict (app_id, end_user_id, day) do update set tokens = d.tokens + excluded.tokens where d.tokens < ${limit}::bigint
    returning tokens::text
  `.execute(db);
  return rows.length > 0;
}

/** Gives back a hold whose call never started. */
export async function releaseEndUserTokens(db: Kysely<ControlDatabase>, appId: string, endUserId: string, tokens: number): Promise<void> {
  await sql`
    update ai_user_daily set tokens = greatest(0, tokens - ${tokens}::bigint)
    where app_id = ${appId} and end_user_id = ${endUserId} and day = (now() at time zone 'utc')::date
  `.execute(db);
}

const PERIOD = (appId: string, startDate: string, endDate: string) => sql`
  app_id = ${appId} and created_at >= (${startDate}::date)::timestamp at time zone 'utc' and created_at < (${endDate}::date + 1)::timestamp at time zone 'utc'`;

/** Sums kept in nano-dollars and converted once, so the dollars add up exactly as the rows do. */
class Sum {
  tokens = 0;
  nanos = 0;
  requests = 0;
  add(tokens: number, nanos: number, requests: number): void {
    this.tokens += tokens;
    this.nanos += nanos;
    this.requests += requests;
  }
  totals(): UsageTotals {
    return { tokens: this.tokens, cost: this.nanos / NANOS_PER_USD, requests: this.requests };
  }
}

interface SumRow {
  tokens: string;
  cost: string;
  requests: string;
}
const numbers = (r: SumRow): [number, number, number] => [Number(r.tokens), Number(r.cost), Number(r.requests)];

/** Totals between two UTC dates, both inclusive: by model and by day in one scan, the top end users in another. */
export async function usageReport(db: Kysely<ControlDatabase>, appId: string, startDate: string, endDate: string): Promise<AiUsageReport> {
  const period = PERIOD(appId, startDate, endDate);
  const { rows } = await sql<SumRow & { model: string | null; day: string | null; own_key: boolean | null }>`
    select model, (created_at at time zone 'utc')::date::text as day, own_key,
           sum(total_tokens)::text as tokens, sum(cost_nanos)::text as cost, count(*)::text as requests
    from ai_usage where ${period}
    group by grouping sets ((model), ((created_at at time zone 'utc')::date, own_key))
  `.execute(db);
  const total = new Sum();
  const credits = new Sum();
  const byModel = new Map<string, Sum>();
  const byDay = new Map<string, Sum>();
  const sumOf = (map: Map<string, Sum>, key: string) => map.get(key) ?? map.set(key, new Sum()).get(key)!;
  for (const r of rows) {
    if (r.model !== null) sumOf(byModel, r.model).add(...numbers(r));
    else {
      sumOf(byDay, r.day!).add(...numbers(r));
      total.add(...numbers(r));
      if (!r.own_key) credits.add(...numbers(r));
    }
  }
  const users = await topUsers(db, period);
  return {
    startDate,
    endDate,
    totalTokens: total.tokens,
    totalCost: total.totals().cost,
    creditsUsed: credits.totals().cost,
    byModel: Object.fromEntries([...byModel].map(([model, s]) => [model, s.totals()])),
    ...users,
    byDay: [...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([date, s]) => ({ date, ...s.totals() })),
  };
}

/** The end users who used the most tokens, and the others added up (the window sums run over every user, before the limit). */
async function topUsers(db: Kysely<ControlDatabase>, period: ReturnType<typeof PERIOD>): Promise<Pick<AiUsageReport, 'byUser' | 'otherUsers'>> {
  const { rows } = await sql<SumRow & { end_user_id: string; users: string; all_tokens: string; all_cost: string; all_requests: string }>`
    select end_user_id::text, sum(total_tokens)::text as tokens, sum(cost_nanos)::text as cost, count(*)::text as requests,
           count(*) over ()::text as users, sum(sum(total_tokens)) over ()::text as all_tokens,
           sum(sum(cost_nanos)) over ()::text as all_cost, sum(count(*)) over ()::text as all_requests
    from ai_usage where ${period} and end_user_id is not null
    group by end_user_id order by sum(total_tokens) desc, end_user_id limit ${USAGE_TOP_USERS}
  `.execute(db);
  const listed = new Sum();
  const byUser: Record<string, UsageTotals> = {};
  for (const r of rows) {
    const user = new Sum();
    user.add(...numbers(r));
    listed.add(...numbers(r));
    byUser[r.end_user_id] = user.totals();
  }
  const first = rows[0];
  if (!first || Number(first.users) <= rows.length) return { byUser, otherUsers: null };
  const others = new Sum();
  others.add(Number(first.all_tokens) - listed.tokens, Number(first.all_cost) - listed.nanos, Number(first.all_requests) - listed.requests);
  return { byUser, otherUsers: { users: Number(first.users) - rows.length, ...others.totals() } };
}
