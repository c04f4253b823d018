// realtime-js's frames, read and written as its own serializer does (node_modules/@supabase/realtime-js's
// lib/serializer.js encodes the kind 3 pushes and decodes the kind 4 broadcasts used here), and presence's bookkeeping.
import { describe, expect, it } from 'vitest';
import Serializer from '@supabase/realtime-js/dist/module/lib/serializer.js';
import { broadcastFrame, decode, encodeBroadcast, encodeText, OutgoingBroadcast, reply } from '../../src/realtime/protocol.ts';
import { TopicPresences } from '../../src/realtime/presence.ts';

const serializer = new (Serializer as unknown as new () => RealtimeSerializer)();

interface RealtimeSerializer {
  encode(msg: unknown, callback: (encoded: string | ArrayBuffer) => void): void;
  decode(raw: string | ArrayBuffer, callback: (msg: unknown) => void): void;
}

/** What realtime-js sends for a message, as the bytes the server receives. */
function clientSends(msg: unknown): { data: Buffer; isBinary: boolean } {
  let out: string | ArrayBuffer = '';
  serializer.encode(msg, (encoded) => (out = encoded));
  return typeof out === 'string' ? { data: Buffer.from(out), isBinary: false } : { data: Buffer.from(out), isBinary: true };
}

/** What realtime-js makes of a server frame. */
function clientReads(frame: string | Buffer): unknown {
  let out: unknown;
  const raw = typeof frame === 'string' ? frame : (frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength) as ArrayBuffer);
  serializer.decode(raw, (msg) => (out = msg));
  return out;
}

describe('realtime protocol: vsn 2.0.0', () => {
  it('reads text pushes as arrays, with null refs', () => {
    const sent = clientSends({ join_ref: '1', ref: '2', topic: 'realtime:room', event: 'phx_join', payload: { config: {} } });
    expect(sent.isBinary).toBe(false);
    expect(decode('2.0.0', sent.data, false)).toEqual({ kind: 'frame', frame: { joinRef: '1', ref: '2', topic: 'realtime:room', event: 'phx_join', payload: { config: {} } } });
    expect(decode('2.0.0', Buffer.from('[null,"3","phoenix","heartbeat",{}]'), false)).toEqual({
      kind: 'frame',
      frame: { joinRef: null, ref: '3', topic: 'phoenix', event: 'heartbeat', payload: {} },
    });
  });

  it('reads a JSON broadcast push (kind 3, JSON encoding) and a binary one, multi-byte strings included', () => {
    const json = clientSends({ join_ref: '1', ref: '5', topic: 'realtime:salle-é', event: 'broadcast', payload: { type: 'broadcast', event: 'cursör', payload: { x: 1 } } });
    expect(json.isBinary).toBe(true);
    expect(decode('2.0.0', json.data, true)).toEqual({ kind: 'broadcast', joinRef: '1', ref: '5', topic: 'realtime:salle-é', event: 'cursör', body: { kind: 'json', value: { x: 1 } }, meta: {} });
    const bytes = new Uint8Array([0, 1, 2, 255]).buffer;
    const binary = clientSends({ join_ref: '1', ref: null, topic: 'realtime:room', event: 'broadcast', payload: { type: 'broadcast', event: 'blob', payload: bytes } });
    expect(decode('2.0.0', binary.data, true)).toEqual({ kind: 'broadcast', joinRef: '1', ref: null, topic: 'realtime:room', event: 'blob', body: { kind: 'binary', bytes: Buffer.from([0, 1, 2, 255]) }, meta: {} });
    // realtime-js's persist travels as the frame's metadata.
    const kept = clientSends({ join_ref: '1', ref: '6', topic: 'realtime:room', event: 'broadcast', payload: { type: 'broadcast', event: 'e', payload: {}, persist: { ttl: 5 } } });
    expect(decode('2.0.0', kept.data, true)).toMatchObject({ kind: 'broadcast', meta: { persist: { ttl: 5 } } });
  });

  it('writes broadcasts as kind 4 that realtime-js reads back, JSON and bytes', () => {
    expect(clientReads(encodeBroadcast('realtime:room', 'ping', { kind: 'json', value: { n: [1, 'é'] } }))).toEqual({
      join_ref: null,
      ref: null,
      topic: 'realtime:room',
      event: 'broadcast',
      payload: { type: 'broadcast', event: 'ping', payload: { n: [1, 'é'] } },
    });
    const read = clientReads(encodeBroadcast('realtime:room', 'blob', { kind: 'binary', bytes: Buffer.from([9, 8, 7]) })) as { payload: { payload: ArrayBuffer } };
    expect(Buffer.from(read.payload.payload)).toEqual(Buffer.from([9, 8, 7]));
    // A stored broadcast's meta, as realtime-js hands it to on('broadcast') callbacks.
    expect(clientReads(encodeBroadcast('realtime:room', 'ping', { kind: 'json', value: 1 }, { id: 'i', replayed: true }))).toMatchObject({ payload: { payload: 1, meta: { id: 'i', replayed: true } } });
  });

  it('writes text frames and replies as arrays', () => {
    const text = encodeText('2.0.0', reply({ joinRef: '1', ref: '2', topic: 'realtime:room' }, 'ok', { postgres_changes: [] }));
    expect(JSON.parse(text)).toEqual(['1', '2', 'realtime:room', 'phx_reply', { status: 'ok', response: { postgres_changes: [] } }]);
    expect(clientReads(text)).toEqual({ join_ref: '1', ref: '2', topic: 'realtime:room', event: 'phx_reply', payload: { status: 'ok', response: { postgres_changes: [] } } });
  });

  it('calls malformed what it cannot read, naming where to answer when it can', () => {
    expect(decode('2.0.0', Buffer.from('not json'), false)).toEqual({ kind: 'malformed', reason: 'not JSON' });
    expect(decode('2.0.0', Buffer.from('{"topic":"x"}'), false)).toEqual({ kind: 'malformed', reason: 'expected [join_ref, ref, topic, event, payload]' });
    expect(decode('2.0.0', Buffer.from('[null,"7","realtime:a","broadcast","text"]'), false)).toEqual({
      kind: 'malformed',
      reason: 'join_ref and ref are strings or null, topic and event strings, payload an object',
      to: { joinRef: null, ref: '7', topic: 'realtime:a' },
    });
    expect(decode('2.0.0', Buffer.from([4, 0, 0, 0, 0]), true)).toEqual({ kind: 'malformed', reason: 'a binary frame is a user broadcast push (kind 3)' });
    expect(decode('2.0.0', Buffer.from([3, 0, 1, 200, 0, 0, 1, 0x31]), true)).toEqual({ kind: 'malformed', reason: 'the binary frame is shorter than its header says' });
    // ref "1", topic "t", event "e", encoding JSON, payload not JSON.
    expect(decode('2.0.0', Buffer.from([3, 0, 1, 1, 1, 0, 1, 0x31, 0x74, 0x65, 0x7b]), true)).toEqual({
      kind: 'malformed',
      reason: 'the payload is not JSON',
      to: { joinRef: null, ref: '1', topic: 't' },
    });
    expect(decode('2.0.0', Buffer.from([3, 0, 1, 1, 1, 0, 7, 0x31, 0x74, 0x65]), true)).toMatchObject({ kind: 'malformed', reason: 'the payload encoding is 0 (binary) or 1 (JSON)' });
  });
});

describe('realtime protocol: vsn 1.0.0', () => {
  it('reads and writes JSON objects; binary frames are not part of it', () => {
    expect(decode('1.0.0', Buffer.from('{"topic":"phoenix","event":"heartbeat","payload":{},"ref":"4"}'), false)).toEqual({
      kind: 'frame',
      frame: { joinRef: null, ref: '4', topic: 'phoenix', event: 'heartbeat', payload: {} },
    });
    expect(JSON.parse(encodeText('1.0.0', broadcastFrame('realtime:r', 'e', [1])))).toEqual({
      join_ref: null,
      ref: null,
      topic: 'realtime:r',
      event: 'broadcast',
      payload: { type: 'broadcast', event: 'e', payload: [1] },
    });
    expect(decode('1.0.0', Buffer.from([3, 0, 0]), true)).toEqual({ kind: 'malformed', reason: 'binary frames need serializer 2.0.0' });
  });

  it('encodes a broadcast once per version, and not at all as bytes to 1.0.0', () => {
    const json = new OutgoingBroadcast('realtime:r', 'e', { kind: 'json', value: { a: 1 } });
    expect(json.frame('2.0.0')).toBe(json.frame('2.0.0'));
    expect(JSON.parse(json.frame('1.0.0') as string).payload).toEqual({ type: 'broadcast', event: 'e', payload: { a: 1 } });
    expect(new OutgoingBroadcast('realtime:r', 'e', { kind: 'binary', bytes: Buffer.from([1]) }).frame('1.0.0')).toBeUndefined();
  });
});

describe('presence bookkeeping', () => {
  const meta = (ref: string, extra: Record<string, unknown> = {}) => ({ phx_ref: ref, ...extra });

  it('applies diffs per process and reports only what changed', () => {
    const p = new TopicPresences();
    expect(p.apply('a', { joins: { u1: { metas: [meta('r1', { at: 1 })] } }, leaves: {} })).toEqual({ joins: { u1: { metas: [meta('r1', { at: 1 })] } }, leaves: {} });
    // The same join again, and a leave of an unknown ref, change nothing.
    expect(p.apply('a', { joins: { u1: { metas: [meta('r1')] } }, leaves: { u1: { metas: [meta('zz')] } } })).toEqual({ joins: {}, leaves: {} });
    p.apply('b', { joins: { u1: { metas: [meta('r2')] }, __proto__x: { metas: [meta('r3')] } }, leaves: {} });
    expect(p.state()).toEqual({ u1: { metas: [meta('r1', { at: 1 }), meta('r2')] }, __proto__x: { metas: [meta('r3')] } });
    expect(p.drop('b')).toEqual({ joins: {}, leaves: { u1: { metas: [meta('r2')] }, __proto__x: { metas: [meta('r3')] } } });
    expect(p.processes()).toEqual(['a']);
  });

  it("replaces a process's whole state, as its answer to a state request", () => {
    const p = new TopicPresences();
    p.apply('a', { joins: { k: { metas: [meta('old'), meta('kept')] } }, leaves: {} });
    expect(p.replace('a', { k: { metas: [meta('kept'), meta('new')] } })).toEqual({ joins: { k: { metas: [meta('new')] } }, leaves: { k: { metas: [meta('old')] } } });
    expect(p.held('a')).toEqual({ k: { metas: [meta('kept'), meta('new')] } });
    expect(p.replace('a', {})).toEqual({ joins: {}, leaves: { k: { metas: [meta('kept'), meta('new')] } } });
    expect(p.empty).toBe(true);
  });

  it('keeps a key named __proto__ as a key', () => {
    const p = new TopicPresences();
    const joins = JSON.parse('{"__proto__":{"metas":[{"phx_ref":"r"}]}}');
    p.apply('a', { joins, leaves: {} });
    expect(Object.keys(p.state())).toEqual(['__proto__']);
    expect(JSON.stringify(p.state())).toBe('{"__proto__":{"metas":[{"phx_ref":"r"}]}}');
  });
});
