import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import { generateKey, hashKey, keyHint } from '../core/crypto.ts';
import { isUuid } from '../core/uuid.ts';
import { errors } from '../core/errors.ts';
import type { Caller, Role } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';
import { prepared } from '../db/prepared.ts';
import type { PgNotices } from '../db/notices.ts';
import { ResolvedKeys } from './resolved-keys.ts';

export const KEY_PREFIX = { platform: 'svc_pk_', service: 'svc_sk_', substrate: 'svc_sub_', publishable: 'svc_pub_' } as const;
type KeyKind = Exclude<keyof typeof KEY_PREFIX, 'publishable'>;

/** Each key kind lives in its own table and is owned through one column. */
const KEY_TABLES = {
  platform: { table: 'platform_keys', owner: 'account_id' },
  service: { table: 'service_keys', owner: 'app_id' },
  substrate: { table: 'substrate_keys', owner: 'account_id' },
} as const;

export interface KeyInfo {
  id: string;
  name: string;
  hint: string;
  created_at: string;
}

export interface CreatedKey extends KeyInfo {
  /** The secret itself: returned once, stored only as a hash. */
  key: string;
}

/**
 * A platform key acts with its role in the account; `created_by` is its person: who made it, or the person behind the
 * key that made it (null: the operator's keys, which no person is behind).
 */
export interface PlatformKeyInfo extends KeyInfo {
  role: Role;
  created_by: string | null;
}

export interface CreatedPlatformKey extends PlatformKeyInfo {
  key: string;
}

type Db = Kysely<ControlDatabase> | Transaction<ControlDatabase>;

/** What a long-lived connection was opened with: a key, or an app (a function's own calls); see `stillValid`. */
export interface CredentialRef {
  kind: KeyKind | 'app' | 'session';
  id: string;
}

/**
 * Where each kind of credential stands: its table, the id column and its type (key ids are uuids, compared as such so
 * the primary key serves; app ids and session hashes are text), and for sessions, that they have not expired.
 */
const CREDENTIAL_ROWS: Record<CredentialRef['kind'], { table: string; id: string; type: 'uuid' | 'text'; live?: string }> = {
  platform: { table: KEY_TABLES.platform.table, id: 'id', type: 'uuid' },
  service: { table: KEY_TABLES.service.table, id: 'id', type: 'uuid' },
  substrate: { table: KEY_TABLES.substrate.table, id: 'id', type: 'uuid' },
  app: { table: 'apps', id: 'id', type: 'text' },
  session: { table: 'sessions', id: 'id_hash', type: 'text', live: 'expires_at > now()' },
};

/** The key a caller presented (none for end users and anonymous callers, whose tokens are not revoked one by one). */
export function credentialOf(caller: Caller): CredentialRef | undefined {
  if (caller.kind === 'service' || caller.kind === 'substrate') return { kind: caller.kind, id: caller.keyId };
  if (caller.kind === 'platform' && caller.keyId !== null) return { kind: 'platform', id: caller.keyId };
  if (caller.kind === 'platform' && caller.sessionId !== undefined) return { kind: 'session', id: caller.sessionId };
  return undefined;
}

/** `kind:id`, the form `stillValid` answers in. */
export const credentialKey = (c: CredentialRef): string => `${c.kind}:${c.id}`;

/** The columns every key table shares. */
type KeyRow = Pick<Selectable<ControlDatabase[(typeof KEY_TABLES)[KeyKind]['table']]>, 'id' | 'name' | 'hint' | 'created_at'>;

function keyView(row: KeyRow): KeyInfo {
  return { id: row.id, name: row.name, hint: row.hint, created_at: row.created_at.toISOString() };
}

const PLATFORM_KEY_COLUMNS = ['id', 'name', 'hint', 'created_at', 'role', 'created_by'] as const;
type PlatformKeyRow = Pick<Selectable<ControlDatabase['platform_keys']>, (typeof PLATFORM_KEY_COLUMNS)[number]>;

function platformKeyView(row: PlatformKeyRow): PlatformKeyInfo {
  return { ...keyView(row), role: row.role, created_by: row.created_by };
}

export interface PublishableKey {
  id: string;
  name: string;
  key: string;
  created_at: string;
}

function publishableView(row: { id: string; name: string; key: string; created_at: Date }): PublishableKey {
  return { id: row.id, name: row.name, key: row.key, created_at: row.created_at.toISOString() };
}

/** A key's row by its hash (a publishable key's by itself), one statement per kind, compiled once: every authenticated request runs one. */
function keyLookups(db: Kysely<ControlDatabase>) {
  return {
    service: prepared(db, (hash) =>
      db
        .selectFrom('service_keys as k')
        .innerJoin('apps as a', 'a.id', 'k.app_id')
        .select(['k.id', 'k.app_id', 'a.account_id'])
        .where('k.key_hash', '=', hash)
        .where('a.status', '=', 'ready'),
    ),
    platform: prepared(db, (hash) => db.selectFrom('platform_keys').select(['id', 'account_id', 'role', 'created_by']).where('key_hash', '=', hash)),
    substrate: prepared(db, (hash) => db.selectFrom('substrate_keys').select(['id', 'account_id', 'created_by', 'substrate_user_id']).where('key_hash', '=', hash)),
    publishable: prepared(db, (key) =>
      db
        .selectFrom('publishable_keys as k')
        .innerJoin('apps as a', 'a.id', 'k.app_id')
        .select(['k.id', 'k.app_id'])
        .where('k.key', '=', key)
        .where('a.status', '=', 'ready'),
    ),
  };
}

export class KeysService {
  readonly #db: Kysely<ControlDatabase>;
  readonly #lookup: ReturnType<typeof keyLookups>;
  readonly #resolved: ResolvedKeys;

  /** With `notices` (an api process), resolved keys are cached while they are heard (ResolvedKeys). */
  constructor(db: Kysely<ControlDatabase>, notices?: PgNotices) {
    this.#db = db;
    this.#lookup = keyLookups(db);
    this.#resolved = new ResolvedKeys(notices);
  }

  /**
   * An owner key of the operator's for an account (created_by null): no person is behind it, so no membership change
   * ends it (the first start's key; tests make accounts' keys with it).
   */
  async create(_kind: 'platform', accountId: string, name: string, db: Db = this.#db): Promise<CreatedKey> {
    const key = generateKey(KEY_PREFIX.platform);
    return { ...(await this.#insertOperatorKey(accountId, name, key, db)), key };
  }

  /**
   * A service key of an app, made for `createdBy` (the person behind the caller that asked: it is revoked when they
   * leave the account or drop below developer; null when the platform made it, for a shipped template).
   */
  async createService(appId: string, name: string, createdBy: string | null, db: Db = this.#db): Promise<CreatedKey> {
    const key = generateKey(KEY_PREFIX.service);
    const row = await db
      .insertInto('service_keys')
      .values({ app_id: appId, key_hash: hashKey(key), hint: keyHint(key), name, created_by: createdBy })
      .returning(['id', 'name', 'hint', 'created_at'])
      .executeTakeFirstOrThrow();
    return { ...keyView(row), key };
  }

  /**
   * A publishable key of an app (svc_pub_...): what a browser or a public client sends (supabase-js's key). It stands
   * for no one, so it is kept as it is and shown again in lists.
   */
  async createPublishable(appId: string, name: string, db: Db = this.#db): Promise<PublishableKey> {
    const row = await db
      .insertInto('publishable_keys')
      .values({ app_id: appId, key: sql<string>`svc_new_publishable_key()`, name })
      .returning(['id', 'name', 'key', 'created_at'])
      .executeTakeFirstOrThrow();
    return publishableView(row);
  }

  async listPublishable(appId: string): Promise<PublishableKey[]> {
    const rows = await this.#db.selectFrom('publishable_keys').select(['id', 'name', 'key', 'created_at']).where('app_id', '=', appId).orderBy('created_at').orderBy('id').execute();
    return rows.map(publishableView);
  }

  /** Answers once this process heard the key is gone (ResolvedKeys.changed): its next request here is refused. */
  async revokePublishable(appId: string, keyId: string): Promise<void> {
    const gone = await this.#resolved.changed(
      () => this.#db.deleteFrom('publishable_keys').where('id', '=', keyId).where('app_id', '=', appId).returning('key').execute(),
      (rows) => rows.map((r) => hashKey(r.key)),
    );
    if (!gone.length) throw errors.notFound(`Key '${keyId}'`, 'List the keys to find a valid key id.');
  }

  /** A person's substrate key: it acts for `substrateUserId`, their own substrate user, and goes when they leave. */
  async createSubstrate(accountId: string, personId: string, substrateUserId: string, name: string): Promise<CreatedKey> {
    const key = generateKey(KEY_PREFIX.substrate);
    const row = await this.#db
      .insertInto('substrate_keys')
      .values({ account_id: accountId, key_hash: hashKey(key), hint: keyHint(key), name, created_by: personId, substrate_user_id: substrateUserId })
      .returning(['id', 'name', 'hint', 'created_at'])
      .executeTakeFirstOrThrow();
    return { ...keyView(row), key };
  }

  async list(kind: KeyKind, ownerId: string): Promise<KeyInfo[]> {
    const { table, owner } = KEY_TABLES[kind];
    const { rows } = await sql<KeyRow>`select id, name, hint, created_at from ${sql.table(table)}
      where ${sql.ref(owner)} = ${ownerId} order by created_at, id`.execute(this.#db);
    return rows.map(keyView);
  }

  /**
   * Revoking deletes the row: the hash is gone, so the key can never resolve again. `madeBy` limits it to the keys
   * that person made (a member revoking their own substrate key); another's is then not found. Answers once this
   * process heard the key is gone (ResolvedKeys.changed): its next request here is refused.
   */
  async revoke(kind: KeyKind, ownerId: string, keyId: string, madeBy?: string): Promise<void> {
    const { table, owner } = KEY_TABLES[kind];
    const { rows } = await this.#resolved.changed(
      () =>
        sql<{ key_hash: string }>`delete from ${sql.table(table)}
          where id = ${keyId} and ${sql.ref(owner)} = ${ownerId}${madeBy === undefined ? sql`` : sql` and created_by = ${madeBy}`}
          returning key_hash`.execute(this.#db),
      (result) => result.rows.map((r) => r.key_hash),
    );
    if (!rows.length) throw errors.notFound(`Key '${keyId}'`, 'List the keys to find a valid key id.');
  }

  /**
   * Answers once this process heard every key change committed so far (ResolvedKeys.settled): for changes that revoke
   * or lower keys without naming them (an app deleted, a member's role changed).
   */
  async settled(): Promise<void> {
    await this.#resolved.settled(this.#db);
  }

  /** A platform key of the account with a role (its maker checks it is not above their own) and its maker. */
  async createPlatform(accountId: string, name: string, grant: { role: Role; createdBy: string | null }): Promise<CreatedPlatformKey> {
    const key = generateKey(KEY_PREFIX.platform);
    const row = await this.#db
      .insertInto('platform_keys')
      .values({ account_id: accountId, key_hash: hashKey(key), hint: keyHint(key), name, role: grant.role, created_by: grant.createdBy })
      .returning(PLATFORM_KEY_COLUMNS)
      .executeTakeFirstOrThrow();
    return { ...platformKeyView(row), key };
  }

  async listPlatform(accountId: string): Promise<PlatformKeyInfo[]> {
    const rows = await this.#db.selectFrom('platform_keys').select(PLATFORM_KEY_COLUMNS).where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    return rows.map(platformKeyView);
  }

  /** The role of one of the account's platform keys; undefined when the account has no such key. */
  async platformKeyRole(accountId: string, keyId: string): Promise<Role | undefined> {
    const row = await this.#db.selectFrom('platform_keys').select('role').where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
    return row?.role;
  }

  /**
   * Which of `credentials` still stand (as `credentialKey`s): a revoked key's row is deleted, a deleted app's too, so
   * a connection opened with either can be closed. One query per kind present.
   */
  async stillValid(credentials: readonly CredentialRef[]): Promise<Set<string>> {
    const valid = new Set<string>();
    const byKind = Map.groupBy(credentials, (c) => c.kind);
    for (const [kind, refs] of byKind) {
      const row = CREDENTIAL_ROWS[kind];
      const ids = refs.map((r) => r.id).filter((id) => row.type === 'text' || isUuid(id));
      if (!ids.length) continue;
      const { rows } = await sql<{ id: string }>`select ${sql.ref(row.id)}::text as id from ${sql.table(row.table)}
        where ${sql.ref(row.id)} = any(${ids}::${sql.raw(row.type)}[])${sql.raw(row.live ? ` and ${row.live}` : '')}`.execute(this.#db);
      for (const { id } of rows) valid.add(credentialKey({ kind, id }));
    }
    return valid;
  }

  /**
   * Resolves an opaque svc_ key to its caller, or undefined when it is not one of ours; from this process's cache
   * while it hears key notices (ResolvedKeys).
   */
  async resolve(bearer: string): Promise<Caller | undefined> {
    const hash = hashKey(bearer);
    return this.#resolved.resolve(hash, () => this.#lookupKey(bearer, hash));
  }

  async #lookupKey(bearer: string, hash: string): Promise<Caller | undefined> {
    if (bearer.startsWith(KEY_PREFIX.service)) {
      const [row] = await this.#lookup.service(hash);
      return row && { kind: 'service', accountId: row.account_id, appId: row.app_id, keyId: row.id };
    }
    if (bearer.startsWith(KEY_PREFIX.platform)) {
      const [row] = await this.#lookup.platform(hash);
      return row && { kind: 'platform', accountId: row.account_id, role: row.role, via: 'key', keyId: row.id, personId: null, keyPerson: row.created_by };
    }
    if (bearer.startsWith(KEY_PREFIX.publishable)) {
      const [row] = await this.#lookup.publishable(bearer);
      return row && { kind: 'none', appId: row.app_id, keyId: row.id };
    }
    if (bearer.startsWith(KEY_PREFIX.substrate)) {
      const [row] = await this.#lookup.substrate(hash);
      return row && { kind: 'substrate', accountId: row.account_id, keyId: row.id, personId: row.created_by, userId: row.substrate_user_id };
    }
    return undefined;
  }

  /** SVC_PLATFORM_API_KEY: after start an owner account holds exactly this key (idempotent across restarts). */
  async ensureOwnerKey(key: string): Promise<void> {
    const exists = await this.#db.selectFrom('platform_keys').select('id').where('key_hash', '=', hashKey(key)).executeTakeFirst();
    if (exists) return;
    await this.#db.transaction().execute(async (tx) => {
      const account = await tx.insertInto('accounts').values({ name: 'owner' }).returning('id').executeTakeFirstOrThrow();
      await this.#insertOperatorKey(account.id, 'SVC_PLATFORM_API_KEY', key, tx);
    });
  }

  /**
   * With no configured key and no account yet, the first start mints an owner key into the data dir
   * (mode 0600), so `npm start` on defaults yields a usable platform. The key itself is never logged.
   */
  async ensureFirstAccount(dataDir: string, log: Logger): Promise<void> {
    const any = await this.#db.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
    if (any) return;
    const file = path.join(dataDir, 'platform-api-key');
    await this.#db.transaction().execute(async (tx) => {
      const account = await tx.insertInto('accounts').values({ name: 'owner' }).returning('id').executeTakeFirstOrThrow();
      const { key } = await this.create('platform', account.id, 'first start', tx);
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      writeFileSync(file, key + '\n', { mode: 0o600 });
    });
    log.warn({ file }, 'no SVC_PLATFORM_API_KEY set: created an owner account; its platform API key is in this file');
  }

  /** A platform key with no person behind it (created_by null), with the owner role. */
  async #insertOperatorKey(accountId: string, name: string, key: string, db: Db): Promise<KeyInfo> {
    const row = await db
      .insertInto('platform_keys')
      .values({ account_id: accountId, key_hash: hashKey(key), hint: keyHint(key), name })
      .returning(['id', 'name', 'hint', 'created_at'])
      .executeTakeFirstOrThrow();
    return keyView(row);
  }
}
