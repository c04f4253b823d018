// Resolved keys, cached per api process while it hears the control database's notices (PgNotices): every change to
// what a key resolves to is announced with the key's hash (db/migrations/0047_key_notices.ts), so a cached key is
// dropped at once everywhere, and a request with a key costs no database read. Only keys that resolved are kept: a
// key made elsewhere resolves at its first use. While notices are not heard (a lost connection, a worker, a test
// without them) every key is read from the database, as the cache could have missed a revocation.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Caller } from '../core/caller.ts';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';

/** The channel on which every change to a key is announced, with its hash. */
export const KEYS_CHANNEL = 'svc_keys';

/** Keys one process keeps; one more drops the least recently used. */
const MAX_CACHED_KEYS = 10_000;

export class ResolvedKeys {
  readonly #notices: PgNotices | undefined;
  readonly #cache = new Map<string, Caller>();
  /**
   * Counts the notices and losses heard: a lookup that began before one may have read a row the notice announced as
   * changed, after the notice dropped it, so it caches nothing.
   */
  #heard = 0;

  constructor(notices: PgNotices | undefined) {
    this.#notices = notices;
    notices?.subscribe(KEYS_CHANNEL, {
      notice: (hash) => {
        this.#heard++;
        this.#cache.delete(hash);
      },
      lost: () => {
        this.#heard++;
        this.#cache.clear();
      },
    });
  }

  /** The caller of the key of `hash`: cached while notices are heard, else (and when not cached) from `lookup`. */
  async resolve(hash: string, lookup: () => Promise<Caller | undefined>): Promise<Caller | undefined> {
    if (!this.#notices?.listening) return lookup();
    const cached = this.#cache.get(hash);
    if (cached) {
      // Map order is use order: the first entry is the least recently used.
      this.#cache.delete(hash);
      this.#cache.set(hash, cached);
      return cached;
    }
    const heard = this.#heard;
    const caller = await lookup();
    if (caller && heard === this.#heard && this.#notices.listening) this.#keep(hash, caller);
    return caller;
  }

  /**
   * Runs a change of keys and answers once this process heard the notices of the keys `changed` names from its result
   * (PgNotices.echoed), so the same client's next request here is refused at once.
   */
  async changed<T>(change: () => Promise<T>, changed: (result: T) => readonly string[]): Promise<T> {
    return this.#notices ? this.#notices.echoed(KEYS_CHANNEL, change, changed) : change();
  }

  /**
   * Answers once this process heard every key change committed before: its own marker notice comes after them, as
   * Postgres delivers notices in commit order. For changes that do not know which keys they touched (cascades).
   */
  async settled(db: Kysely<ControlDatabase>): Promise<void> {
    if (!this.#notices?.listening) return;
    const marker = `settled:${randomUUID()}`;
    await this.changed(() => sql`select pg_notify(${KEYS_CHANNEL}, ${marker})`.execute(db), () => [marker]);
  }

  #keep(hash: string, caller: Caller): void {
    this.#cache.set(hash, Object.freeze(caller));
    if (this.#cache.size > MAX_CACHED_KEYS) this.#cache.delete(this.#cache.keys().next().value!);
  }
}
