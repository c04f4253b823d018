// What open OAuth client registration may leave in the control database (src/identity/oauth.ts): registering (or
// storing a client's metadata document) past MAX_UNUSED_CLIENTS drops the oldest clients that never reached a consent
// page, a metadata document is used while fresh, and the hourly oauth_prune
// drops expired codes, tokens a month past their expiry, and the clients that got no token within a day or have had
// none for a month; nothing a person is using goes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { MAX_UNUSED_CLIENTS, OAuthGrants } from '../../src/identity/oauth.ts';
import { oauthPrune } from '../../src/identity/jobs.ts';
import { toTask } from '../../workers/index.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase } from '../helpers/db.ts';

let name: string;
let control: ControlDb;
let grants: OAuthGrants;
/** A person, their account and a session, for the codes and tokens the clients hold. */
let person: string;
let account: string;
let session: string;

beforeAll(async () => {
  name = await cloneControlDatabase();
  control = openControlDb(databaseUrl(name), 4);
  grants = new OAuthGrants(control.db, { accessTokenTtlSeconds: 3600, refreshTokenTtlDays: 30 });
  person = (await q(`insert into persons (email) values ('olga@example.com') returning id`)).rows[0].id;
  account = (await q(`insert into accounts (name) values ('olga') returning id`)).rows[0].id;
  await q(`insert into account_members (account_id, person_id, role) values ($1, $2, 'owner')`, [account, person]);
  session = (await q(`insert into sessions (id_hash, person_id, account_id, expires_at) values ('session-hash', $1, $2, now() + interval '1 day') returning id_hash`, [person, account])).rows[0].id_hash;
});
afterAll(async () => {
  await control?.close();
  if (name) await dropDatabase(name);
});

const q = (text: string, values?: unknown[]) => control.pool.query(text, values);
const registration = { client_name: 'desk', redirect_uris: ['http://127.0.0.1:53682/callback'], token_endpoint_auth_method: 'none' };

/** A client registered `age` ago (an SQL interval), as registerClient stores one. */
async function client(id: string, age = '0 seconds'): Promise<string> {
  await q(`insert into oauth_clients (client_id, metadata, created_at) values ($1, '{}', now() - $2::interval)`, [id, age]);
  return id;
}

/** A consent page (or, once approved, a code) of the client, expiring `expiresIn` from now. */
async function consent(clientId: string, expiresIn: string): Promise<void> {
  await q(
    `insert into oauth_codes (consent_hash, session_hash, client_id, person_id, account_id, redirect_uri, code_challenge, expires_at)
     values (gen_random_uuid()::text, $1, $2, $3, $4, 'http://127.0.0.1:53682/callback', 'challenge', now() + $5::interval)`,
    [session, clientId, person, account, expiresIn],
  );
}

/** A token of the client expiring `expiresIn` from now (negative: expired that long ago). */
async function token(clientId: string, expiresIn: string): Promise<void> {
  await q(
    `insert into oauth_tokens (token_hash, kind, grant_id, client_id, person_id, account_id, expires_at)
     values (gen_random_uuid()::text, 'refresh', gen_random_uuid(), $1, $2, $3, now() + $4::interval)`,
    [clientId, person, account, expiresIn],
  );
}

async function clientIds(): Promise<string[]> {
  return (await q(`select client_id from oauth_clients order by client_id`)).rows.map((r) => r.client_id);
}

describe('OAuth client registrations', () => {
  it(`registering past ${MAX_UNUSED_CLIENTS} unused registrations drops the oldest of them, never a client in use`, async () => {
    // The oldest two: one with a consent page open, one holding a token; then a full cap of unused ones.
    await client('in-consent', '3 hours');
    await consent('in-consent', '5 minutes');
    await client('with-token', '3 hours');
    await token('with-token', '1 hour');
    await q(
      `insert into oauth_clients (client_id, metadata, created_at)
       select 'unused-' || lpad(i::text, 4, '0'), '{}', now() - interval '2 hours' + i * interval '1 second' from generate_series(1, $1::int) i`,
      [MAX_UNUSED_CLIENTS],
    );

    const registered = await grants.registerClient(registration);
    const left = await clientIds();
    // unused-0001, the oldest unused one, made room for the new one.
    expect(left).toHaveLength(MAX_UNUSED_CLIENTS + 2);
    expect(left).not.toContain('unused-0001');
    expect(left).toEqual(expect.arrayContaining(['in-consent', 'with-token', 'unused-0002', registered.client_id]));
    expect(await grants.client(registered.client_id)).toMatchObject({ client_name: 'desk', redirect_uris: registration.redirect_uris });
    await q(`delete from oauth_clients`);
  });

  it('a client known by its metadata document is kept until its document is stale, under the same cap; fetching it again counts as new', async () => {
    const url = 'https://client.example/client.json';
    const documentClient = { ...registration, client_id: url };
    await grants.storeDocumentClient(documentClient, 300);
    expect(await grants.client(url)).toEqual(documentClient);
    // Stale: unknown until fetched again (the provider fetches it then).
    await q(`update oauth_clients set document_expires_at = now() - interval '1 second', created_at = now() - interval '3 hours' where client_id = $1`, [url]);
    expect(await grants.client(url)).toBeUndefined();

    await q(
      `insert into oauth_clients (client_id, metadata, created_at)
       select 'unused-' || lpad(i::text, 4, '0'), '{}', now() - interval '2 hours' + i * interval '1 second' from generate_series(1, $1::int) i`,
      [MAX_UNUSED_CLIENTS],
    );
    // The stale row was the oldest unused client; stored again it is the newest, and the oldest other one goes.
    await grants.storeDocumentClient({ ...documentClient, client_name: 'desk 2' }, 60);
    const left = await clientIds();
    expect(left).toHaveLength(MAX_UNUSED_CLIENTS);
    expect(left).not.toContain('unused-0001');
    expect(await grants.client(url)).toMatchObject({ client_name: 'desk 2' });
    await q(`delete from oauth_clients`);
  });

  it('oauth_prune drops expired codes, tokens a month past expiry, and clients unused a day after registering or a month after their last token', async () => {
    await client('fresh-unused', '23 hours');
    await client('stale-unused', '25 hours');
    await client('stale-in-consent', '25 hours');
    await consent('stale-in-consent', '5 minutes');
    await client('stale-expired-consent', '25 hours');
    await consent('stale-expired-consent', '-1 minute');
    await client('live-token', '60 days');
    await token('live-token', '20 days');
    await client('recently-expired', '60 days');
    await token('recently-expired', '-29 days');
    await client('idle', '90 days');
    await token('idle', '-31 days');

    const logs: string[] = [];
    const helpers = { job: { attempts: 1, max_attempts: 1 }, query: () => Promise.reject(new Error('unused')), logger: { info: (m: string) => logs.push(m) } };
    await toTask(oauthPrune, { oauth: grants })({}, helpers as never);

    expect(await clientIds()).toEqual(['fresh-unused', 'live-token', 'recently-expired', 'stale-in-consent']);
    expect((await q(`select client_id from oauth_codes order by client_id`)).rows).toEqual([{ client_id: 'stale-in-consent' }]);
    expect((await q(`select client_id from oauth_tokens order by client_id`)).rows).toEqual([{ client_id: 'live-token' }, { client_id: 'recently-expired' }]);
    expect(logs).toEqual(['pruned 3 unused OAuth clients']);

    // A second run finds nothing more.
    await toTask(oauthPrune, { oauth: grants })({}, helpers as never);
    expect(await clientIds()).toHaveLength(4);
    expect(logs).toHaveLength(1);
  });
});
