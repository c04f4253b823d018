// The realtime area: apps' channels as realtime-js (supabase-js's `channel`) speaks them, broadcast and presence, in
// every api process (hub.ts). A websocket is a session (channels.ts); HTTP broadcasts (api/broadcast) publish here.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { AppError } from '../core/errors.ts';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';
import { RealtimeHub } from './hub.ts';
import { RealtimeSession, type Outlet } from './channels.ts';
import type { BroadcastBody, Vsn } from './protocol.ts';
import type { ChannelRole, TokenVerifiers } from './roles.ts';

/** One message of an HTTP broadcast. */
export interface HttpBroadcast {
  /** The channel's name: its topic without `realtime:`. */
  topic: string;
  event: string;
  body: BroadcastBody;
  private: boolean;
}

export class RealtimeService {
  readonly #hub: RealtimeHub;
  readonly #verifiers: TokenVerifiers;
  readonly #log: Logger;

  constructor(deps: { db: Kysely<ControlDatabase>; notices: PgNotices; verifiers: TokenVerifiers; log: Logger }) {
    this.#hub = new RealtimeHub(deps);
    this.#verifiers = deps.verifiers;
    this.#log = deps.log;
  }

  /** Serves this process's sockets, and hears the other api processes. */
  start(): void {
    this.#hub.start();
  }

  stop(): Promise<void> {
    return this.#hub.stop();
  }

  /** The session of a websocket opened for `appId` with serializer `vsn` and a key whose role is `keyRole`. */
  session(appId: string, vsn: Vsn, keyRole: ChannelRole, outlet: Outlet): RealtimeSession {
    return new RealtimeSession(outlet, { appId, vsn, keyRole, hub: this.#hub, verifiers: this.#verifiers, log: this.#log });
  }

  /**
   * Broadcasts sent over HTTP, by an anonymous caller (public channels only) or a signed-in end user or the app (any);
   * resolves once every api process can hear them.
   */
  async send(appId: string, anonymous: boolean, messages: readonly HttpBroadcast[]): Promise<void> {
    if (anonymous && messages.some((m) => m.private)) {
      throw new AppError(
        401,
        'AUTH_REQUIRED',
        'Private channels take a signed-in end user or the app itself; this request is anonymous.',
        "Send the end user's access token as Authorization: Bearer (supabase-js does once signed in), or the app's secret key from a server.",
      );
    }
    await Promise.all(messages.map((m) => this.#hub.broadcast({ appId, private: m.private, subTopic: m.topic }, m.event, m.body)));
  }
}
