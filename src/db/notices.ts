// Postgres notifications (NOTIFY) of the control database, on one LISTEN connection per api process, for what every
// process must learn at once: a cached row that changed elsewhere (MCP sessions), a resource that was updated.
// While the connection is down nothing is heard: `listening` is false, and every subscriber is told (`lost`) so that
// it drops what it cached and reads afresh until the connection is back.
import type pg from 'pg';
import type { Logger } from 'pino';
import { createClient } from './pg.ts';

const RECONNECT_MS = 1_000;

export interface NoticeListener {
  /** A notification on the channel, with its payload. */
  notice(payload: string): void;
  /** The connection was lost or is back: notices may have been missed meanwhile. */
  lost(): void;
}

export class PgNotices {
  readonly #databaseUrl: string;
  readonly #log: Logger;
  readonly #channels = new Map<string, Set<NoticeListener>>();
  #client: pg.Client | undefined;
  #stopped = true;
  #retry: NodeJS.Timeout | undefined;

  constructor(databaseUrl: string, log: Logger) {
    this.#databaseUrl = databaseUrl;
    this.#log = log;
  }

  /** Whether notices are being heard now: what is cached on their strength is only valid while this holds. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Hears `channel` (a fixed identifier of the platform's, never user input) until the returned function is called. */
  subscribe(channel: string, listener: NoticeListener): () => void {
    let set = this.#channels.get(channel);
    if (!set) {
      this.#channels.set(channel, (set = new Set()));
      void this.#client?.query(`listen ${channel}`).catch(() => undefined);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  async start(): Promise<void> {
    this.#stopped = false;
    // TCP keepalive finds a connection that died silently (a failover); then it is replaced like any other loss.
    const client = createClient(this.#databaseUrl, { keepAlive: true, connectTimeoutMs: 10_000 });
    client.on('notification', (msg) => {
      for (const listener of this.#channels.get(msg.channel) ?? []) listener.notice(msg.payload ?? '');
    });
    client.on('end', () => this.#lost());
    try {
      await client.connect();
      for (const channel of this.#channels.keys()) await client.query(`listen ${channel}`);
      this.#client = client;
      // Anything cached before this connection listened may have changed unheard.
      this.#tellLost();
    } catch (err) {
      this.#log.warn({ err: String(err) }, 'notices could not listen; retrying');
      await client.end().catch(() => undefined);
      this.#lost();
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #lost(): void {
    this.#client = undefined;
    this.#tellLost();
    if (this.#stopped || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.start();
    }, RECONNECT_MS);
    this.#retry.unref();
  }

  #tellLost(): void {
    for (const set of this.#channels.values()) for (const listener of set) listener.lost();
  }
}
