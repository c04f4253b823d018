// Migration 0036 on a control database that already holds credentials: the audit log names who made each one (a person,
// or a key whose person is followed up the chain of keys made by keys), and what outlived its person's membership or
// role ends there and then (keys made with a removed admin's key, their service keys, a demoted member's service keys
// and invitations, removed members' OAuth grants, every substrate key); what no person is behind (the operator's key
// and keys made with it) stays.
import { randomUUID } from 'node:crypto';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { adminQuery, databaseUrl, dropDatabase, uniqueSuffix } from '../helpers/db.ts';

const name = `svc_test_mig36_${uniqueSuffix()}`;
let control: ControlDb;

const migrator = () => new Migrator({ db: control.db, provider: { getMigrations: async () => migrations } satisfies MigrationProvider });
const query = async (text: string, params: unknown[] = []) => (await control.pool.query(text, params)).rows;

/** Ids of the rows the migration meets. */
const NAMES = [
  'account', 'olga', 'ada', 'dan', 'opKey', 'opChild', 'olgaKey', 'olgaChild', 'adaKey', 'adaChild', 'adaGrandchild',
  'adaService', 'childService', 'olgaService', 'danDefault', 'adaInvite', 'keyInvite', 'danInvite',
] as const;
type Name = (typeof NAMES)[number];
const id = Object.fromEntries(NAMES.map((n) => [n, randomUUID()])) as Record<Name, string>;
const APP = 'mig36appmig36app';

beforeAll(async () => {
  await adminQuery(`create database ${name}`);
  control = openControlDb(databaseUrl(name), 2);
  const names = Object.keys(migrations);
  const before = names[names.indexOf('0036_credential_persons') - 1]!;
  const { error } = await migrator().migrateTo(before);
  if (error) throw error;

  await query(`insert into accounts (id, name) values ($1, 'acme')`, [id.account]);
  for (const [person, role] of [['olga', 'owner'], ['ada', null], ['dan', 'viewer']] as const) {
    await query(`insert into persons (id, email) values ($1, $2)`, [id[person], `${person}@example.com`]);
    if (role) await query(`insert into account_members (account_id, person_id, role) values ($1, $2, $3)`, [id.account, id[person], role]);
  }
  const platformKey = (key: Name, role: string, createdBy: string | null) =>
    query(`insert into platform_keys (id, account_id, key_hash, hint, name, role, created_by) values ($1, $2, $3, 'x', $4, $5, $6)`, [id[key], id.account, `hash-${key}`, key, role, createdBy]);
  await platformKey('opKey', 'owner', null);
  await platformKey('opChild', 'admin', null);
  await platformKey('olgaKey', 'owner', id.olga);
  await platformKey('olgaChild', 'owner', null);
  await platformKey('adaKey', 'admin', id.ada);
  await platformKey('adaChild', 'admin', null);
  await platformKey('adaGrandchild', 'admin', null);
  await query(`insert into apps (id, account_id, name, subdomain, db_name, status) values ($1, $2, 'app', 'app-mig36', 'svc_app_mig36', 'ready')`, [APP, id.account]);
  for (const key of ['adaService', 'childService', 'olgaService', 'danDefault'] as const) {
    await query(`insert into service_keys (id, app_id, key_hash, hint, name) values ($1, $2, $3, 'x', $4)`, [id[key], APP, `hash-${key}`, key === 'danDefault' ? 'default' : key]);
  }
  await query(`insert into substrate_users (id, account_id, name, is_default) values ($1, $2, 'owner', true)`, [randomUUID(), id.account]);
  await query(`insert into substrate_keys (account_id, key_hash, hint, name) values ($1, 'hash-sub', 'x', 'anyone')`, [id.account]);
  const invitation = (inv: Name, role: string, invitedBy: string | null) =>
    query(`insert into invitations (id, account_id, role, token_hash, invited_by, expires_at) values ($1, $2, $3, $4, $5, now() + interval '1 day')`, [id[inv], id.account, role, `hash-${inv}`, invitedBy]);
  await invitation('adaInvite', 'admin', id.ada);
  await invitation('keyInvite', 'admin', null);
  await invitation('danInvite', 'developer', id.dan);
  await query(`insert into oauth_clients (client_id, metadata) values ('desk', '{}')`);
  for (const person of ['olga', 'ada'] as const) {
    await query(`insert into oauth_tokens (token_hash, grant_id, client_id, person_id, account_id, kind, expires_at) values ($1, $2, 'desk', $3, $4, 'refresh', now() + interval '1 day')`, [
      `hash-oauth-${person}`,
      randomUUID(),
      id[person],
      id.account,
    ]);
  }

  // What the audit log says made each.
  const made = (action: string, resourceType: string, resource: string, actorKind: 'person' | 'key', actor: string) =>
    query(`insert into audit_log (account_id, actor_kind, actor_id, action, resource_type, resource_id) values ($1, $2, $3, $4, $5, $6)`, [id.account, actorKind, actor, action, resourceType, resource]);
  await made('key.create', 'platform_key', id.opChild, 'key', id.opKey);
  await made('key.create', 'platform_key', id.olgaChild, 'key', id.olgaKey);
  await made('key.create', 'platform_key', id.adaKey, 'person', id.ada);
  await made('key.create', 'platform_key', id.adaChild, 'key', id.adaKey);
  await made('key.create', 'platform_key', id.adaGrandchild, 'key', id.adaChild);
  await made('key.create', 'service_key', id.adaService, 'person', id.ada);
  await made('key.create', 'service_key', id.childService, 'key', id.adaGrandchild);
  await made('key.create', 'service_key', id.olgaService, 'key', id.olgaChild);
  await made('app.create', 'app', APP, 'person', id.dan);
  await made('invitation.create', 'invitation', id.keyInvite, 'key', id.olgaChild);

  const { error: latest } = await migrator().migrateTo('0036_credential_persons');
  if (latest) throw latest;
}, 60_000);

afterAll(async () => {
  await control?.close();
  await dropDatabase(name);
});

describe('migration 0036 on credentials made before it', () => {
  it("keys made by a removed admin's key (and the keys those made) are revoked; the owner's chain and the operator's keys stay, with their person", async () => {
    const keys = await query(`select name, role, created_by from platform_keys order by name`);
    expect(keys).toEqual([
      { name: 'olgaChild', role: 'owner', created_by: id.olga },
      { name: 'olgaKey', role: 'owner', created_by: id.olga },
      { name: 'opChild', role: 'admin', created_by: null },
      { name: 'opKey', role: 'owner', created_by: null },
    ]);
  });

  it("service keys made by the removed admin or their keys go, and the app's first key of a member now a viewer; the owner's stays", async () => {
    expect(await query(`select name, created_by from service_keys`)).toEqual([{ name: 'olgaService', created_by: id.olga }]);
  });

  it("invitations of the removed admin and of the demoted member are revoked; the owner's key's invitation names the owner and stands", async () => {
    const open = await query(`select id, invited_by from invitations where revoked_at is null`);
    expect(open).toEqual([{ id: id.keyInvite, invited_by: id.olga }]);
  });

  it("the removed admin's OAuth grant goes, and every substrate key made before", async () => {
    expect((await query(`select person_id from oauth_tokens`)).map((r) => r.person_id)).toEqual([id.olga]);
    expect(await query(`select * from substrate_keys`)).toEqual([]);
  });

  // Last: it deletes the owner. A person deleted outright takes their keys and invitations (they were kept, of no one).
  it("deleting a person row deletes the platform keys, service keys and invitations they made; the operator's stay", async () => {
    await query(`delete from persons where id = $1`, [id.olga]);
    expect((await query(`select name from platform_keys order by name`)).map((r) => r.name)).toEqual(['opChild', 'opKey']);
    expect(await query(`select name from service_keys`)).toEqual([]);
    expect(await query(`select id from invitations where id = $1`, [id.keyInvite])).toEqual([]);
  });
});
