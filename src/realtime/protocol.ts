// realtime-js's wire (Phoenix channels as @supabase/realtime-js 2.x and @supabase/phoenix speak them): serializer 1.0.0
// sends JSON objects { join_ref, ref, topic, event, payload }, 2.0.0 JSON arrays [join_ref, ref, topic, event, payload]
// plus binary frames for broadcast only: kind 3 from the client (a user broadcast push), kind 4 to it (a user broadcast).
// Pure: bytes and text in, frames out, and back.

export const VSNS = ['1.0.0', '2.0.0'] as const;
export type Vsn = (typeof VSNS)[number];

/** One Phoenix message. */
export interface Frame {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: unknown;
}

/** A user broadcast's payload: any JSON, or bytes (vsn 2.0.0's binary encoding, an ArrayBuffer in realtime-js). */
export type BroadcastBody = { kind: 'json'; value: unknown } | { kind: 'binary'; bytes: Buffer };

/** What a stored broadcast carries beside its payload (realtime-js's `meta`): its id, and `replayed` when replayed. */
export interface BroadcastMeta {
  id: string;
  replayed?: true;
}

/** What one incoming websocket message is. */
export type Incoming =
  | { kind: 'frame'; frame: Frame }
  /** A binary user broadcast push (kind 3); `meta` its metadata (realtime-js's `persist`), {} when none. */
  | { kind: 'broadcast'; joinRef: string | null; ref: string | null; topic: string; event: string; body: BroadcastBody; meta: Record<string, unknown> }
  /** Not a message we can read; answered when it names a ref and a topic (`to`), else ignored. */
  | { kind: 'malformed'; reason: string; to?: { joinRef: string | null; ref: string; topic: string } };

const KIND_PUSH = 3;
const KIND_BROADCAST = 4;
const ENCODING_BINARY = 0;
const ENCODING_JSON = 1;
/** Kind 3's header: kind, then the lengths of join_ref, ref, topic, event and metadata, then the payload encoding. */
const PUSH_HEADER = 7;
/** Kind 4's header: kind, then the lengths of topic, event and metadata, then the payload encoding. */
const BROADCAST_HEADER = 5;
/** Each string of a binary frame is prefixed by its length in one byte. */
export const MAX_BINARY_FIELD_BYTES = 255;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads one websocket message of a socket speaking `vsn`. */
export function decode(vsn: Vsn, data: Buffer, isBinary: boolean): Incoming {
  if (isBinary) return vsn === '2.0.0' ? decodeBinaryPush(data) : { kind: 'malformed', reason: 'binary frames need serializer 2.0.0' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(data));
  } catch {
    return { kind: 'malformed', reason: 'not JSON' };
  }
  const fields = vsn === '2.0.0' ? arrayFields(parsed) : objectFields(parsed);
  if (!fields) return { kind: 'malformed', reason: vsn === '2.0.0' ? 'expected [join_ref, ref, topic, event, payload]' : 'expected { join_ref, ref, topic, event, payload }' };
  const [joinRef, ref, topic, event, payload] = fields;
  const refsOk = isRef(joinRef) && isRef(ref);
  if (refsOk && typeof topic === 'string' && typeof event === 'string' && typeof payload === 'object' && payload !== null && !Array.isArray(payload)) {
    return { kind: 'frame', frame: { joinRef, ref, topic, event, payload } };
  }
  const to = refsOk && typeof ref === 'string' && typeof topic === 'string' ? { joinRef, ref, topic } : undefined;
  return { kind: 'malformed', reason: 'join_ref and ref are strings or null, topic and event strings, payload an object', ...(to ? { to } : {}) };
}

const isRef = (v: unknown): v is string | null => v === null || typeof v === 'string';

function arrayFields(v: unknown): unknown[] | undefined {
  return Array.isArray(v) && v.length === 5 ? v : undefined;
}

function objectFields(v: unknown): unknown[] | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  // A missing join_ref or ref is null, as the Phoenix V1 serializer reads it.
  return [o.join_ref ?? null, o.ref ?? null, o.topic, o.event, o.payload];
}

/** Kind 3: the header, join_ref, ref, topic, the user event, metadata (JSON or empty), then the payload. */
function decodeBinaryPush(data: Buffer): Incoming {
  if (data.length < PUSH_HEADER || data[0] !== KIND_PUSH) return { kind: 'malformed', reason: 'a binary frame is a user broadcast push (kind 3)' };
  const lengths = [data[1]!, data[2]!, data[3]!, data[4]!, data[5]!];
  const encoding = data[6]!;
  let at = PUSH_HEADER;
  const strings: string[] = [];
  for (const length of lengths) {
    if (at + length > data.length) return { kind: 'malformed', reason: 'the binary frame is shorter than its header says' };
    try {
      strings.push(utf8.decode(data.subarray(at, at + length)));
    } catch {
      return { kind: 'malformed', reason: 'a header string of the binary frame is not UTF-8' };
    }
    at += length;
  }
  // An empty ref or join_ref is none (realtime-js writes '' for a missing one).
  const [joinRef, ref, topic, event] = strings.map((s, i) => (i < 2 && s === '' ? null : s)) as [string | null, string | null, string, string];
  const malformed = (reason: string): Incoming => ({ kind: 'malformed', reason, ...(ref !== null ? { to: { joinRef, ref, topic } } : {}) });
  const meta = parseMeta(strings[4]!);
  if (!meta) return malformed('the metadata is not a JSON object');
  const payload = data.subarray(at);
  if (encoding === ENCODING_BINARY) return { kind: 'broadcast', joinRef, ref, topic, event, body: { kind: 'binary', bytes: Buffer.from(payload) }, meta };
  if (encoding !== ENCODING_JSON) return malformed('the payload encoding is 0 (binary) or 1 (JSON)');
  try {
    return { kind: 'broadcast', joinRef, ref, topic, event, body: { kind: 'json', value: JSON.parse(utf8.decode(payload)) }, meta };
  } catch {
    return malformed('the payload is not JSON');
  }
}

/** A kind 3 frame's metadata: empty, or a JSON object (at most 255 bytes, so parsing it is cheap). */
function parseMeta(text: string): Record<string, unknown> | undefined {
  if (text === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A text frame in the socket's serializer version. */
export function encodeText(vsn: Vsn, frame: Frame): string {
  if (vsn === '2.0.0') return JSON.stringify([frame.joinRef, frame.ref, frame.topic, frame.event, frame.payload]);
  return JSON.stringify({ join_ref: frame.joinRef, ref: frame.ref, topic: frame.topic, event: frame.event, payload: frame.payload });
}

/**
 * A user broadcast as vsn 2.0.0 sends it: kind 4, the lengths of topic, event and metadata (a stored one's meta, else
 * none), the encoding, the strings, then the payload's bytes (or its JSON). Topic and event fit a byte's length (checked
 * where they come in); a meta is an id and a flag.
 */
export function encodeBroadcast(topic: string, event: string, body: BroadcastBody, meta?: BroadcastMeta): Buffer {
  const t = Buffer.from(topic);
  const e = Buffer.from(event);
  const m = Buffer.from(meta ? JSON.stringify(meta) : '');
  const payload = body.kind === 'binary' ? body.bytes : Buffer.from(JSON.stringify(body.value) ?? 'null');
  const header = Buffer.from([KIND_BROADCAST, t.length, e.length, m.length, body.kind === 'binary' ? ENCODING_BINARY : ENCODING_JSON]);
  return Buffer.concat([header, t, e, m, payload], BROADCAST_HEADER + t.length + e.length + m.length + payload.length);
}

/** A user broadcast as vsn 1.0.0 sends it (JSON only: that serializer has no binary frames). */
export function broadcastFrame(topic: string, event: string, value: unknown, meta?: BroadcastMeta): Frame {
  return { joinRef: null, ref: null, topic, event: 'broadcast', payload: { type: 'broadcast', event, payload: value, ...(meta ? { meta } : {}) } };
}

/** Phoenix's reply to a push: `phx_reply` with its status and response, on the push's ref and join_ref. */
export function reply(to: { joinRef: string | null; ref: string | null; topic: string }, status: 'ok' | 'error', response: unknown): Frame {
  return { joinRef: to.joinRef, ref: to.ref, topic: to.topic, event: 'phx_reply', payload: { status, response } };
}

/** One user broadcast on its way to the sockets of a topic: each frame encoded once, for every socket of that version. */
export class OutgoingBroadcast {
  readonly topic: string;
  readonly event: string;
  readonly body: BroadcastBody;
  readonly meta: BroadcastMeta | undefined;
  #v1: string | undefined;
  #v2: Buffer | undefined;

  constructor(topic: string, event: string, body: BroadcastBody, meta?: BroadcastMeta) {
    this.topic = topic;
    this.event = event;
    this.body = body;
    this.meta = meta;
  }

  /** The frame for a socket of `vsn`; undefined when that socket cannot carry it (bytes to 1.0.0, which has no binary frames). */
  frame(vsn: Vsn): string | Buffer | undefined {
    if (vsn === '2.0.0') return (this.#v2 ??= encodeBroadcast(this.topic, this.event, this.body, this.meta));
    if (this.body.kind === 'binary') return undefined;
    return (this.#v1 ??= encodeText('1.0.0', broadcastFrame(this.topic, this.event, this.body.value, this.meta)));
  }
}
