// The substrate change stream: single-use tickets for browsers, and one LISTEN connection per api process that fans
// each committed change ({ org, usr, op, tbl, id }, published by triggers with NOTIFY) out to the sockets of that
// substrate user (each person's own), as the spec's frame { org, op, tbl, id }.
import { createHash, randomBytes } from 'node:crypto';
import type { CredentialRef } from '../auth/keys.ts';
import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import { createClient } from '../db/pg.ts';
import type { ControlDatabase } from '../db/types.ts';

/** How long a stream ticket may wait for its connection. */
export const TICKET_SECONDS = 60;
const CHANNEL = 'svc_substrate';
const RECONNECT_MS = 1_000;

export interface ChangeFrame {
  org: string;
  op: 'insert' | 'update' | 'delete';
  tbl: string;
  id: string;
}

/** A change as the trigger publishes it: the frame, and the substrate user whose row changed. */
interface Change extends ChangeFrame {
  usr: string;
}

/** Passed to every listener when the LISTEN connection was lost: frames may have been missed. */
export const LOST = Symbol('stream lost');
type Listener = (frame: ChangeFrame | typeof LOST) => void;

const hash = (ticket: string) => createHash('sha256').update(ticket).digest('hex');

export class SubstrateStream {
  readonly #db: Kysely<ControlDatabase>;
  readonly #databaseUrl: string;
  readonly #log: Logger;
  readonly #listeners = new Map<string, Set<Listener>>();
  #client: pg.Client | undefined;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;

  constructor(deps: { db: Kysely<ControlDatabase>; databaseUrl: string; log: Logger }) {
    this.#db = deps.db;
    this.#databaseUrl = deps.databaseUrl;
    this.#log = deps.log;
  }

  /**
   * A single-use ticket for one stream connection of the substrate user `user` (of the org `accountId`), valid
   * TICKET_SECONDS; only its hash is stored, with the credential that minted it (the socket closes when that is revoked).
   */
  async mintTicket(accountId: string, user: string, credential: CredentialRef | undefined): Promise<{ ticket: string; expires_in: number }> {
    const ticket = `wst_${randomBytes(32).toString('base64url')}`;
    await sql`insert into substrate_ws_tickets (ticket_hash, account_id, substrate_user_id, expires_at, credential_kind, credential_id)
      values (${hash(ticket)}, ${accountId}, ${user}, now() + make_interval(secs => ${TICKET_SECONDS}), ${credential?.kind ?? null}, ${credential?.id ?? null})`.execute(this.#db);
    await sql`delete from substrate_ws_tickets where expires_at < now() - interval '1 hour'`.execute(this.#db);
    return { ticket, expires_in: TICKET_SECONDS };
  }

  /**
   * The org, substrate user (null for a ticket minted before tickets named one) and minting credential of a ticket
   * that is known, unused and unexpired, spending it; undefined otherwise.
   */
  async consumeTicket(ticket: string): Promise<{ org: string; user: string | null; credential: CredentialRef | undefined } | undefined> {
    if (!/^wst_[A-Za-z0-9_-]{43}$/.test(ticket)) return undefined;
    const { rows } = await sql<{ account_id: string; substrate_user_id: string | null; credential_kind: CredentialRef['kind'] | null; credential_id: string | null }>`
      update substrate_ws_tickets set used_at = now()
      where ticket_hash = ${hash(ticket)} and used_at is null and expires_at > now()
      returning account_id, substrate_user_id, credential_kind, credential_id`.execute(this.#db);
    const row = rows[0];
    if (!row) return undefined;
    const credential = row.credential_kind && row.credential_id ? { kind: row.credential_kind, id: row.credential_id } : undefined;
    return { org: row.account_id, user: row.substrate_user_id, credential };
  }

  /** Delivers the changes of the org's substrate user `user` (null: all of the org's) to `listener` until the returned function is called. */
  subscribe(org: string, user: string | null, listener: Listener): () => void {
    const own: Listener = (change) => {
      if (change === LOST || user === null || (change as Change).usr === user) listener(change === LOST ? LOST : frameOf(change as Change));
    };
    let set = this.#listeners.get(org);
    if (!set) this.#listeners.set(org, (set = new Set()));
    set.add(own);
    return () => {
      set.delete(own);
      if (set.size === 0) this.#listeners.delete(org);
    };
  }

  /** LISTENs on its own connection, reconnecting after a loss (changes committed meanwhile are not replayed). */
  async start(): Promise<void> {
    this.#stopped = false;
    // TCP keepalive finds a connection that died silently (a failover); then it is replaced like any other loss.
    const client = createClient(this.#databaseUrl, { keepAlive: true, connectTimeoutMs: 10_000 });
    client.on('notification', (msg) => this.#dispatch(msg.payload));
    client.on('end', () => this.#reconnectLater());
    client.on('error', (err) => this.#log.warn({ err: err.message }, 'substrate stream connection failed'));
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
      this.#client = client;
    } catch (err) {
      this.#log.warn({ err: String(err) }, 'substrate stream could not listen; retrying');
      await client.end().catch(() => undefined);
      this.#reconnectLater();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #reconnectLater(): void {
    if (this.#stopped || this.#retry) return;
    this.#client = undefined;
    // Changes committed until the new LISTEN are not replayed: tell every subscriber, whose client must re-fetch.
    for (const set of this.#listeners.values()) for (const listener of set) listener(LOST);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.start();
    }, RECONNECT_MS);
    this.#retry.unref();
  }

  #dispatch(payload: string | undefined): void {
    let change: Change;
    try {
      change = JSON.parse(payload ?? '') as Change;
    } catch {
      return;
    }
    for (const listener of this.#listeners.get(change.org) ?? []) listener(change);
  }
}

/** The spec's frame of a change: its substrate user stays on the server. */
const frameOf = ({ org, op, tbl, id }: Change): ChangeFrame => ({ org, op, tbl, id });
