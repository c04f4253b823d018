// The topics this api process serves and their fan-out, here and in every other api process. A topic is an app's
// channel name, public or private (the same name is two topics, as in Supabase Realtime). A broadcast reaches this
// process's subscribers at once, then the others through the control database: NOTIFY on one channel with the message
// when it fits, else the message in realtime_messages (kept MESSAGE_KEEP_SECONDS) and its id in the NOTIFY. Presence
// travels the same way: each process publishes the diffs of its own sockets' presences, answers a process that starts
// hosting a topic with its state, and says it is alive while it holds any; one unheard for PROCESS_GONE_MS is dropped.
//
// Everything a process publishes goes out in order through one query at a time (what queued meanwhile goes together in
// the next), so the others see one process's broadcasts and presence changes in the order it made them.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PgNotices } from '../db/notices.ts';
import type { ControlDatabase } from '../db/types.ts';
import { OutgoingBroadcast, type BroadcastBody, type BroadcastMeta } from './protocol.ts';
import { emptyDiff, isEmptyDiff, TopicPresences, type Meta, type PresenceDiff, type PresenceMap } from './presence.ts';

/** The NOTIFY channel of every api process (a constant: no payload ever names a channel). */
const CHANNEL = 'svc_realtime';
/** Larger messages go through realtime_messages (NOTIFY takes under 8,000 bytes). */
export const NOTIFY_MAX_BYTES = 7000;
/** How long a message stays in realtime_messages for the other processes to read. */
export const MESSAGE_KEEP_SECONDS = 60;
/** How often a process holding presences says it is alive, and looks for processes that stopped. */
export const HEARTBEAT_MS = 10_000;
/** A process unheard this long is gone: its presences leave. */
export const PROCESS_GONE_MS = 30_000;
/** Messages published in one query at most. */
const MAX_BATCH = 500;

/** A channel topic: the app, whether the channel is private, and its name (the topic without `realtime:`). */
export interface TopicKey {
  appId: string;
  private: boolean;
  subTopic: string;
}

/** A joined channel, as the hub delivers to it. */
export interface Subscriber {
  /** Receives its own broadcasts (config.broadcast.self). */
  readonly self: boolean;
  /** Receives presence diffs (config.presence.enabled, or since it tracked). */
  readonly presence: boolean;
  broadcast(message: OutgoingBroadcast): void;
  presenceDiff(diff: PresenceDiff): void;
}

interface Topic {
  key: TopicKey;
  /** The topic as clients name it: `realtime:<name>`. */
  name: string;
  subscribers: Set<Subscriber>;
  presences: TopicPresences;
  /** This process's subscribers that track a presence, with it. */
  tracked: Map<Subscriber, { key: string; meta: Meta }>;
}

/** A topic as notices carry it. */
interface WireKey {
  a: string;
  v: 0 | 1;
  t: string;
}

/** What processes tell each other; `p` the sender, `n` its sequence number (identical NOTIFYs would be merged). */
type Notice = { p: string; n: number } & (
  | (WireKey & { k: 'b'; e: string; j?: unknown; b?: string; m?: BroadcastMeta })
  | (WireKey & { k: 'pd'; d: PresenceDiff })
  | (WireKey & { k: 'sq' })
  | (WireKey & { k: 'sr'; s: PresenceMap })
  | { k: 'hb' }
  /** A message too large to NOTIFY: it is the row `id` of realtime_messages. */
  | (WireKey & { k: 'ref'; id: string })
);

interface Pending {
  text: string;
  key: TopicKey | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

const topicId = (key: TopicKey): string => `${key.appId}/${key.private ? 1 : 0}/${key.subTopic}`;
const wire = (key: TopicKey): WireKey => ({ a: key.appId, v: key.private ? 1 : 0, t: key.subTopic });
const unwire = (w: WireKey): TopicKey => ({ appId: w.a, private: w.v === 1, subTopic: w.t });

export class RealtimeHub {
  readonly #db: Kysely<ControlDatabase>;
  readonly #notices: PgNotices;
  readonly #log: Logger;
  readonly #id = randomBytes(6).toString('base64url');
  /** How this process's own notices start: they come back to it, and are dropped at once. */
  readonly #ownPrefix = `{"p":"${this.#id}"`;
  readonly #topics = new Map<string, Topic>();
  readonly #lastHeard = new Map<string, number>();
  #seq = 0;
  #outbox: Pending[] = [];
  #flushing: Promise<void> | undefined;
  /** Notices are handled in the order heard, also when one must first be read from realtime_messages. */
  #inbound: Promise<void> = Promise.resolve();
  #lastPrune = 0;
  #unlisten: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: { db: Kysely<ControlDatabase>; notices: PgNotices; log: Logger }) {
    this.#db = deps.db;
    this.#notices = deps.notices;
    this.#log = deps.log;
  }

  /** Hears the other processes (api processes only; any process may publish). */
  start(): void {
    this.#unlisten = this.#notices.subscribe(CHANNEL, { notice: (payload) => this.#heard(payload), lost: () => this.#resync() });
    this.#timer = setInterval(() => this.#tick(), HEARTBEAT_MS);
    this.#timer.unref();
  }

  /** Stops hearing, after what this process published has gone out. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#unlisten?.();
    while (this.#flushing) await this.#flushing;
    await this.#inbound;
  }

  join(key: TopicKey, subscriber: Subscriber): void {
    const id = topicId(key);
    let topic = this.#topics.get(id);
    if (!topic) {
      topic = { key, name: `realtime:${key.subTopic}`, subscribers: new Set(), presences: new TopicPresences(), tracked: new Map() };
      this.#topics.set(id, topic);
      // The other processes' presences of this topic, asked once as this process starts hosting it.
      this.#fire({ k: 'sq', ...wire(key) }, key);
    }
    topic.subscribers.add(subscriber);
  }

  leave(key: TopicKey, subscriber: Subscriber): void {
    const id = topicId(key);
    const topic = this.#topics.get(id);
    if (!topic) return;
    this.untrack(key, subscriber);
    topic.subscribers.delete(subscriber);
    if (!topic.subscribers.size) this.#topics.delete(id);
  }

  /** The channels joined to the app's topics on this process (a status figure: it walks this process's topics). */
  channels(appId: string): number {
    let count = 0;
    for (const topic of this.#topics.values()) if (topic.key.appId === appId) count += topic.subscribers.size;
    return count;
  }

  /** Every presence of the topic, of every process (presence_state). */
  presenceState(key: TopicKey): PresenceMap {
    return this.#topics.get(topicId(key))?.presences.state() ?? {};
  }

  /** The subscriber's presence under `presenceKey` (replacing the one it tracked before), with a fresh phx_ref. */
  track(key: TopicKey, subscriber: Subscriber, presenceKey: string, payload: Record<string, unknown>): void {
    const topic = this.#topics.get(topicId(key));
    if (!topic) return;
    const diff = emptyDiff();
    const before = topic.tracked.get(subscriber);
    if (before) diff.leaves[before.key] = { metas: [before.meta] };
    const meta: Meta = { ...payload, phx_ref: randomBytes(12).toString('base64url') };
    diff.joins[presenceKey] = { metas: [meta] };
    topic.tracked.set(subscriber, { key: presenceKey, meta });
    this.#presenceChanged(topic, diff);
  }

  untrack(key: TopicKey, subscriber: Subscriber): void {
    const topic = this.#topics.get(topicId(key));
    const before = topic?.tracked.get(subscriber);
    if (!topic || !before) return;
    topic.tracked.delete(subscriber);
    const diff = emptyDiff();
    diff.leaves[before.key] = { metas: [before.meta] };
    this.#presenceChanged(topic, diff);
  }

  /**
   * A user broadcast to the topic: this process's subscribers at once (but `origin`, unless it asked for its own), then
   * every other process's. Resolves once the others can hear it. `meta`: a stored broadcast's id.
   */
  broadcast(key: TopicKey, event: string, body: BroadcastBody, origin?: Subscriber, meta?: BroadcastMeta): Promise<void> {
    const topic = this.#topics.get(topicId(key));
    if (topic) {
      const message = new OutgoingBroadcast(topic.name, event, body, meta);
      for (const s of topic.subscribers) if (s !== origin || s.self) s.broadcast(message);
    }
    const payload = body.kind === 'binary' ? { b: body.bytes.toString('base64') } : { j: body.value };
    return this.#publish({ k: 'b', ...wire(key), e: event, ...payload, ...(meta ? { m: meta } : {}) }, key);
  }

  #presenceChanged(topic: Topic, diff: PresenceDiff): void {
    const changed = topic.presences.apply(this.#id, diff);
    if (isEmptyDiff(changed)) return;
    this.#deliverPresence(topic, changed);
    this.#fire({ k: 'pd', ...wire(topic.key), d: changed }, topic.key);
  }

  #deliverPresence(topic: Topic, diff: PresenceDiff): void {
    if (isEmptyDiff(diff)) return;
    for (const s of topic.subscribers) if (s.presence) s.presenceDiff(diff);
  }

  /** Publishes without waiting; a failure is logged (presence and its requests heal with the next state). */
  #fire(fields: Record<string, unknown>, key: TopicKey | undefined): void {
    this.#publish(fields, key).catch((err: unknown) => this.#log.warn({ err }, 'realtime notice not published'));
  }

  #publish(fields: Record<string, unknown>, key: TopicKey | undefined): Promise<void> {
    const text = JSON.stringify({ p: this.#id, n: ++this.#seq, ...fields });
    return new Promise((resolve, reject) => {
      this.#outbox.push({ text, key, resolve, reject });
      this.#flushSoon();
    });
  }

  #flushSoon(): void {
    if (this.#flushing) return;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = undefined;
      if (this.#outbox.length) this.#flushSoon();
    });
  }

  async #flush(): Promise<void> {
    while (this.#outbox.length) {
      const batch = this.#outbox.splice(0, MAX_BATCH);
      try {
        await this.#send(batch);
        for (const m of batch) m.resolve();
      } catch (err) {
        for (const m of batch) m.reject(err);
      }
    }
  }

  /** One batch: the large messages into realtime_messages, then every NOTIFY in order, in one statement. */
  async #send(batch: Pending[]): Promise<void> {
    const texts: string[] = [];
    const large = { ids: [] as string[], apps: [] as string[], bodies: [] as string[] };
    for (const m of batch) {
      if (Buffer.byteLength(m.text) <= NOTIFY_MAX_BYTES || !m.key) {
        texts.push(m.text);
        continue;
      }
      const id = randomUUID();
      large.ids.push(id);
      large.apps.push(m.key.appId);
      large.bodies.push(m.text);
      texts.push(JSON.stringify({ p: this.#id, n: ++this.#seq, k: 'ref', ...wire(m.key), id }));
    }
    if (large.ids.length) {
      await sql`insert into realtime_messages (id, app_id, body)
        select * from unnest(${large.ids}::uuid[], ${large.apps}::text[], ${large.bodies}::text[])`.execute(this.#db);
    }
    await sql`select pg_notify(${CHANNEL}, x) from unnest(${texts}::text[]) with ordinality as t(x, i) order by i`.execute(this.#db);
    if (large.ids.length) this.#prune();
  }

  /** Drops the large messages every process has had time to read (at most once per MESSAGE_KEEP_SECONDS). */
  #prune(): void {
    const now = Date.now();
    if (now - this.#lastPrune < MESSAGE_KEEP_SECONDS * 1000) return;
    this.#lastPrune = now;
    sql`delete from realtime_messages where created_at < now() - make_interval(secs => ${MESSAGE_KEEP_SECONDS})`
      .execute(this.#db)
      .catch((err: unknown) => this.#log.warn({ err }, 'realtime messages not pruned'));
  }

  #heard(payload: string): void {
    // This process's own notice: its subscribers had it before it was sent.
    if (payload.startsWith(this.#ownPrefix)) return;
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      this.#log.warn('realtime notice is not JSON');
      return;
    }
    this.#lastHeard.set(notice.p, Date.now());
    if (notice.k !== 'hb' && !this.#topics.has(topicId(unwire(notice)))) return;
    this.#inbound = this.#inbound
      .then(async () => {
        if (notice.k !== 'ref') return this.#handle(notice);
        const row = await sql<{ body: string }>`select body from realtime_messages where id = ${notice.id}`.execute(this.#db);
        const body = row.rows[0]?.body;
        if (body === undefined) this.#log.warn({ id: notice.id }, 'realtime message gone before it was read');
        else this.#handle(JSON.parse(body) as Notice);
      })
      .catch((err: unknown) => this.#log.warn({ err }, 'realtime notice not handled'));
  }

  #handle(notice: Notice): void {
    if (notice.k === 'hb' || notice.k === 'ref') return;
    const topic = this.#topics.get(topicId(unwire(notice)));
    if (!topic) return;
    switch (notice.k) {
      case 'b': {
        const body: BroadcastBody = notice.b !== undefined ? { kind: 'binary', bytes: Buffer.from(notice.b, 'base64') } : { kind: 'json', value: notice.j };
        const message = new OutgoingBroadcast(topic.name, notice.e, body, notice.m);
        for (const s of topic.subscribers) s.broadcast(message);
        return;
      }
      case 'pd':
        return this.#deliverPresence(topic, topic.presences.apply(notice.p, notice.d));
      case 'sr':
        return this.#deliverPresence(topic, topic.presences.replace(notice.p, notice.s));
      case 'sq': {
        const held = topic.presences.held(this.#id);
        if (Object.keys(held).length) this.#fire({ k: 'sr', ...wire(topic.key), s: held }, topic.key);
        return;
      }
    }
  }

  /** The LISTEN connection was lost or is back: notices may have been missed, so each hosted topic's state is asked again. */
  #resync(): void {
    for (const topic of this.#topics.values()) this.#fire({ k: 'sq', ...wire(topic.key) }, topic.key);
  }

  /** Says this process is alive while it holds presences; drops the presences of processes unheard for PROCESS_GONE_MS. */
  #tick(): void {
    if ([...this.#topics.values()].some((t) => t.tracked.size)) this.#fire({ k: 'hb' }, undefined);
    const now = Date.now();
    for (const [process, heard] of this.#lastHeard) {
      if (now - heard < PROCESS_GONE_MS) continue;
      this.#lastHeard.delete(process);
      for (const topic of this.#topics.values()) this.#deliverPresence(topic, topic.presences.drop(process));
    }
  }
}
