// Entitlements where apps need them: a table gated by billing plans opens to an end user only while their subscription
// (app_subscriptions in the control database, moved by the monetization side) is active or past_due, once the
// billing_entitlement_sync job has copied it into the app database; keys see every row throughout; public.current_user_plan()
// answers in SQL; functions read the same through ctx.billing. Subscriptions are written here directly with SQL: the
// Stripe side that normally writes them has its own tests.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEntitlementSync, syncEntitlement, type EntitlementSyncDeps } from '../../src/monetization/entitlement.ts';
import type { ControlDatabase } from '../../src/db/types.ts';
import type { SubscriptionStatus } from '../../src/monetization/types.ts';
import { databaseUrl } from '../helpers/db.ts';
import { createApp, deployNew, fetchFunction } from '../helpers/functions.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freePort } from '../helpers/server.ts';
import { waitFor } from './frontend-helpers.ts';

let p: TestPlatform;
let control: Kysely<ControlDatabase>;
let controlPool: pg.Pool;
let appDb: pg.Pool;
let appId: string;
let serviceKey: string;
const tokens: Record<string, string> = {};
const users: Record<string, string> = {};

const PRO = 'pln_pro0000000000000000';
const TEAM = 'pln_team000000000000000';
const GUIDES = {
  columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, title: { type: 'text' } },
  access: 'public',
  plans: [PRO],
};

/** The premium function: what ctx.billing says about its caller. */
const PREMIUM = `
export default async (_req: Request, ctx: any) => {
  const [subscription, plan] = await Promise.all([ctx.billing.subscription(), ctx.billing.plan()]);
  return Response.json({ subscription, plan });
};`;

async function addPlan(id: string, app: string): Promise<void> {
  await p.sql(
    `insert into app_plans (id, app_id, name, price_cents, interval, stripe_product_id, stripe_price_id) values ($1, $2, $1, 900, 'month', 'prod_' || $1, 'price_' || $1)`,
    [id, app],
  );
}

let subscriptions = 0;

/** A subscription row as the monetization side writes it, and its sync enqueued in the same transaction. */
async function subscribe(user: string, plan: string, status: SubscriptionStatus, createdAt = new Date()): Promise<string> {
  const id = `sbn_test${++subscriptions}`;
  await control.transaction().execute(async (tx) => {
    await tx
      .insertInto('app_subscriptions')
      .values({ id, app_id: appId, user_id: user, plan_id: plan, status, current_period_end: new Date(Date.now() + 30 * 86_400_000), created_at: createdAt })
      .execute();
    await enqueueEntitlementSync(tx, appId, user);
  });
  return id;
}

async function setStatus(subscriptionId: string, user: string, status: SubscriptionStatus): Promise<void> {
  await control.transaction().execute(async (tx) => {
    await tx.updateTable('app_subscriptions').set({ status, updated_at: new Date() }).where('id', '=', subscriptionId).execute();
    await enqueueEntitlementSync(tx, appId, user);
  });
}

/** The app database's entitlement row of a user once the job wrote `status` (undefined: deleted). */
async function synced(user: string, status: string | undefined): Promise<void> {
  await waitFor(async () => {
    const { rows } = await appDb.query('select status from svc_billing.entitlements where user_id = $1', [user]);
    return rows[0]?.status === status ? true : undefined;
  });
}

/** The titles of the premium table an end user (or, with null, an anonymous caller) reads. */
async function titles(token: string | null): Promise<string[]> {
  const r = await p.api('GET', `/v1/${appId}/guides?select=title&order=title`, { key: token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.map((row: { title: string }) => row.title);
}

const syncDeps = (): EntitlementSyncDeps => ({ databases: p.services.databases, control: (text, values) => controlPool.query(text, values) });

beforeAll(async () => {
  const port = await freePort();
  p = await startTestPlatform({ PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}` });
  controlPool = new pg.Pool({ connectionString: databaseUrl(p.controlDb), max: 2 });
  control = new Kysely<ControlDatabase>({ dialect: new PostgresDialect({ pool: controlPool }) });
  ({ appId, key: serviceKey } = await createApp(p, 'premium'));
  appDb = new pg.Pool({ connectionString: databaseUrl(p.appDbPrefix + appId), max: 2 });
  await addPlan(PRO, appId);
  await addPlan(TEAM, appId);
  const applied = await p.api('POST', `/v1/${appId}/schema/apply`, { key: serviceKey, body: { schema: { tables: { guides: GUIDES } }, name: 'premium guides' } });
  expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  const seeded = await p.api('POST', `/v1/${appId}/guides`, { key: serviceKey, body: [{ title: 'advanced' }, { title: 'basics' }] });
  expect(seeded.status, JSON.stringify(seeded.body)).toBe(201);
  for (const who of ['ann', 'bob']) {
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { key: null, body: { email: `${who}@example.com`, password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    tokens[who] = signup.body.access_token;
    users[who] = signup.body.user.id;
  }
}, 120_000);

afterAll(async () => {
  await appDb?.end();
  await control?.destroy();
  await p?.close();
});

describe('a table gated by plans', () => {
  it('without a subscription an end user reads nothing and cannot insert; anonymous callers read nothing; a key reads all', async () => {
    expect(await titles(tokens.ann!)).toEqual([]);
    expect(await titles(null)).toEqual([]);
    expect(await titles(serviceKey)).toEqual(['advanced', 'basics']);
    const insert = await p.api('POST', `/v1/${appId}/guides`, { key: tokens.ann!, body: { title: 'mine' } });
    expect(insert.status).toBe(403);
    expect(insert.body.error.code).toBe('FORBIDDEN');
  });

  it('refuses a plan id that is not a plan of the app, naming it', async () => {
    const r = await p.api('POST', `/v1/${appId}/schema/apply`, { key: serviceKey, body: { schema: { tables: { guides: { plans: [PRO, 'pln_typo'] } } }, dry_run: true } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^Table 'guides': plans names 'pln_typo', which is not a plan of this app/);
  });

  it('schema_get reports the plans, and applying the same definition again changes nothing', async () => {
    const view = await p.api('GET', `/v1/${appId}/schema`, { key: serviceKey });
    expect(view.body.tables.guides).toMatchObject({ access: 'public', plans: [PRO] });
    const again = await p.api('POST', `/v1/${appId}/schema/apply`, { key: serviceKey, body: { schema: view.body } });
    expect(again.body).toMatchObject({ applied: false, statements: [] });
  });

  it('an active subscription opens the rows once the sync job ran: reads and own inserts, for that user only', async () => {
    await subscribe(users.ann!, PRO, 'active');
    await synced(users.ann!, 'active');
    expect(await titles(tokens.ann!)).toEqual(['advanced', 'basics']);
    const insert = await p.api('POST', `/v1/${appId}/guides`, { key: tokens.ann!, body: { title: 'by ann' }, headers: { prefer: 'return=representation' } });
    expect(insert.status, JSON.stringify(insert.body)).toBe(201);
    expect(insert.body[0].user_id).toBe(users.ann);
    expect(await titles(tokens.bob!)).toEqual([]);
    expect(await titles(null)).toEqual([]);
  });

  it('past_due still entitles; canceled does not', async () => {
    const [row] = await p.sql(`select id from app_subscriptions where user_id = $1 and status = 'active'`, [users.ann]);
    await setStatus(row.id, users.ann!, 'past_due');
    await synced(users.ann!, 'past_due');
    expect(await titles(tokens.ann!)).toEqual(['advanced', 'basics', 'by ann']);
    await setStatus(row.id, users.ann!, 'canceled');
    await synced(users.ann!, undefined);
    expect(await titles(tokens.ann!)).toEqual([]);
    expect(await titles(serviceKey)).toEqual(['advanced', 'basics', 'by ann']);
  });

  it('a subscription to a plan not in the list does not open the table', async () => {
    await subscribe(users.bob!, TEAM, 'active');
    await synced(users.bob!, 'active');
    expect(await titles(tokens.bob!)).toEqual([]);
  });

  it('changing the plans alters the gate, removing them (null) drops it; dry runs change nothing', async () => {
    const apply = (plans: string[] | null, dryRun = false) =>
      p.api('POST', `/v1/${appId}/schema/apply`, { key: serviceKey, body: { schema: { tables: { guides: { plans } } }, dry_run: dryRun } });
    const dry = await apply([PRO, TEAM], true);
    expect(dry.body).toMatchObject({ dry_run: true, applied: false });
    expect(dry.body.statements[0]).toMatch(/^ALTER POLICY svc_plan_gate ON "guides"/);
    expect(await titles(tokens.bob!)).toEqual([]);
    expect((await apply([PRO, TEAM])).body.applied).toBe(true);
    expect(await titles(tokens.bob!)).toEqual(['advanced', 'basics', 'by ann']);
    expect((await p.api('GET', `/v1/${appId}/schema`, { key: serviceKey })).body.tables.guides.plans).toEqual([PRO, TEAM]);
    const removed = await apply(null);
    expect(removed.body.statements).toEqual(['DROP POLICY IF EXISTS svc_plan_gate ON "guides"', `UPDATE svc_meta.table_access SET plans = NULL WHERE table_name = 'guides'`]);
    expect(await titles(tokens.ann!)).toEqual(['advanced', 'basics', 'by ann']);
    expect((await p.api('GET', `/v1/${appId}/schema`, { key: serviceKey })).body.tables.guides).not.toHaveProperty('plans');
    expect((await apply([PRO])).body.applied).toBe(true);
    expect(await titles(tokens.ann!)).toEqual([]);
  });
});

describe('the sync job', () => {
  it('takes the newest entitling subscription, and running it twice (even at once) writes the same row', async () => {
    const older = await subscribe(users.ann!, TEAM, 'active', new Date(Date.now() - 86_400_000));
    await synced(users.ann!, 'active');
    await subscribe(users.ann!, PRO, 'past_due');
    await synced(users.ann!, 'past_due');
    const outcomes = await Promise.all([syncEntitlement(syncDeps(), appId, users.ann!), syncEntitlement(syncDeps(), appId, users.ann!)]);
    expect(outcomes).toEqual(['entitled', 'entitled']);
    const { rows } = await appDb.query('select plan_id, status from svc_billing.entitlements where user_id = $1', [users.ann]);
    expect(rows).toEqual([{ plan_id: PRO, status: 'past_due' }]);
    // The newest one ends: the older, still active one entitles again.
    const [newest] = await p.sql(`select id from app_subscriptions where user_id = $1 and plan_id = $2 and status = 'past_due'`, [users.ann, PRO]);
    await setStatus(newest.id, users.ann!, 'canceled');
    await waitFor(async () => {
      const { rows: now } = await appDb.query('select subscription_id from svc_billing.entitlements where user_id = $1', [users.ann]);
      return now[0]?.subscription_id === older ? true : undefined;
    });
  });

  it('leaves no failed job behind', async () => {
    await waitFor(async () => ((await p.sql(`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'billing_entitlement_sync'`))[0].n === 0 ? true : undefined));
  });

  it('ends quietly for a deleted app, and serves an app that never gated a table', async () => {
    const other = await createApp(p, 'plain');
    expect(await syncEntitlement(syncDeps(), other.appId, users.ann!)).toBe('not_entitled');
    expect((await p.api('DELETE', `/apps/${other.appId}`)).status).toBeLessThan(300);
    expect(await syncEntitlement(syncDeps(), other.appId, users.ann!)).toBe('app_gone');
  });
});

describe('public.current_user_plan()', () => {
  /** Runs `query` as `role` with the JWT claims the data API would set for `user`. */
  async function asRole(role: string, user: string | null, query: string): Promise<any> {
    const client = await appDb.connect();
    try {
      await client.query('begin');
      await client.query(`set local role ${role}`);
      await client.query(`select set_config('request.jwt.claims', $1, true)`, [user ? JSON.stringify({ sub: user }) : '']);
      return (await client.query(query)).rows[0];
    } finally {
      await client.query('rollback');
      client.release();
    }
  }

  it("answers the end user's entitled plan (else null) to every data role, and hides svc_billing itself", async () => {
    const ask = `select public.current_user_plan() as plan, public.current_user_has_plan(array['${TEAM}']) as team, public.current_user_has_plan(array['x']) as x`;
    expect(await asRole('svc_user', users.ann!, ask)).toEqual({ plan: TEAM, team: true, x: false });
    expect(await asRole('svc_user', users.bob!, ask)).toEqual({ plan: TEAM, team: true, x: false });
    expect(await asRole('svc_anon', null, ask)).toEqual({ plan: null, team: false, x: false });
    expect(await asRole('svc_service', users.ann!, ask)).toMatchObject({ plan: TEAM });
    await expect(asRole('svc_user', users.ann!, 'select * from svc_billing.entitlements')).rejects.toThrow(/permission denied/);
  });
});

describe('ctx.billing in functions', () => {
  it("gives a premium function its caller's subscription and plan without code of its own; null without an end user", async () => {
    await deployNew(p, appId, serviceKey, { name: 'premium', code: PREMIUM });
    const asBob = await fetchFunction(p, appId, 'premium', { headers: { authorization: `Bearer ${tokens.bob}` } });
    expect(asBob.status).toBe(200);
    expect(await asBob.json()).toMatchObject({ plan: TEAM, subscription: { planId: TEAM, status: 'active' } });
    const anonymous = await fetchFunction(p, appId, 'premium');
    expect(await anonymous.json()).toEqual({ subscription: null, plan: null });
  });
});
