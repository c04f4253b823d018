// Shared setup of the people tests: a platform with the fake vendors in its slots, an app, and the account's balance.
import { expect } from 'vitest';
import { startFakeProxycurl, type FakeProxycurl } from '../fakes/people-proxycurl.ts';
import { startFakeExa } from '../fakes/people-exa.ts';
import type { FakeVendor } from '../fakes/people-proxycurl.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';
import type { AppRecord } from '../../src/apps/types.ts';

export interface PeopleRig {
  p: TestPlatform;
  pc: FakeProxycurl;
  exa: FakeVendor;
  appId: string;
  app: AppRecord;
  accountId: string;
  serviceKey: string;
  close(): Promise<void>;
}

/** A platform whose primary slot is the Proxycurl fake and secondary the Exa fake, with one app. */
export async function startPeopleRig(env: Record<string, string> = {}): Promise<PeopleRig> {
  const pc = await startFakeProxycurl();
  const exa = await startFakeExa();
  const p = await startTestPlatform({
    SVC_PEOPLE_PRIMARY_URL: pc.url,
    SVC_PEOPLE_PRIMARY_KEY: 'pc-test-key',
    SVC_PEOPLE_SECONDARY_URL: exa.url,
    SVC_PEOPLE_SECONDARY_KEY: 'exa-test-key',
    SVC_PEOPLE_TIMEOUT_MS: '1000',
    ...env,
  });
  const created = await p.api('POST', '/init', { body: { name: 'People App' } });
  expect(created.status).toBe(201);
  const appId = created.body.app_id as string;
  const accountId = (await p.sql('select account_id from apps where id = $1', [appId]))[0].account_id as string;
  return {
    p,
    pc,
    exa,
    appId,
    app: (await p.services.apps.get(appId))!,
    accountId,
    serviceKey: created.body.service_key.key,
    close: async () => {
      await p.close();
      await pc.close();
      await exa.close();
    },
  };
}

/** Between tests: the fakes' records, usage rows, the profile cache and charges cleared, and `usd` of credit. */
export async function resetRig(rig: PeopleRig, usd = 10): Promise<void> {
  rig.pc.reset();
  rig.exa.reset();
  await rig.p.sql('delete from people_usage_logs');
  await rig.p.sql('delete from people_profile_cache');
  await rig.p.sql(`delete from credit_ledger where kind = 'charge'`);
  await setBalance(rig, usd);
}

const NANOS = 1_000_000_000;

/** Sets the account's credit balance (after its plan grant) and clears what is reserved. */
export async function setBalance(rig: Pick<PeopleRig, 'p' | 'accountId'>, usd: number): Promise<void> {
  await rig.p.services.credits.plan(rig.accountId);
  await rig.p.sql('delete from credit_reservations where account_id = $1', [rig.accountId]);
  await rig.p.sql('update credit_balances set balance_nanos = $2, reserved_nanos = 0 where account_id = $1', [rig.accountId, Math.round(usd * NANOS)]);
}

export async function balance(rig: Pick<PeopleRig, 'p' | 'accountId'>): Promise<{ balance: number; reserved: number }> {
  const row = (await rig.p.sql('select balance_nanos::text as b, reserved_nanos::text as r from credit_balances where account_id = $1', [rig.accountId]))[0];
  return { balance: Number(row.b) / NANOS, reserved: Number(row.r) / NANOS };
}

/** The x-people-* headers of a reply, absent ones as undefined. */
export function peopleHeaders(headers: Headers): Record<string, string | undefined> {
  const pick = (name: string) => headers.get(name) ?? undefined;
  return {
    provider: pick('x-people-provider'),
    credits: pick('x-people-credits-consumed'),
    usd: pick('x-people-usd-charged'),
    cached: pick('x-people-cached'),
  };
}

/** The headers of an error reply or a free one. */
export const FREE_HEADERS = (provider = 'primary', cached?: 'false') => ({ provider, credits: '0', usd: '0.000000', cached });

export async function usageRows(rig: Pick<PeopleRig, 'p' | 'appId'>): Promise<any[]> {
  return rig.p.sql(
    `select action, slot, credits_consumed, usd_cost::float8 as usd_cost, usd_charged::float8 as usd_charged, response_status, social_url, lookup_id::text
     from people_usage_logs where app_id = $1 order by id`,
    [rig.appId],
  );
}

export async function charges(rig: Pick<PeopleRig, 'p' | 'accountId'>): Promise<any[]> {
  return rig.p.sql(`select amount_nanos::text as nanos, source, usage_ref from credit_ledger where account_id = $1 and kind = 'charge' order by id`, [rig.accountId]);
}
