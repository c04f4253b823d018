// The profile cache (people_profile_cache), keyed by normalized profile URL and shared by every app. Times come from
// the caller's clock, so that tests move it instead of waiting.
import { sql, type Kysely } from 'kysely';
import type { PeopleSlot } from '../config.ts';
import type { EnrichedProfile } from './provider.ts';
import type { ControlDatabase } from '../db/types.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Spec: Profile cache entry. A `failed` entry is never served (a miss); it records the outage for an hour. */
export const CACHE_TTL_MS = { ok: 30 * DAY_MS, not_found: 7 * DAY_MS, failed: HOUR_MS } as const;

export type CacheResult = keyof typeof CACHE_TTL_MS;

export interface CachedProfile {
  result: 'ok' | 'not_found';
  profile: EnrichedProfile | null;
}

/** The live ok or not_found entry of `url` at `now`, if any. */
export async function readCache(db: Kysely<ControlDatabase>, url: string, now: Date): Promise<CachedProfile | undefined> {
  const { rows } = await sql<CachedProfile>`
    select result, profile from people_profile_cache where url = ${url} and result <> 'failed' and expires_at > ${now}
  `.execute(db);
  return rows[0];
}

/**
 * Stores what the provider answered for `url`. A failure never replaces a live ok or not_found entry (a forced live
 * fetch that fails keeps the profile cached before it).
 */
export async function writeCache(db: Kysely<ControlDatabase>, url: string, result: CacheResult, profile: EnrichedProfile | null, slot: PeopleSlot, now: Date): Promise<void> {
  const expires = new Date(now.getTime() + CACHE_TTL_MS[result]);
  await sql`
    insert into people_profile_cache as c (url, result, profile, slot, fetched_at, expires_at)
    values (${url}, ${result}, ${profile === null ? null : JSON.stringify(profile)}::jsonb, ${slot}, ${now}, ${expires})
    on conflict (url) do update set result = excluded.result, profile = excluded.profile, slot = excluded.slot,
      fetched_at = excluded.fetched_at, expires_at = excluded.expires_at
    where excluded.result <> 'failed' or c.result = 'failed' or c.expires_at <= ${now}
  `.execute(db);
}
