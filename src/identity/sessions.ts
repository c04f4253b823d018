// Server-side sessions of people on the platform: an opaque random value in an HttpOnly cookie, stored only as its
// hash, with an idle and an absolute expiry. A session acts in one account, with the person's role there.
import { sql, type Kysely } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { generateKey, hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';

export const SESSION_PREFIX = 'svc_ses_';

export interface SessionPolicy {
  idleHours: number;
  maxDays: number;
}

export interface NewSession {
  token: string;
  expiresAt: Date;
}

/** Where a session was opened from, kept with it (and in the audit log). */
export interface ClientInfo {
  ip: string | undefined;
  userAgent: string | undefined;
}

/** last_seen_at is written at most this often per session: a busy console must not write on every request. */
const TOUCH_AFTER_SECONDS = 60;

export class Sessions {
  readonly #db: Kysely<ControlDatabase>;
  readonly #policy: SessionPolicy;

  constructor(db: Kysely<ControlDatabase>, policy: SessionPolicy) {
    this.#db = db;
    this.#policy = policy;
  }

  /** A new session of the person in the account (sign-in rotates: the caller ends the old one first). */
  async create(personId: string, accountId: string, client: ClientInfo, db: Kysely<ControlDatabase> = this.#db): Promise<NewSession> {
    const token = generateKey(SESSION_PREFIX);
    const row = await db
      .insertInto('sessions')
      .values({
        id_hash: hashKey(token),
        person_id: personId,
        account_id: accountId,
        expires_at: sql<Date>`now() + make_interval(days => ${this.#policy.maxDays})`,
        ip: client.ip?.slice(0, 100) ?? null,
        user_agent: client.userAgent?.slice(0, 300) ?? null,
      })
      .returning('expires_at')
      .executeTakeFirstOrThrow();
    return { token, expiresAt: row.expires_at };
  }

  /**
   * The platform caller of a live session: the person with their current role in the session's account. Idle or
   * expired sessions, and sessions of a person no longer a member, resolve to nothing.
   */
  async resolve(token: string): Promise<Caller | undefined> {
    if (!token.startsWith(SESSION_PREFIX)) return undefined;
    const idHash = hashKey(token);
    const row = await this.#db
      .selectFrom('sessions as s')
      .innerJoin('account_members as m', (j) => j.onRef('m.account_id', '=', 's.account_id').onRef('m.person_id', '=', 's.person_id'))
      .select(['s.person_id', 's.account_id', 'm.role', sql<boolean>`s.last_seen_at < now() - make_interval(secs => ${TOUCH_AFTER_SECONDS})`.as('stale')])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', sql<Date>`now()`)
      .where('s.last_seen_at', '>', sql<Date>`now() - make_interval(hours => ${this.#policy.idleHours})`)
      .executeTakeFirst();
    if (!row) return undefined;
    if (row.stale) await this.#db.updateTable('sessions').set({ last_seen_at: sql`now()` }).where('id_hash', '=', idHash).execute();
    return { kind: 'platform', accountId: row.account_id, role: row.role, via: 'session', keyId: null, personId: row.person_id, sessionId: idHash };
  }

  /**
   * Moves the session (by its hash) to another account of its person; false when the person is no member there. The
   * role is read again on each request, so the new account's applies at once.
   */
  async switchAccount(idHash: string, personId: string, accountId: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('sessions')
      .set({ account_id: accountId })
      .where('id_hash', '=', idHash)
      .where('person_id', '=', personId)
      .where(({ exists, selectFrom }) =>
        exists(selectFrom('account_members').select('person_id').where('account_id', '=', accountId).where('person_id', '=', personId)),
      )
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Ends one session (sign-out); unknown tokens are ignored. */
  async end(token: string): Promise<void> {
    await this.#db.deleteFrom('sessions').where('id_hash', '=', hashKey(token)).execute();
  }

  /** Ends every session of the person (sign-out everywhere, a password reset); returns how many ended. */
  async endAll(personId: string, db: Kysely<ControlDatabase> = this.#db): Promise<number> {
    const result = await db.deleteFrom('sessions').where('person_id', '=', personId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
