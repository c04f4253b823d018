// The realtime area: apps' channels as realtime-js (supabase-js's `channel`) speaks them, broadcast and presence, in
// every api process (hub.ts). A websocket is a session (channels.ts); HTTP broadcasts (api/broadcast) publish here.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { AppError, errors } from '../core/errors.ts';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';
import { RealtimeHub } from './hub.ts';
import { RealtimeSession, type Outlet } from './channels.ts';
import type { BroadcastBody, Vsn } from './protocol.ts';
import type { ChannelRole, TokenVerifiers } from './roles.ts';
import { ChangeFeeds } from './capture.ts';
import { PostgresChanges, streams } from './postgres-changes.ts';
import { RowVisibility } from './visibility.ts';
import { RealtimeTokens, type Credentials } from './tokens.ts';
import { PrivateChannels } from './channel-access.ts';
import { StoredBroadcasts, StoreRefused } from './stored.ts';
import type { CredentialRef } from '../auth/keys.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import type { CatalogCache } from '../schema/catalog-cache.ts';

/** One message of an HTTP broadcast. */
export interface HttpBroadcast {
  /** The channel's name: its topic without `realtime:`. */
  topic: string;
  event: string;
  body: BroadcastBody;
  private: boolean;
  /** Seconds to keep it for replays (realtime-js's httpSend persist; private channels only). */
  persist?: number;
}

/** Which of an app's tables stream, and what this process serves of it. */
export interface RealtimeStatus {
  /** Every table, by name: `realtime` its definition's flag, `streams` whether postgres_changes joins may name it. */
  tables: Array<{ name: string; realtime: boolean; streams: boolean }>;
  /** Channels joined to the app on this api process (one of possibly several). */
  channels: number;
}

export interface RealtimeDeps {
  db: Kysely<ControlDatabase>;
  notices: PgNotices;
  verifiers: Omit<TokenVerifiers, 'realtimeTokens'>;
  /** Realtime tokens: the key they are signed with, and where the credentials that mint them stand. */
  tokens: { key: Buffer; credentials: Credentials };
  /** postgres_changes: the app databases (capture, row-level security) and their catalogs. */
  databases: AppDatabases;
  catalogs: CatalogCache;
  changes: { pollMs: number; retentionSeconds: number };
  /** Sockets one app may hold open on this process. */
  maxSocketsPerApp: number;
  log: Logger;
}

export class RealtimeService {
  readonly #hub: RealtimeHub;
  readonly #feeds: ChangeFeeds;
  readonly #changes: PostgresChanges;
  readonly #verifiers: TokenVerifiers;
  readonly #tokens: RealtimeTokens;
  readonly #catalogs: CatalogCache;
  readonly #access: PrivateChannels;
  readonly #stored: StoredBroadcasts;
  readonly #maxSockets: number;
  /** Open sockets per app on this process. */
  readonly #sockets = new Map<string, number>();
  readonly #log: Logger;

  constructor(deps: RealtimeDeps) {
    this.#hub = new RealtimeHub(deps);
    // One reader name per process: the capture triggers write while any reader of the app is registered.
    this.#feeds = new ChangeFeeds({ databases: deps.databases, readerId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, ...deps.changes, log: deps.log });
    this.#changes = new PostgresChanges({ feeds: this.#feeds, visibility: new RowVisibility(deps.databases), catalogs: deps.catalogs, log: deps.log });
    this.#tokens = new RealtimeTokens(deps.tokens.key, deps.tokens.credentials);
    this.#verifiers = { ...deps.verifiers, realtimeTokens: this.#tokens };
    this.#catalogs = deps.catalogs;
    this.#access = new PrivateChannels(deps.databases, deps.log);
    this.#maxSockets = deps.maxSocketsPerApp;
    this.#stored = new StoredBroadcasts(deps.db, deps.log);
    this.#log = deps.log;
  }

  /** Serves this process's sockets, and hears the other api processes. */
  start(): void {
    this.#hub.start();
  }

  async stop(): Promise<void> {
    await this.#feeds.close();
    await this.#hub.stop();
  }

  /**
   * Refuses (429) a socket the app has no room for on this process. Checked at the upgrade and counted once open, so
   * upgrades in flight at once may pass it together.
   */
  checkRoom(appId: string): void {
    if ((this.#sockets.get(appId) ?? 0) < this.#maxSockets) return;
    throw new AppError(
      429,
      'RATE_LIMITED',
      `The app has ${this.#maxSockets} realtime sockets open on this server, its most (SVC_REALTIME_MAX_SOCKETS_PER_APP).`,
      'Share one socket per client: one supabase-js client holds all its channels. Retry later.',
    );
  }

  /** The session of a websocket opened for `appId` with serializer `vsn` and a key whose role is `keyRole`. */
  session(appId: string, vsn: Vsn, keyRole: ChannelRole, outlet: Outlet): RealtimeSession {
    this.#sockets.set(appId, (this.#sockets.get(appId) ?? 0) + 1);
    const ended = () => {
      const left = (this.#sockets.get(appId) ?? 1) - 1;
      if (left > 0) this.#sockets.set(appId, left);
      else this.#sockets.delete(appId);
    };
    return new RealtimeSession(outlet, { appId, vsn, keyRole, hub: this.#hub, changes: this.#changes, verifiers: this.#verifiers, access: this.#access, stored: this.#stored, ended, log: this.#log });
  }

  /**
   * The app's tables as a postgres_changes join sees them now (the same catalog snapshot: a table streams with
   * `realtime: true` and a primary key), and the channels this process holds for it.
   */
  async status(appId: string): Promise<RealtimeStatus> {
    const catalog = await this.#catalogs.refresh(appId);
    // The catalog comes ordered by name.
    const tables = [...catalog.values()].map((t) => ({ name: t.name, realtime: t.realtime === true, streams: streams(t) }));
    return { tables, channels: this.#hub.channels(appId) };
  }

  /** A realtime token for the app's channels (the service role for a few minutes), bound to the credential minting it. */
  token(appId: string, credential: CredentialRef): { token: string; expires_in: number } {
    return this.#tokens.mint(appId, credential);
  }

  /**
   * Broadcasts sent over HTTP, as `role`: to public channels by anyone, to private ones as their rules allow (never
   * anonymously); resolves once every api process can hear them. One refused message sends none.
   */
  async send(appId: string, role: ChannelRole, messages: readonly HttpBroadcast[]): Promise<void> {
    const privateNames = [...new Set(messages.filter((m) => m.private).map((m) => m.topic))];
    if (role.kind === 'anon' && privateNames.length > 0) {
      throw new AppError(
        401,
        'AUTH_REQUIRED',
        'Private channels take a signed-in end user or the app itself; this request is anonymous.',
        "Send the end user's access token as Authorization: Bearer (supabase-js does once signed in), or the app's secret key from a server.",
      );
    }
    const rights = await Promise.all(privateNames.map((name) => this.#access.rights(appId, name, role)));
    const refused = privateNames.find((_, i) => !rights[i]!.write);
    if (refused !== undefined) {
      throw new AppError(
        403,
        'FORBIDDEN',
        `This end user may not send to the private channel '${refused}': the app's channels rules (schema_get's channels) do not allow it.`,
        'Send it from a server with the secret key, or change the rule with schema_apply.',
      );
    }
    await Promise.all(messages.map((m) => this.#sendOne(appId, m)));
  }

  /** One HTTP broadcast, stored first when it asks to be (a refusal is 413 or 429). */
  async #sendOne(appId: string, m: HttpBroadcast): Promise<void> {
    let id: string | undefined;
    if (m.persist !== undefined) {
      if (!m.private) throw errors.validation('Only broadcasts of private channels are stored: add private=true, or leave persist out.');
      try {
        id = await this.#stored.store(appId, m.topic, m.event, m.body, m.persist);
      } catch (err) {
        if (!(err instanceof StoreRefused)) throw err;
        throw err.status === 413 ? new AppError(413, 'PAYLOAD_TOO_LARGE', err.message, 'Store a smaller payload, or send it without persist.') : new AppError(429, 'RATE_LIMITED', err.message, 'Store fewer broadcasts, or with a shorter ttl.');
      }
    }
    await this.#hub.broadcast({ appId, private: m.private, subTopic: m.topic }, m.event, m.body, undefined, id === undefined ? undefined : { id });
  }
}
