// An account's people, end to end against `node src/main.ts`: invitations by e-mail and by link, accepted at sign-up
// or by a signed-in person; what each role may and may not do; the last owner kept under concurrent changes; platform
// keys bounded by their maker's role and following it, and everything a member made (keys made with keys, service keys,
// invitations) ending with the role that allowed it; the audit log with its actors and filters, and its retention.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import type { AuditEntryView } from '../../src/identity/audit.ts';
import { auditPurge } from '../../src/identity/jobs.ts';
import { toTask } from '../../workers/index.ts';
import { callTool, connectMcp, ISO_DATE, request, resultJson, UUID, type McpConnection, type RawResponse } from './e2e-helpers.ts';

const PASSWORD = 'long enough pw';

let server: SpawnedServer;
let dataDir: string;
let origin: string;
let control: pg.Pool;
let agent: McpConnection;

interface Person {
  cookie: string;
  id: string;
  accountId: string;
}

let olga: Person;
let ada: Person;
let dan: Person;
let vera: Person;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'svc-members-'));
  // Open sign-up: a person can hold an account of their own and then accept an invitation into another.
  server = await spawnServer({ SVC_DATA_DIR: dataDir, SVC_SIGNUP: 'open' });
  origin = `http://localhost:${server.port}`;
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
  agent = await connectMcp(server.url, server.platformKey);
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await control?.end();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function cookieOf(res: RawResponse): string {
  const set = res.headers['set-cookie']?.find((c) => c.startsWith('svc_session='));
  if (!set) throw new Error(`no session cookie in ${res.status} ${res.text}`);
  return set.split(';')[0]!;
}

/** A request as a browser signed in with `cookie` (same origin), or with a platform key. */
function call(who: string, method: string, route: string, body?: unknown): Promise<RawResponse> {
  const auth = who.startsWith('svc_pk_') ? { key: who } : { headers: { cookie: who, origin } };
  return request(server.url, route, { method, ...auth, ...(body === undefined ? {} : { body }) });
}

async function signUp(email: string, invitationToken?: string): Promise<Person> {
  const res = await request(server.url, '/dashboard/signup', {
    method: 'POST',
    body: { email, password: PASSWORD, ...(invitationToken ? { invitation_token: invitationToken } : {}) },
    headers: { origin },
  });
  expect(res.status, res.text).toBe(201);
  const body = res.json as { person: { id: string }; account_id: string };
  return { cookie: cookieOf(res), id: body.person.id, accountId: body.account_id };
}

const codeOf = (res: RawResponse): string | undefined => (res.json as { error?: { code: string } } | undefined)?.error?.code;

/** 403 FORBIDDEN_ROLE of a route of `area` (the members area's routes unless said). */
function roleRefusal(required: string, role: string, area = 'members') {
  return {
    error: {
      code: 'FORBIDDEN_ROLE',
      message: `This call needs the role ${required} or higher in the account; the credential has ${role}.`,
      remediation: 'Ask an owner or admin of the account for a higher role, or use a credential of a member who has it.',
      documentation_url: server.docsUrl(area),
      details: { required_role: required, role },
    },
  };
}

const lastOwner = () => ({
  error: {
    code: 'LAST_OWNER',
    message: "This is the account's last owner: an account always keeps one.",
    remediation: 'Make another member an owner first (PATCH /dashboard/members/{person_id} {"role":"owner"}), then try again.',
    documentation_url: server.docsUrl('members'),
  },
});

async function auditOf(query = ''): Promise<AuditEntryView[]> {
  const res = await call(olga.cookie, 'GET', `/dashboard/audit?limit=200${query}`);
  expect(res.status, res.text).toBe(200);
  return (res.json as { entries: AuditEntryView[] }).entries;
}

describe('invitations', () => {
  let adaToken: string;

  it('the owner invites by e-mail: the token and link are shown once, lists never show them', async () => {
    olga = await signUp('olga@example.com', readFileSync(path.join(dataDir, 'owner-invitation'), 'utf8').trim());
    const res = await call(olga.cookie, 'POST', '/dashboard/invitations', { email: 'Ada@Example.com', role: 'admin' });
    expect(res.status).toBe(201);
    const body = res.json as { id: string; token: string; created_at: string; expires_at: string };
    adaToken = body.token;
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      email: 'ada@example.com',
      role: 'admin',
      invited_by: olga.id,
      created_at: expect.stringMatching(ISO_DATE),
      expires_at: expect.stringMatching(ISO_DATE),
      token: expect.stringMatching(/^svc_inv_/),
      url: `${origin}/console/#/invitation/${encodeURIComponent(adaToken)}`,
      emailed: false,
    });
    expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBe(7 * 86_400_000);

    const list = await call(olga.cookie, 'GET', '/dashboard/invitations');
    expect(list.status).toBe(200);
    expect(list.json).toEqual({ invitations: [{ id: body.id, email: 'ada@example.com', role: 'admin', invited_by: olga.id, created_at: body.created_at, expires_at: body.expires_at }] });
    expect(list.text).not.toContain('svc_inv_');
  });

  it('only the invited address signs up with an e-mail invitation, into the account with its role', async () => {
    const other = await request(server.url, '/dashboard/signup', { method: 'POST', body: { email: 'eve@example.com', password: PASSWORD, invitation_token: adaToken }, headers: { origin } });
    expect(other.status).toBe(403);
    expect(codeOf(other)).toBe('INVITATION_OTHER_EMAIL');
    ada = await signUp('ada@example.com', adaToken);
    expect(ada.accountId).toBe(olga.accountId);
    const members = await call(ada.cookie, 'GET', '/dashboard/members');
    expect(members.status).toBe(200);
    expect(members.json).toEqual({
      members: [
        { person_id: olga.id, email: 'olga@example.com', name: '', role: 'owner', joined_at: expect.stringMatching(ISO_DATE) },
        { person_id: ada.id, email: 'ada@example.com', name: '', role: 'admin', joined_at: expect.stringMatching(ISO_DATE) },
      ],
    });
    expect((await call(olga.cookie, 'GET', '/dashboard/invitations')).json).toEqual({ invitations: [] });
  });

  it('a link invitation (no e-mail) is taken by whoever holds it; an admin invites up to their own role', async () => {
    const link = await call(ada.cookie, 'POST', '/dashboard/invitations', { role: 'developer', expires_in_days: 2 });
    expect(link.status).toBe(201);
    expect(link.json).toMatchObject({ email: null, role: 'developer', invited_by: ada.id, emailed: false });
    dan = await signUp('dan@example.com', (link.json as { token: string }).token);
    const viewer = await call(ada.cookie, 'POST', '/dashboard/invitations', { email: 'vera@example.com', role: 'viewer' });
    vera = await signUp('vera@example.com', (viewer.json as { token: string }).token);

    const owner = await call(ada.cookie, 'POST', '/dashboard/invitations', { role: 'owner' });
    expect(owner.status).toBe(403);
    expect(owner.json).toEqual(roleRefusal('owner', 'admin'));
  });

  it('a signed-in person accepts an invitation into another account; their session stays where it was', async () => {
    const paul = await signUp('paul@example.com');
    expect(paul.accountId).not.toBe(olga.accountId);
    const token = ((await call(olga.cookie, 'POST', '/dashboard/invitations', { role: 'viewer' })).json as { token: string }).token;
    const accepted = await call(paul.cookie, 'POST', '/dashboard/invitations/accept', { token });
    expect(accepted.status).toBe(200);
    expect(accepted.json).toEqual({ account_id: olga.accountId, role: 'viewer' });
    const session = await call(paul.cookie, 'GET', '/dashboard/session');
    expect(session.json).toMatchObject({
      account_id: paul.accountId,
      role: 'owner',
      accounts: [
        { account_id: paul.accountId, role: 'owner' },
        { account_id: olga.accountId, role: 'viewer' },
      ],
    });

    const again = await call(paul.cookie, 'POST', '/dashboard/invitations/accept', { token });
    expect(again.status).toBe(400);
    expect(codeOf(again)).toBe('INVITATION_INVALID');
    const forOther = ((await call(olga.cookie, 'POST', '/dashboard/invitations', { email: 'zoe@example.com', role: 'viewer' })).json as { token: string }).token;
    const wrongPerson = await call(paul.cookie, 'POST', '/dashboard/invitations/accept', { token: forOther });
    expect(wrongPerson.status).toBe(403);
    expect(codeOf(wrongPerson)).toBe('INVITATION_OTHER_EMAIL');
    const member = ((await call(olga.cookie, 'POST', '/dashboard/invitations', { role: 'developer' })).json as { token: string }).token;
    const already = await call(ada.cookie, 'POST', '/dashboard/invitations/accept', { token: member });
    expect(already.status).toBe(409);
    expect(codeOf(already)).toBe('ALREADY_MEMBER');
    // A key is no person: it has nothing to accept with.
    const byKey = await call(server.platformKey, 'POST', '/dashboard/invitations/accept', { token: member });
    expect(byKey.status).toBe(403);
    expect(codeOf(byKey)).toBe('FORBIDDEN');
  });

  it('revokes an open invitation: its token stops working; a second revoke is 404', async () => {
    const open = (await call(olga.cookie, 'GET', '/dashboard/invitations')).json as { invitations: { id: string; email: string | null }[] };
    const zoe = open.invitations.find((i) => i.email === 'zoe@example.com')!;
    const revoked = await call(ada.cookie, 'DELETE', `/dashboard/invitations/${zoe.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json).toEqual({ revoked: true, invitation_id: zoe.id });
    const twice = await call(ada.cookie, 'DELETE', `/dashboard/invitations/${zoe.id}`);
    expect(twice.status).toBe(404);
    expect(codeOf(twice)).toBe('RESOURCE_NOT_FOUND');
    expect(((await call(olga.cookie, 'GET', '/dashboard/invitations')).json as { invitations: { id: string }[] }).invitations.map((i) => i.id)).not.toContain(zoe.id);
  });
});

describe('roles', () => {
  it('a viewer reads (apps, members) and is refused writes and management', async () => {
    expect((await call(vera.cookie, 'GET', '/apps')).status).toBe(200);
    expect((await call(vera.cookie, 'GET', '/dashboard/members')).status).toBe(200);
    const create = await call(vera.cookie, 'POST', '/init', { name: 'by-viewer' });
    expect(create.status).toBe(403);
    expect(create.json).toEqual(roleRefusal('developer', 'viewer', 'apps'));
    expect((await call(vera.cookie, 'POST', '/dashboard/invitations', { role: 'viewer' })).json).toEqual(roleRefusal('admin', 'viewer'));
  });

  it('a developer creates apps but manages neither members nor keys, nor reads the audit log', async () => {
    const created = await call(dan.cookie, 'POST', '/init', { name: 'by-developer' });
    expect(created.status).toBe(201);
    for (const [method, route, body] of [
      ['PATCH', `/dashboard/members/${vera.id}`, { role: 'developer' }],
      ['DELETE', `/dashboard/members/${vera.id}`, undefined],
      ['GET', '/dashboard/invitations', undefined],
      ['POST', '/dashboard/keys', { name: 'mine' }],
      ['GET', '/dashboard/keys', undefined],
      ['GET', '/dashboard/audit', undefined],
    ] as const) {
      const res = await call(dan.cookie, method, route, body);
      expect(res.status, `${method} ${route}`).toBe(403);
      expect(res.json).toEqual(roleRefusal('admin', 'developer'));
    }
  });

  it('an admin manages members up to their own role; only an owner grants, changes or removes owner', async () => {
    const promoted = await call(ada.cookie, 'PATCH', `/dashboard/members/${vera.id}`, { role: 'developer' });
    expect(promoted.status).toBe(200);
    expect(promoted.json).toEqual({ person_id: vera.id, email: 'vera@example.com', name: '', role: 'developer', joined_at: expect.stringMatching(ISO_DATE) });
    expect((await call(ada.cookie, 'PATCH', `/dashboard/members/${vera.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await call(ada.cookie, 'PATCH', `/dashboard/members/${dan.id}`, { role: 'owner' })).json).toEqual(roleRefusal('owner', 'admin'));
    expect((await call(ada.cookie, 'PATCH', `/dashboard/members/${olga.id}`, { role: 'admin' })).json).toEqual(roleRefusal('owner', 'admin'));
    expect((await call(ada.cookie, 'DELETE', `/dashboard/members/${olga.id}`)).json).toEqual(roleRefusal('owner', 'admin'));
    const unknown = await call(ada.cookie, 'PATCH', '/dashboard/members/00000000-0000-4000-8000-000000000000', { role: 'viewer' });
    expect(unknown.status).toBe(404);
    expect(codeOf(unknown)).toBe('RESOURCE_NOT_FOUND');

    const byOwner = await call(olga.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'owner' });
    expect(byOwner.status).toBe(200);
    expect(byOwner.json).toMatchObject({ person_id: ada.id, role: 'owner' });
    expect((await call(olga.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'admin' })).status).toBe(200);
  });
});

describe('the last owner', () => {
  it('cannot leave, be demoted or be removed', async () => {
    const leave = await call(olga.cookie, 'POST', '/dashboard/members/leave');
    expect(leave.status).toBe(409);
    expect(leave.json).toEqual(lastOwner());
    const demote = await call(olga.cookie, 'PATCH', `/dashboard/members/${olga.id}`, { role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.json).toEqual(lastOwner());
    const remove = await call(olga.cookie, 'DELETE', `/dashboard/members/${olga.id}`);
    expect(remove.status).toBe(409);
    expect(remove.json).toEqual(lastOwner());
  });

  it('two owners stepping down at once: one succeeds, the other is the last owner', async () => {
    for (let round = 0; round < 3; round++) {
      expect((await call(olga.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'owner' })).status).toBe(200);
      const [a, b] = await Promise.all([
        call(olga.cookie, 'PATCH', `/dashboard/members/${olga.id}`, { role: 'admin' }),
        call(ada.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'admin' }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const owners = (await control.query(`select person_id from account_members where account_id = $1 and role = 'owner'`, [olga.accountId])).rows;
      expect(owners).toHaveLength(1);
      // Olga is the owner again for what follows.
      if (owners[0].person_id === ada.id) {
        expect((await call(ada.cookie, 'PATCH', `/dashboard/members/${olga.id}`, { role: 'owner' })).status).toBe(200);
        expect((await call(olga.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'admin' })).status).toBe(200);
      }
    }
  });

  it('any other member may leave: their session ends with the membership', async () => {
    const token = ((await call(olga.cookie, 'POST', '/dashboard/invitations', { email: 'lea@example.com', role: 'viewer' })).json as { token: string }).token;
    const lea = await signUp('lea@example.com', token);
    const left = await call(lea.cookie, 'POST', '/dashboard/members/leave');
    expect(left.status).toBe(200);
    expect(left.json).toEqual({ left: true, account_id: olga.accountId });
    expect(left.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect((await call(lea.cookie, 'GET', '/apps')).status).toBe(401);
  });
});

describe('platform keys of members', () => {
  let devKey: { id: string; key: string };
  let adminKey: { id: string; key: string };

  it("a key's role is at most its maker's, by default the maker's own", async () => {
    const above = await call(ada.cookie, 'POST', '/dashboard/keys', { name: 'too much', role: 'owner' });
    expect(above.status).toBe(403);
    expect(above.json).toEqual(roleRefusal('owner', 'admin'));
    const dev = await call(ada.cookie, 'POST', '/dashboard/keys', { name: 'ci', role: 'developer' });
    expect(dev.status).toBe(201);
    expect(dev.json).toEqual({
      id: expect.stringMatching(UUID),
      name: 'ci',
      hint: expect.any(String),
      role: 'developer',
      created_by: ada.id,
      created_at: expect.stringMatching(ISO_DATE),
      key: expect.stringMatching(/^svc_pk_/),
    });
    devKey = dev.json as { id: string; key: string };
    const mine = await call(ada.cookie, 'POST', '/dashboard/keys', { name: 'mine' });
    expect(mine.json).toMatchObject({ role: 'admin', created_by: ada.id });
    adminKey = mine.json as { id: string; key: string };

    const list = await call(ada.cookie, 'GET', '/dashboard/keys');
    expect(list.status).toBe(200);
    const keys = (list.json as { keys: { id: string; name: string; role: string; created_by: string | null }[] }).keys;
    expect(keys.map(({ name, role, created_by }) => ({ name, role, created_by }))).toEqual([
      { name: 'SVC_PLATFORM_API_KEY', role: 'owner', created_by: null },
      { name: 'ci', role: 'developer', created_by: ada.id },
      { name: 'mine', role: 'admin', created_by: ada.id },
    ]);
    for (const made of [devKey, adminKey]) expect(list.text).not.toContain(made.key);
  });

  it("a key acts with its role: a developer key builds but manages nothing; an admin may not revoke an owner's key", async () => {
    expect((await call(devKey.key, 'POST', '/init', { name: 'by-dev-key' })).status).toBe(201);
    expect((await call(devKey.key, 'POST', '/dashboard/keys', { name: 'x' })).json).toEqual(roleRefusal('admin', 'developer'));
    expect((await call(adminKey.key, 'GET', '/dashboard/members')).status).toBe(200);
    expect((await call(adminKey.key, 'POST', '/dashboard/invitations', { role: 'owner' })).json).toEqual(roleRefusal('owner', 'admin'));
    const ownerKeyId = (await control.query(`select id from platform_keys where name = 'SVC_PLATFORM_API_KEY'`)).rows[0].id as string;
    expect((await call(ada.cookie, 'DELETE', `/dashboard/keys/${ownerKeyId}`)).json).toEqual(roleRefusal('owner', 'admin'));
  });

  it("a maker's demotion lowers their keys; their removal revokes them (and ends their sessions)", async () => {
    const demoted = await call(olga.cookie, 'PATCH', `/dashboard/members/${ada.id}`, { role: 'developer' });
    expect(demoted.status).toBe(200);
    expect((await call(adminKey.key, 'GET', '/dashboard/members')).status).toBe(200);
    expect((await call(adminKey.key, 'GET', '/dashboard/keys')).json).toEqual(roleRefusal('admin', 'developer'));
    const removed = await call(olga.cookie, 'DELETE', `/dashboard/members/${ada.id}`);
    expect(removed.status).toBe(200);
    expect(removed.json).toEqual({ removed: true, person_id: ada.id });
    for (const key of [devKey.key, adminKey.key]) expect((await call(key, 'GET', '/apps')).status).toBe(401);
    expect((await call(ada.cookie, 'GET', '/apps')).status).toBe(401);
  });

  it('an owner revokes a key: it stops working at once', async () => {
    const made = (await call(olga.cookie, 'POST', '/dashboard/keys', { name: 'short-lived', role: 'viewer' })).json as { id: string; key: string };
    expect((await call(made.key, 'GET', '/apps')).status).toBe(200);
    const revoked = await call(olga.cookie, 'DELETE', `/dashboard/keys/${made.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.json).toEqual({ revoked: true, key_id: made.id });
    expect((await call(made.key, 'GET', '/apps')).status).toBe(401);
    expect((await call(olga.cookie, 'DELETE', `/dashboard/keys/${made.id}`)).status).toBe(404);
  });
});

describe('what a member made ends with the role that allowed it', () => {
  let ivy: Person;
  let appId: string;
  const keys = {} as Record<'k1' | 'k2' | 'k3' | 'k4' | 'k5', { id: string; key: string; created_by: string | null; role: string }>;
  const serviceKeys: string[] = [];
  const invitationTokens: string[] = [];

  /** 400 INVITATION_INVALID: a person taking the invitation is refused (sign-up and acceptance check it alike). */
  async function invitationRefused(token: string): Promise<void> {
    const res = await call(dan.cookie, 'POST', '/dashboard/invitations/accept', { token });
    expect([res.status, codeOf(res)]).toEqual([400, 'INVITATION_INVALID']);
  }

  async function roleChange(role: string): Promise<Record<string, unknown>> {
    expect((await call(olga.cookie, 'PATCH', `/dashboard/members/${ivy.id}`, { role })).status).toBe(200);
    const entries = await auditOf(`&action=member.role_change&resource_id=${ivy.id}`);
    return entries[0]!.details;
  }

  it('keys made with a key, the service keys and invitations they make, all answer to the person behind the first key', async () => {
    const token = ((await call(olga.cookie, 'POST', '/dashboard/invitations', { email: 'ivy@example.com', role: 'admin' })).json as { token: string }).token;
    ivy = await signUp('ivy@example.com', token);
    appId = ((await call(olga.cookie, 'POST', '/init', { name: 'ivy-target' })).json as { app_id: string }).app_id;

    keys.k1 = (await call(ivy.cookie, 'POST', '/dashboard/keys', { name: 'k1' })).json;
    keys.k2 = (await call(keys.k1.key, 'POST', '/dashboard/keys', { name: 'k2' })).json;
    keys.k3 = (await call(keys.k2.key, 'POST', '/dashboard/keys', { name: 'k3', role: 'developer' })).json;
    expect(Object.values(keys).map(({ role, created_by }) => [role, created_by])).toEqual([
      ['admin', ivy.id],
      ['admin', ivy.id],
      ['developer', ivy.id],
    ]);
    serviceKeys.push((await call(ivy.cookie, 'POST', `/apps/${appId}/keys`, { name: 'by session' })).json.key);
    serviceKeys.push((await call(keys.k2.key, 'POST', `/apps/${appId}/keys`, { name: 'by key' })).json.key);
    serviceKeys.push((await call(keys.k1.key, 'POST', '/init', { name: 'ivy-own' })).json.service_key.key);
    for (const key of serviceKeys) expect((await request(server.url, `/v1/${appId}/functions`, { key })).status).not.toBe(401);

    invitationTokens.push(((await call(ivy.cookie, 'POST', '/dashboard/invitations', { role: 'admin' })).json as { token: string }).token);
    const byKey = await call(keys.k2.key, 'POST', '/dashboard/invitations', { role: 'developer' });
    expect(byKey.json).toMatchObject({ role: 'developer', invited_by: ivy.id });
    invitationTokens.push((byKey.json as { token: string }).token);
  });

  it("demoted to developer: the keys drop to developer (a key's key no longer mints admin keys) and the invitations are revoked", async () => {
    expect(await roleChange('developer')).toEqual({ from: 'admin', to: 'developer', keys_lowered: 2, keys_revoked: 0, invitations_revoked: 2 });
    const mint = await call(keys.k2.key, 'POST', '/dashboard/keys', { name: 'k4', role: 'admin' });
    expect([mint.status, mint.json]).toEqual([403, roleRefusal('admin', 'developer')]);
    for (const token of invitationTokens) await invitationRefused(token);
    expect((await request(server.url, `/v1/${appId}/functions`, { key: serviceKeys[0] })).status).toBe(200);
  });

  it('demoted to viewer: the service keys they made (with their session or their keys) are revoked', async () => {
    expect(await roleChange('viewer')).toEqual({ from: 'developer', to: 'viewer', keys_lowered: 3, keys_revoked: 3, invitations_revoked: 0 });
    for (const key of serviceKeys) expect((await request(server.url, `/v1/${appId}/functions`, { key })).status).toBe(401);
    expect((await call(keys.k3.key, 'GET', '/apps')).status).toBe(200);
  });

  it("removed: every key of theirs, made by key or session, their service keys and an admin invitation stop at once", async () => {
    await roleChange('admin');
    keys.k4 = (await call(ivy.cookie, 'POST', '/dashboard/keys', { name: 'k4' })).json;
    keys.k5 = (await call(keys.k4.key, 'POST', '/dashboard/keys', { name: 'k5' })).json;
    const service = (await call(keys.k5.key, 'POST', `/apps/${appId}/keys`, { name: 'late' })).json.key as string;
    const invitation = ((await call(keys.k5.key, 'POST', '/dashboard/invitations', { role: 'admin' })).json as { token: string }).token;
    invitationTokens.push(invitation);

    expect((await call(olga.cookie, 'DELETE', `/dashboard/members/${ivy.id}`)).status).toBe(200);
    for (const { key } of Object.values(keys)) expect((await call(key, 'GET', '/apps')).status).toBe(401);
    expect((await request(server.url, `/v1/${appId}/functions`, { key: service })).status).toBe(401);
    await invitationRefused(invitation);
    const removal = (await auditOf(`&action=member.remove&resource_id=${ivy.id}`))[0]!;
    expect(removal.details).toEqual({ role: 'admin', keys_revoked: 6, invitations_revoked: 1 });
  });
});

describe('the audit log', () => {
  let appId: string;
  let keyAppId: string;

  it('records tool events with their actor: a person, a key, from REST (address) or MCP (none)', async () => {
    appId = ((await call(olga.cookie, 'POST', '/init', { name: 'audited' })).json as { app_id: string }).app_id;
    keyAppId = ((await call(server.platformKey, 'POST', '/init', { name: 'audited-by-key' })).json as { app_id: string }).app_id;
    const schema = { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, body: { type: 'text' } } } } };
    expect((await call(olga.cookie, 'POST', `/v1/${appId}/schema/apply`, { schema, dry_run: true })).status).toBe(200);
    expect((await call(olga.cookie, 'POST', `/v1/${appId}/schema/apply`, { schema, name: 'notes' })).status).toBe(200);
    // Applying what the database already has changes nothing: no entry.
    expect((await call(olga.cookie, 'POST', `/v1/${appId}/schema/apply`, { schema, name: 'again' })).json).toMatchObject({ applied: false });
    const serviceKey = (await call(olga.cookie, 'POST', `/apps/${appId}/keys`, { name: 'deploy' })).json as { id: string };
    expect((await call(olga.cookie, 'DELETE', `/apps/${appId}/keys/${serviceKey.id}`)).status).toBe(200);
    expect((await call(olga.cookie, 'DELETE', `/apps/${keyAppId}`)).status).toBe(200);
    const byAgent = resultJson(await callTool(agent.client, 'invitations_create', { role: 'viewer' })) as { id: string };

    const ownerKeyId = (await control.query(`select id from platform_keys where name = 'SVC_PLATFORM_API_KEY'`)).rows[0].id as string;
    const byOlga = { actor_kind: 'person', actor_id: olga.id, ip: '127.0.0.1' };
    const entries = await auditOf();
    const find = (action: string, resourceId: string) => entries.find((e) => e.action === action && e.resource_id === resourceId);
    expect(find('app.create', appId)).toEqual({
      id: expect.any(String),
      ...byOlga,
      action: 'app.create',
      resource_type: 'app',
      resource_id: appId,
      details: { name: 'audited', region: 'local' },
      created_at: expect.stringMatching(ISO_DATE),
    });
    expect(find('app.create', keyAppId)).toMatchObject({ actor_kind: 'key', actor_id: ownerKeyId, ip: '127.0.0.1' });
    expect(find('app.delete', keyAppId)).toMatchObject({ ...byOlga, resource_type: 'app', details: {} });
    expect(entries.filter((e) => e.action === 'schema.apply')).toEqual([
      expect.objectContaining({ ...byOlga, resource_type: 'schema', resource_id: appId, details: { name: 'notes', migration_id: expect.any(Number), statements: expect.any(Number) } }),
    ]);
    expect(find('key.create', serviceKey.id)).toMatchObject({ ...byOlga, resource_type: 'service_key', details: { app_id: appId, name: 'deploy' } });
    expect(find('key.revoke', serviceKey.id)).toMatchObject({ ...byOlga, resource_type: 'service_key', details: { app_id: appId } });
    expect(find('invitation.create', byAgent.id)).toMatchObject({ actor_kind: 'key', actor_id: ownerKeyId, ip: null, details: { email: null, role: 'viewer' } });
  });

  it("records members' and invitations' changes in their transactions, with what they changed", async () => {
    const entries = await auditOf();
    const adaJoined = entries.find((e) => e.action === 'member.add' && e.resource_id === ada.id)!;
    expect(adaJoined).toMatchObject({ actor_kind: 'person', actor_id: ada.id, ip: '127.0.0.1', resource_type: 'member', details: { role: 'admin', invitation_id: expect.stringMatching(UUID) } });
    expect(entries.find((e) => e.action === 'invitation.accept' && e.resource_id === adaJoined.details.invitation_id)).toMatchObject({ actor_id: ada.id, details: { role: 'admin' } });
    expect(entries.find((e) => e.action === 'invitation.create' && e.resource_id === adaJoined.details.invitation_id)).toMatchObject({
      actor_id: olga.id,
      details: { email: 'ada@example.com', role: 'admin' },
    });
    expect(entries.filter((e) => e.action === 'invitation.revoke')).toEqual([expect.objectContaining({ actor_id: ada.id, resource_type: 'invitation' })]);
    const adaChanges = entries.filter((e) => e.action === 'member.role_change' && e.resource_id === ada.id).map((e) => e.details);
    expect(adaChanges[0]).toEqual({ from: 'admin', to: 'developer', keys_lowered: 1, keys_revoked: 0, invitations_revoked: 0 });
    expect(entries.find((e) => e.action === 'member.remove' && e.resource_id === ada.id)).toMatchObject({
      actor_id: olga.id,
      // Her two platform keys, and the service key of the app her developer key created.
      details: { role: 'developer', keys_revoked: 3, invitations_revoked: 0 },
    });
    const veraChanges = entries.filter((e) => e.action === 'member.role_change' && e.resource_id === vera.id);
    expect(veraChanges.map((e) => [e.actor_id, e.details])).toEqual([
      [ada.id, { from: 'developer', to: 'viewer', keys_lowered: 0, keys_revoked: 0, invitations_revoked: 0 }],
      [ada.id, { from: 'viewer', to: 'developer', keys_lowered: 0, keys_revoked: 0, invitations_revoked: 0 }],
    ]);
    const keyEntries = entries.filter((e) => e.resource_type === 'platform_key' && e.actor_id === ada.id).map((e) => [e.action, e.details]);
    expect(keyEntries).toEqual([
      ['key.create', { name: 'mine', role: 'admin' }],
      ['key.create', { name: 'ci', role: 'developer' }],
    ]);
  });

  it('records substrate decisions by whoever decided: a signed-in person, a substrate key', async () => {
    const principle = { capability: 'record_principle', payload: { title: 'No weekend deploys', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } };
    const proposed = await call(olga.cookie, 'POST', '/v1/me/substrate/actions/propose', principle);
    expect(proposed.json).toMatchObject({ requires_approval: true });
    const approveId = (proposed.json as { action_id: string }).action_id;
    expect((await call(olga.cookie, 'POST', `/v1/me/substrate/actions/${approveId}/approve`)).status).toBe(200);

    const substrateKey = (await call(olga.cookie, 'POST', '/substrate-keys', { name: 'phone' })).json as { id: string; key: string };
    const second = await request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key: substrateKey.key, body: principle });
    const rejectId = (second.json as { action_id: string }).action_id;
    const rejected = await request(server.url, `/v1/me/substrate/actions/${rejectId}/reject`, { method: 'POST', key: substrateKey.key, body: { reason: 'no' } });
    expect(rejected.status).toBe(200);

    const decisions = await auditOf('&resource_type=substrate_action');
    expect(decisions.map(({ action, actor_kind, actor_id, resource_id, details }) => ({ action, actor_kind, actor_id, resource_id, details }))).toEqual([
      { action: 'substrate.reject', actor_kind: 'key', actor_id: substrateKey.id, resource_id: rejectId, details: { capability: 'record_principle' } },
      { action: 'substrate.approve', actor_kind: 'person', actor_id: olga.id, resource_id: approveId, details: { capability: 'record_principle' } },
    ]);
    expect((await auditOf(`&action=key.create&resource_id=${substrateKey.id}`)).map((e) => e.resource_type)).toEqual(['substrate_key']);
  });

  it('filters by actor, action, resource and time, newest first, and pages with a cursor', async () => {
    const all = await auditOf();
    const times = all.map((e) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((x, y) => y - x));

    for (const e of await auditOf(`&actor=${ada.id}`)) expect(e.actor_id).toBe(ada.id);
    expect((await auditOf(`&actor=${ada.id}`)).length).toBe(all.filter((e) => e.actor_id === ada.id).length);
    const removals = await auditOf('&action=member.remove');
    expect(removals.map((e) => e.resource_id).sort()).toEqual(all.filter((e) => e.action === 'member.remove').map((e) => e.resource_id).sort());
    expect((await auditOf(`&resource_type=app&resource_id=${appId}`)).map((e) => e.action)).toEqual(['app.create']);
    expect(await auditOf(`&since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await auditOf(`&until=${encodeURIComponent(all.at(-1)!.created_at)}`)).toEqual([]);
    expect((await auditOf(`&since=${encodeURIComponent(all.at(-1)!.created_at)}`)).length).toBe(all.length);

    const paged: AuditEntryView[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(olga.cookie, 'GET', `/dashboard/audit?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      const page = res.json as { entries: AuditEntryView[]; next_cursor: string | null };
      expect(page.entries.length).toBeLessThanOrEqual(7);
      paged.push(...page.entries);
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));

    const bad = await call(olga.cookie, 'GET', '/dashboard/audit?cursor=nope');
    expect(bad.status).toBe(400);
    expect(codeOf(bad)).toBe('VALIDATION_FAILED');
    expect((await call(vera.cookie, 'GET', '/dashboard/audit')).json).toEqual(roleRefusal('admin', 'viewer'));
  });

  it('the retention job deletes entries older than SVC_AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const before = (await control.query('select count(*)::int as n from audit_log')).rows[0].n as number;
    await control.query(
      `insert into audit_log (account_id, actor_kind, action, resource_type, created_at) values ($1, 'platform', 'test.old', 'test', now() - interval '31 days'), ($1, 'platform', 'test.recent', 'test', now() - interval '29 days')`,
      [olga.accountId],
    );
    const logs: string[] = [];
    const helpers = { job: { attempts: 1, max_attempts: 1 }, query: (text: string, values?: unknown[]) => control.query(text, values), logger: { info: (m: string) => logs.push(m) } };
    await toTask(auditPurge, { config: { auditRetentionDays: 30 } })({}, helpers as never);
    const actions = (await control.query(`select action from audit_log where resource_type = 'test'`)).rows.map((r) => r.action);
    expect(actions).toEqual(['test.recent']);
    expect((await control.query('select count(*)::int as n from audit_log')).rows[0].n).toBe(before + 1);
    expect(logs).toEqual(['deleted 1 audit log entries older than 30 days']);
  });
});
