// Postgres notifications (NOTIFY) of the control database, on one LISTEN connection per api process, for what every
// process must learn at once: a cached row that changed elsewhere (MCP sessions, resolved keys), a resource that was
// updated.
// While the connection is down nothing is heard: `listening` is false, and every subscriber is told (`lost`) so that
// it drops what it cached and reads afresh until the connection is back.
import type pg from 'pg';
import type { Logger } from 'pino';
import { createClient } from './pg.ts';

const RECONNECT_MS = 1_000;

/**
 * A process that sent notices answers once it heard its own (or after this long): Postgres signals every listener at
 * the commit, so by then the other processes have as good as heard them too, and a client's next request, wherever it
 * lands, sees the change.
 */
const ECHO_WAIT_MS = 1_000;

/** A change of this process's awaiting its own notices: what was heard while it ran, then what it still awaits. */
interface Echo {
  heard: Set<string>;
  awaited: Set<string>;
  lost: boolean;
  done(): void;
}

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
  /** Changes of this process awaiting their own notices, by channel. */
  readonly #echoes = new Map<string, Set<Echo>>();
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

  /**
   * Runs `change`, which notifies `channel` with the payloads `sent` names from its result, and answers once this
   * process heard them all (its subscribers acted on them first), at most ECHO_WAIT_MS later; at once when it is not
   * listening. Whatever is heard while `change` runs counts: a payload may be known only from its result.
   */
  async echoed<T>(channel: string, change: () => Promise<T>, sent: (result: T) => readonly string[]): Promise<T> {
    const echo: Echo = { heard: new Set(), awaited: new Set(), lost: false, done: () => undefined };
    const heard = new Promise<void>((resolve) => (echo.done = resolve));
    const waiting = this.#echoes.get(channel) ?? new Set();
    this.#echoes.set(channel, waiting.add(echo));
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await change();
      echo.awaited = new Set(sent(result).filter((payload) => !echo.heard.has(payload)));
      if (echo.awaited.size > 0 && this.listening && !echo.lost) {
        await Promise.race([heard, new Promise((resolve) => (timer = setTimeout(resolve, ECHO_WAIT_MS)))]);
      }
      return result;
    } finally {
      clearTimeout(timer);
      waiting.delete(echo);
      if (waiting.size === 0 && this.#echoes.get(channel) === waiting) this.#echoes.delete(channel);
    }
  }

  async start(): Promise<void> {
    this.#stopped = false;
    // TCP keepalive finds a connection that died silently (a failover); then it is replaced like any other loss.
    const client = createClient(this.#databaseUrl, { keepAlive: true, connectTimeoutMs: 10_000 });
    client.on('notification', (msg) => {
      const payload = msg.payload ?? '';
      for (const listener of this.#channels.get(msg.channel) ?? []) listener.notice(payload);
      for (const echo of this.#echoes.get(msg.channel) ?? []) {
        echo.heard.add(payload);
        if (echo.awaited.delete(payload) && echo.awaited.size === 0) echo.done();
      }
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

  /** Notices may have been missed: subscribers drop what they cached, and no change waits for its own any longer. */
  #tellLost(): void {
    for (const set of this.#channels.values()) for (const listener of set) listener.lost();
    for (const set of this.#echoes.values()) {
      for (const echo of set) {
        echo.lost = true;
        echo.done();
      }
    }
  }
}
