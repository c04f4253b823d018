// One realtime socket's session, as realtime-js speaks to it: heartbeats, channel joins (each with its own role, from
// its access token), broadcast, presence, token refresh, leave; the limits of one socket (channels, topic length, a
// message rate) and the answers to what it cannot read. Transport-free: the websocket is an Outlet.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { decode, encodeText, MAX_BINARY_FIELD_BYTES, OutgoingBroadcast, reply, type BroadcastBody, type Frame, type Vsn } from './protocol.ts';
import { expiredMessage, reason, resolveRole, type ChannelRole, type TokenVerifiers } from './roles.ts';
import type { RealtimeHub, Subscriber, TopicKey } from './hub.ts';
import type { PresenceDiff } from './presence.ts';
import type { Binding, PostgresChanges } from './postgres-changes.ts';
import type { Viewer } from './visibility.ts';
import type { PrivateChannels } from './channel-access.ts';
import { parsePersist, parseReplay, StoreRefused, type Replayed, type StoredBroadcasts } from './stored.ts';
import { KEY_PREFIX } from '../auth/keys.ts';

/** Channels one socket may have joined at once. */
export const MAX_CHANNELS_PER_SOCKET = 100;
/** A channel topic (`realtime:<name>`) in UTF-8 bytes: binary frames carry it behind a one-byte length. */
export const MAX_TOPIC_BYTES = MAX_BINARY_FIELD_BYTES;
/** Messages a socket may send per second, sustained; a burst may reach MESSAGE_BURST. Beyond: closed 1008. */
export const MESSAGES_PER_SECOND = 100;
export const MESSAGE_BURST = 200;
/** A presence's payload, as JSON. */
export const MAX_PRESENCE_BYTES = 8 * 1024;
/** Frames a socket may have queued unsent; a client further behind is dropped (it reconnects and rejoins). */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** A channel whose token lives longer is checked again after this long (its exp is then nearer). */
const MAX_EXPIRY_TIMER_MS = 3_600_000;
const TOPIC_PREFIX = 'realtime:';
/** How long a join with postgres_changes waits for the changes to flow before it is answered anyway. */
const JOIN_LIVE_WAIT_MS = 5_000;

/** Supabase Realtime's words for a private channel its caller may not read, or may read but not write. */
const unreadable = (name: string) => `You do not have permissions to read from this Channel topic: ${name}`;
const unwritable = (name: string) => `You do not have permissions to write to this Channel topic: ${name}`;

/** A channel's role as row-level security sees it. */
function viewerOf(role: ChannelRole): Viewer {
  if (role.kind === 'user') return { role: 'svc_user', claims: JSON.stringify(role.claims) };
  return { role: role.kind === 'service' ? 'svc_service' : 'svc_anon', claims: '{}' };
}

/** The websocket, as a session writes to it. */
export interface Outlet {
  readonly open: boolean;
  /** Bytes queued unsent. */
  readonly bufferedAmount: number;
  send(data: string | Buffer): void;
  close(code: number, reason: string): void;
  terminate(): void;
}

export interface SessionDeps {
  appId: string;
  vsn: Vsn;
  /** The role of the socket's own key (anonymous for the publishable key, the app for the secret key). */
  keyRole: ChannelRole;
  hub: RealtimeHub;
  /** postgres_changes: bindings checked, and changes delivered as each channel's role may see them. */
  changes: PostgresChanges;
  verifiers: TokenVerifiers;
  /** Who may read and write each private channel (the app's declared rules). */
  access: PrivateChannels;
  /** Private channels' stored broadcasts (persist, replay). */
  stored: StoredBroadcasts;
  /** Called once when the socket has closed. */
  ended: () => void;
  log: Logger;
}

type To = { joinRef: string | null; ref: string | null; topic: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isAppKey = (token: unknown): boolean => typeof token === 'string' && (token.startsWith(KEY_PREFIX.publishable) || token.startsWith(KEY_PREFIX.service));
/** realtime-js sends booleans; other clients send them as strings too. */
const flag = (v: unknown): boolean => v === true || v === 'true';

/** A joined channel: what it asked for at its join, and who it acts for now. */
class Channel implements Subscriber {
  readonly topic: string;
  readonly key: TopicKey;
  readonly joinRef: string | null;
  readonly self: boolean;
  readonly ack: boolean;
  readonly presenceKey: string;
  presence: boolean;
  role: ChannelRole;
  token: unknown;
  /** Whether its role may broadcast and track presence on it (a private channel's rule may allow reading only). */
  writable: boolean;
  expiry: NodeJS.Timeout | undefined;
  /** Ends its postgres_changes subscription, when it has one; `forget`: its position too (it left for good). */
  stopChanges: ((forget?: boolean) => void) | undefined;
  /** Changes flow (postgres_changes); `answered`: the join was answered, so `system` may announce it. */
  live = false;
  answered = false;
  readonly #session: RealtimeSession;

  constructor(session: RealtimeSession, init: Pick<Channel, 'topic' | 'key' | 'joinRef' | 'self' | 'ack' | 'presenceKey' | 'presence' | 'role' | 'token' | 'writable'>) {
    this.#session = session;
    this.topic = init.topic;
    this.key = init.key;
    this.joinRef = init.joinRef;
    this.self = init.self;
    this.ack = init.ack;
    this.presenceKey = init.presenceKey;
    this.presence = init.presence;
    this.role = init.role;
    this.token = init.token;
    this.writable = init.writable;
  }

  broadcast(message: OutgoingBroadcast): void {
    const frame = message.frame(this.#session.vsn);
    if (frame !== undefined) this.#session.send(frame);
  }

  presenceDiff(diff: PresenceDiff): void {
    this.#session.push(this, 'presence_diff', diff);
  }
}

export class RealtimeSession {
  readonly vsn: Vsn;
  readonly #outlet: Outlet;
  readonly #deps: SessionDeps;
  readonly #channels = new Map<string, Channel>();
  /** Messages are handled one at a time, in order (a join may wait on a token check). */
  #queue: Promise<void> = Promise.resolve();
  #allowance = MESSAGE_BURST;
  #counted = Date.now();
  #ended = false;
  /** The socket closed (closed() ran). */
  #closed = false;
  /** When the client last sent anything (realtime-js heartbeats every 25 s). */
  #heardAt = Date.now();

  constructor(outlet: Outlet, deps: SessionDeps) {
    this.#outlet = outlet;
    this.#deps = deps;
    this.vsn = deps.vsn;
  }

  /** One websocket message. */
  receive(data: Buffer, isBinary: boolean): void {
    if (this.#ended) return;
    this.#heardAt = Date.now();
    if (!this.#withinRate()) {
      this.#ended = true;
      this.#outlet.close(1008, `too many messages: at most ${MESSAGES_PER_SECOND} a second`);
      return;
    }
    const incoming = decode(this.vsn, data, isBinary);
    this.#queue = this.#queue
      .then(async () => {
        if (this.#ended) return;
        if (incoming.kind === 'frame') return this.#frame(incoming.frame);
        if (incoming.kind === 'broadcast') return this.#broadcast(incoming, incoming.event, incoming.body, incoming.meta.persist);
        if (incoming.to) this.#reply(incoming.to, 'error', { reason: `MalformedMessage: ${incoming.reason}` });
      })
      .catch((err: unknown) => this.#deps.log.error({ err, app_id: this.#deps.appId }, 'realtime message failed'));
  }

  /**
   * The socket closed: its channels are left (their presences with them). `dropped`: the client did not mean to go (the
   * connection broke, or the server went away), so its channels' postgres_changes positions stay for a rejoin to catch
   * up from; a page that closed or reloaded starts afresh.
   */
  closed(dropped = false): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ended = true;
    for (const channel of this.#channels.values()) this.#drop(channel, !dropped);
    this.#deps.ended();
  }

  send(data: string | Buffer): void {
    if (!this.#outlet.open) return;
    if (this.#outlet.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.#ended = true;
      return this.#outlet.terminate();
    }
    this.#outlet.send(data);
  }

  /** A message of a channel to its client. */
  push(channel: Channel, event: string, payload: unknown, ref: string | null = null): void {
    this.send(encodeText(this.vsn, { joinRef: channel.joinRef, ref, topic: channel.topic, event, payload }));
  }

  /** Token bucket: MESSAGE_BURST messages, refilled at MESSAGES_PER_SECOND. */
  #withinRate(): boolean {
    const now = Date.now();
    this.#allowance = Math.min(MESSAGE_BURST, this.#allowance + ((now - this.#counted) / 1000) * MESSAGES_PER_SECOND);
    this.#counted = now;
    if (this.#allowance < 1) return false;
    this.#allowance -= 1;
    return true;
  }

  #reply(to: To, status: 'ok' | 'error', response: unknown): void {
    // A push without a ref asked for no answer.
    if (to.ref !== null) this.send(encodeText(this.vsn, reply(to, status, response)));
  }

  /** Phoenix's answer to a message for a topic this socket has not joined. */
  #unmatched(to: To): void {
    this.#reply(to, 'error', { reason: 'unmatched topic' });
  }

  async #frame(frame: Frame): Promise<void> {
    if (frame.topic === 'phoenix') return frame.event === 'heartbeat' ? this.#reply(frame, 'ok', {}) : this.#unmatched(frame);
    if (frame.event === 'phx_join') return this.#join(frame);
    const channel = this.#member(frame);
    if (!channel) return this.#unmatched(frame);
    const payload = frame.payload as Record<string, unknown>;
    switch (frame.event) {
      case 'phx_leave':
        this.#reply(frame, 'ok', {});
        return this.#close(channel);
      case 'broadcast':
        return this.#broadcast(frame, payload.event, { kind: 'json', value: payload.payload === undefined ? {} : payload.payload }, payload.persist);
      case 'presence':
        return this.#presence(channel, frame, payload);
      case 'access_token':
        return this.#refresh(channel, payload.access_token);
      default:
        return this.#reply(frame, 'error', { reason: `UnknownEvent: a channel takes broadcast, presence, access_token and phx_leave, not '${frame.event.slice(0, 100)}'` });
    }
  }

  /** The joined channel a message is for: its topic, and its join when the message names one. */
  #member(to: To): Channel | undefined {
    const channel = this.#channels.get(to.topic);
    return channel && (to.joinRef === null || to.joinRef === channel.joinRef) ? channel : undefined;
  }

  async #join(frame: Frame): Promise<void> {
    const refuse = (code: string, message: string) => this.#reply(frame, 'error', { reason: reason({ code, message }) });
    const { topic } = frame;
    if (!topic.startsWith(TOPIC_PREFIX)) return this.#unmatched(frame);
    const subTopic = topic.slice(TOPIC_PREFIX.length);
    if (!subTopic) return refuse('TopicNameRequired', 'You must provide a topic name');
    if (Buffer.byteLength(topic) > MAX_TOPIC_BYTES) return refuse('TopicNameTooLong', `A topic is at most ${MAX_TOPIC_BYTES} bytes, 'realtime:' included`);
    // A second join of a topic replaces the first, as Phoenix does: the first is closed.
    const previous = this.#channels.get(topic);
    if (previous) this.#close(previous);
    if (this.#channels.size >= MAX_CHANNELS_PER_SOCKET) return refuse('ChannelRateLimitReached', 'Too many channels');
    const payload = frame.payload as Record<string, unknown>;
    const config = isObject(payload.config) ? payload.config : {};
    const broadcast = isObject(config.broadcast) ? config.broadcast : {};
    const presence = isObject(config.presence) ? config.presence : {};
    const presenceKey = typeof presence.key === 'string' || typeof presence.key === 'number' ? String(presence.key) : '';
    if (Buffer.byteLength(presenceKey) > MAX_BINARY_FIELD_BYTES) return refuse('InvalidJoinPayload', `config.presence.key is at most ${MAX_BINARY_FIELD_BYTES} bytes`);
    const isPrivate = flag(config.private);
    const replay = parseReplay(broadcast.replay);
    if (!replay.ok) return refuse('InvalidJoinPayload', replay.reason);
    if (replay.value && !isPrivate) return refuse('InvalidJoinPayload', 'config.broadcast.replay is for private channels');
    // A join without a token acts for the socket's key, as Supabase Realtime's does: realtime-js sends its first join
    // before its token callback (supabase-js's session) has answered.
    const token = payload.access_token;
    const resolved = token === undefined || token === null || token === '' ? ({ ok: true, role: this.#deps.keyRole } as const) : await resolveRole(this.#deps.appId, token, this.#deps.verifiers);
    if (this.#ended) return;
    if (!resolved.ok) return this.#reply(frame, 'error', { reason: reason(resolved.refusal) });
    const rights = isPrivate ? await this.#deps.access.rights(this.#deps.appId, subTopic, resolved.role) : { read: true, write: true };
    if (this.#ended) return;
    if (!rights.read) return refuse('Unauthorized', unreadable(subTopic));
    const replayed: Replayed[] = replay.value ? await this.#deps.stored.replay(this.#deps.appId, subTopic, replay.value.since, replay.value.limit) : [];
    if (this.#ended) return;
    const asked: unknown = Array.isArray(config.postgres_changes) ? config.postgres_changes.filter((b) => b !== null && b !== undefined) : config.postgres_changes;
    let bindings: Binding[] = [];
    if (asked !== undefined && asked !== null && !(Array.isArray(asked) && asked.length === 0)) {
      const prepared = await this.#deps.changes.prepare(this.#deps.appId, asked);
      if (this.#ended) return;
      if (!prepared.ok) return this.#reply(frame, 'error', { reason: prepared.reason });
      bindings = prepared.bindings;
    }
    const channel = new Channel(this, {
      topic,
      key: { appId: this.#deps.appId, private: isPrivate, subTopic },
      joinRef: frame.joinRef,
      self: flag(broadcast.self),
      ack: flag(broadcast.ack),
      presenceKey: presenceKey || randomUUID(),
      presence: flag(presence.enabled),
      role: resolved.role,
      token,
      writable: rights.write,
    });
    this.#channels.set(topic, channel);
    this.#deps.hub.join(channel.key, channel);
    if (bindings.length && !(await this.#streamChanges(channel, bindings))) return;
    this.#reply(frame, 'ok', { postgres_changes: bindings.map((b) => b.reply) });
    for (const m of replayed) channel.broadcast(new OutgoingBroadcast(topic, m.event, m.body, { id: m.id, replayed: true }));
    if (channel.live) this.#announceLive(channel);
    if (channel.presence) this.push(channel, 'presence_state', this.#deps.hub.presenceState(channel.key));
    this.#watchExpiry(channel);
  }

  /**
   * Subscribes the channel to its changes and waits (at most JOIN_LIVE_WAIT_MS) until they flow, so that realtime-js's
   * SUBSCRIBED means a change committed from then on arrives; false when the channel was left meanwhile.
   */
  async #streamChanges(channel: Channel, bindings: Binding[]): Promise<boolean> {
    let flowing!: () => void;
    const live = new Promise<void>((resolve) => (flowing = resolve));
    const session = channel.role.kind === 'user' ? channel.role.claims.session_id : undefined;
    const resume = typeof session === 'string' ? { topic: channel.topic, session } : undefined;
    channel.stopChanges = this.#deps.changes.subscribe(this.#deps.appId, bindings, () => viewerOf(channel.role), {
      send: (payload) => this.push(channel, 'postgres_changes', payload),
      live: () => {
        if (channel.live) return;
        channel.live = true;
        flowing();
        // Announced here only once the join was answered (else right after the answer).
        if (channel.answered) this.#announceLive(channel);
      },
      trouble: (message) => this.push(channel, 'system', { extension: 'postgres_changes', status: 'error', message, channel: channel.key.subTopic }),
      lastHeard: () => this.#heardAt,
    }, resume);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([live, new Promise<void>((resolve) => (timer = setTimeout(resolve, JOIN_LIVE_WAIT_MS)))]);
    clearTimeout(timer);
    channel.answered = true;
    return this.#channels.get(channel.topic) === channel;
  }

  /** Supabase's system message, sent once changes really flow (Supabase sends it when its subscription rows exist). */
  #announceLive(channel: Channel): void {
    this.push(channel, 'system', { extension: 'postgres_changes', status: 'ok', message: 'Subscribed to PostgreSQL', channel: channel.key.subTopic });
  }

  /** A client's broadcast; `persist` (realtime-js's) stores it on a private channel for replays, first. */
  async #broadcast(to: To, event: unknown, body: BroadcastBody, persist: unknown): Promise<void> {
    const channel = this.#member(to);
    if (!channel) return this.#unmatched(to);
    if (typeof event !== 'string' || Buffer.byteLength(event) > MAX_BINARY_FIELD_BYTES) {
      return this.#reply(to, 'error', { reason: `InvalidBroadcast: a broadcast is { type: 'broadcast', event: <string of at most ${MAX_BINARY_FIELD_BYTES} bytes>, payload }` });
    }
    if (!channel.writable) return this.#reply(to, 'error', { reason: `Unauthorized: ${unwritable(channel.key.subTopic)}` });
    const ttl = parsePersist(persist);
    // realtime-js resolves send() with `response.error` when a stored broadcast is refused.
    const storeError = (message: string) => this.#reply(to, 'error', { reason: `StoreFailed: ${message}`, error: message });
    if (!ttl.ok) return storeError(ttl.reason);
    let id: string | undefined;
    if (ttl.value !== undefined) {
      if (!channel.key.private) return storeError('Only broadcasts of private channels are stored.');
      try {
        id = await this.#deps.stored.store(this.#deps.appId, channel.key.subTopic, event, body, ttl.value);
      } catch (err) {
        if (err instanceof StoreRefused) return storeError(err.message);
        throw err;
      }
      if (this.#channels.get(channel.topic) !== channel) return;
    }
    const sent = this.#deps.hub.broadcast(channel.key, event, body, channel, id === undefined ? undefined : { id });
    // Acknowledged once every api process can hear it; without ack nothing is answered (realtime-js waits for nothing).
    sent.then(
      () => channel.ack && this.#reply(to, 'ok', {}),
      (err: unknown) => {
        this.#deps.log.warn({ err, app_id: this.#deps.appId }, 'realtime broadcast not published');
        if (channel.ack) this.#reply(to, 'error', { reason: 'BroadcastFailed: the message reached this server only; send it again' });
      },
    );
  }

  #presence(channel: Channel, frame: Frame, payload: Record<string, unknown>): void {
    const { hub } = this.#deps;
    if (payload.event === 'untrack') {
      hub.untrack(channel.key, channel);
      return this.#reply(frame, 'ok', {});
    }
    if (payload.event !== 'track') return this.#reply(frame, 'error', { reason: "UnknownPresenceEvent: a presence message's event is 'track' or 'untrack'" });
    if (!channel.writable) return this.#reply(frame, 'error', { reason: `Unauthorized: ${unwritable(channel.key.subTopic)}` });
    const meta = payload.payload;
    if (!isObject(meta)) return this.#reply(frame, 'error', { reason: 'Presence track payload must be a map' });
    if (Buffer.byteLength(JSON.stringify(meta)) > MAX_PRESENCE_BYTES) {
      return this.#reply(frame, 'error', { reason: `Track message size exceeded: a presence is at most ${MAX_PRESENCE_BYTES} bytes of JSON` });
    }
    // A track is what enables presence on a channel joined without it: it gets the state first, then the diffs.
    if (!channel.presence) {
      channel.presence = true;
      this.push(channel, 'presence_state', hub.presenceState(channel.key));
    }
    hub.track(channel.key, channel, channel.presenceKey, meta);
    this.#reply(frame, 'ok', {});
  }

  /**
   * An access_token push: the same token costs nothing; a new JWT replaces the channel's role, or closes it. An app key
   * is ignored, as Supabase Realtime ignores its own keys there: supabase-js sends the key it was made with whenever it
   * holds no session (on every heartbeat too), which must not undo a token given with setAuth.
   */
  async #refresh(channel: Channel, token: unknown): Promise<void> {
    if (token === undefined || token === null || token === channel.token || isAppKey(token)) return;
    const resolved = await resolveRole(this.#deps.appId, token, this.#deps.verifiers);
    if (this.#channels.get(channel.topic) !== channel) return;
    if (!resolved.ok) return this.#shutdown(channel, resolved.refusal.message);
    // A private channel is judged again for the new role: a membership may have ended since the join.
    if (channel.key.private) {
      const rights = await this.#deps.access.rights(this.#deps.appId, channel.key.subTopic, resolved.role);
      if (this.#channels.get(channel.topic) !== channel) return;
      if (!rights.read) return this.#shutdown(channel, unreadable(channel.key.subTopic));
      channel.writable = rights.write;
    }
    channel.role = resolved.role;
    channel.token = token;
    this.#watchExpiry(channel);
  }

  /** A channel of an end user or of a realtime token closes when its token expires, unless a newer token came first. */
  #watchExpiry(channel: Channel): void {
    clearTimeout(channel.expiry);
    channel.expiry = undefined;
    const exp = channel.role.kind === 'anon' ? undefined : channel.role.expiresAt;
    if (exp === undefined) return;
    channel.expiry = setTimeout(
      () => {
        const now = Date.now() / 1000;
        if (now < exp) return this.#watchExpiry(channel);
        this.#shutdown(channel, expiredMessage(Math.floor(now - exp)));
      },
      Math.min(Math.max(0, exp * 1000 - Date.now()), MAX_EXPIRY_TIMER_MS),
    );
    channel.expiry.unref();
  }

  /** Ends a channel the server will no longer serve: a `system` error saying why, then phx_close. */
  #shutdown(channel: Channel, message: string): void {
    this.push(channel, 'system', { extension: 'system', status: 'error', message, channel: channel.key.subTopic });
    this.#close(channel);
  }

  /** phx_close (on the join's ref, as Phoenix sends it), and the channel is left. */
  #close(channel: Channel): void {
    this.push(channel, 'phx_close', {}, channel.joinRef);
    this.#drop(channel);
  }

  #drop(channel: Channel, forget = true): void {
    clearTimeout(channel.expiry);
    channel.stopChanges?.(forget);
    channel.stopChanges = undefined;
    this.#channels.delete(channel.topic);
    this.#deps.hub.leave(channel.key, channel);
  }
}
