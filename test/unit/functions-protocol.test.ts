import { describe, expect, it } from 'vitest';
import { encodeFrame, LineSplitter, parseRunnerFrame } from '../../src/functions/protocol.ts';
import { buildDenyList, runnerArgs, runnerEnv } from '../../src/functions/sandbox.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('frame codec', () => {
  it('encodes one frame per line, with newlines inside strings escaped', () => {
    const text = encodeFrame({ type: 'log', id: 1, level: 'info', message: 'two\nlines' });
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    expect(parseRunnerFrame(text.slice(0, -1))).toEqual({ type: 'log', id: 1, level: 'info', message: 'two\nlines' });
  });

  it('splits a stream into frames however the bytes are chunked', () => {
    const frames = [
      encodeFrame({ type: 'head', id: 7, status: 201, headers: [['content-type', 'text/plain'], ['set-cookie', 'a=1']] }),
      encodeFrame({ type: 'chunk', id: 7, data: Buffer.from('héllo wörld').toString('base64') }),
      encodeFrame({ type: 'end', id: 7, rss: 1234 }),
    ];
    const all = bytes(frames.join(''));
    for (const size of [1, 2, 3, 7, 64, all.length]) {
      const splitter = new LineSplitter();
      const lines: string[] = [];
      for (let i = 0; i < all.length; i += size) lines.push(...splitter.push(all.subarray(i, i + size)));
      expect(lines.map(parseRunnerFrame)).toEqual([
        { type: 'head', id: 7, status: 201, headers: [['content-type', 'text/plain'], ['set-cookie', 'a=1']] },
        { type: 'chunk', id: 7, data: Buffer.from('héllo wörld').toString('base64') },
        { type: 'end', id: 7, rss: 1234 },
      ]);
    }
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const line = bytes(JSON.stringify({ type: 'error', id: 1, message: '💥 ü' }) + '\n');
    const splitter = new LineSplitter();
    const out = [...splitter.push(line.subarray(0, 30)), ...splitter.push(line.subarray(30))];
    expect(parseRunnerFrame(out[0]!)).toEqual({ type: 'error', id: 1, message: '💥 ü' });
  });

  it('copies partial lines, so a reused input buffer cannot corrupt them', () => {
    const splitter = new LineSplitter();
    const buf = Buffer.from('{"type":"re');
    splitter.push(buf);
    buf.fill(0x20);
    expect(splitter.push(Buffer.from('ady"}\n'))).toEqual(['{"type":"ready"}']);
  });

  it('throws on a line longer than the limit', () => {
    const splitter = new LineSplitter(10);
    expect(() => splitter.push(bytes('x'.repeat(11)))).toThrow(/longer than 10 bytes/);
  });

  it.each([
    ['not json', 'oops'],
    ['a bare value', '42'],
    ['an unknown type', '{"type":"shell","cmd":"ls"}'],
    ['a head without status', '{"type":"head","id":1,"headers":[]}'],
    ['a head with a bad header pair', '{"type":"head","id":1,"status":200,"headers":[["a",1]]}'],
    ['a chunk without data', '{"type":"chunk","id":1}'],
    ['a fractional id', '{"type":"end","id":1.5}'],
    ['a log with an unknown level', '{"type":"log","id":null,"level":"fatal","message":"x"}'],
    ['a call without a call number', '{"type":"call","id":1,"request":{"kind":"billing","op":"subscription"}}'],
  ])('refuses %s', (_what, line) => {
    expect(parseRunnerFrame(line)).toBeUndefined();
  });

  it.each([
    ['a billing call with an unknown operation', '{"kind":"billing","op":"refund"}', 'ctx.billing has no operation "refund"'],
    ['an app call whose input is a string', '{"kind":"app","tool":"storage_upload_inline","input":"a.txt"}', 'storage_upload_inline takes its input as one object, not a string'],
    ['a data call whose query is an object', '{"kind":"data","op":"update","table":"t","query":{"id":5}}', 'must be a string, not an object'],
    ['a request that is not an object', '"upload"', 'must be an object, not a string'],
    ['a data call in a transaction named by a string', '{"kind":"data","op":"select","table":"t","query":"","tx":"1"}', "ctx.data's select: the transaction must be the number begin answered, not a string"],
    ['a commit without its transaction', '{"kind":"tx","op":"commit"}', "ctx.data.transaction's commit: the transaction must be the number begin answered, not missing"],
    ['a transaction operation that does not exist', '{"kind":"tx","op":"savepoint","tx":1}', 'ctx.data.transaction has no operation "savepoint"'],
  ])('parses %s as a call to refuse, not a broken process', (_what, request, reason) => {
    expect(parseRunnerFrame(`{"type":"call","id":4,"call":2,"request":${request}}`)).toEqual({ type: 'call_invalid', id: 4, call: 2, reason: expect.stringContaining(reason) });
  });

  it('accepts a billing call with nothing but its operation (the caller is the request\'s)', () => {
    expect(parseRunnerFrame('{"type":"call","id":2,"call":7,"request":{"kind":"billing","op":"subscription","user":"someone-else"}}')).toEqual({
      type: 'call',
      id: 2,
      call: 7,
      request: { kind: 'billing', op: 'subscription' },
    });
  });

  it('accepts transaction calls with only what they name: the role is the begin\'s, the transaction a number', () => {
    const call = (request: string) => parseRunnerFrame(`{"type":"call","id":1,"call":1,"request":${request}}`);
    expect(call('{"kind":"tx","op":"begin","asApp":true,"role":"postgres"}')).toMatchObject({ request: { kind: 'tx', op: 'begin', asApp: true } });
    expect(call('{"kind":"tx","op":"begin","asApp":"yes"}')).toMatchObject({ request: { kind: 'tx', op: 'begin' } });
    expect(call('{"kind":"tx","op":"rollback","tx":3}')).toMatchObject({ request: { kind: 'tx', op: 'rollback', tx: 3 } });
    expect(call('{"kind":"data","op":"insert","table":"t","query":"","body":{},"tx":3}')).toMatchObject({ request: { kind: 'data', op: 'insert', table: 't', query: '', body: {}, tx: 3 } });
  });

  it('accepts log frames outside a request (id null) and drops a non-numeric rss', () => {
    expect(parseRunnerFrame('{"type":"log","id":null,"level":"warn","message":"m"}')).toEqual({ type: 'log', id: null, level: 'warn', message: 'm' });
    expect(parseRunnerFrame('{"type":"end","id":3,"rss":"big"}')).toEqual({ type: 'end', id: 3 });
  });
});

describe('sandbox command line', () => {
  it('grants only network, denies loopback, metadata and the database hosts, bounds the heap', async () => {
    const denyNet = await buildDenyList({ databaseUrls: ['postgres://postgres@db.internal.example:5432/svc'], allowPrivateNet: false, extra: ['203.0.113.7'] });
    for (const entry of ['127.0.0.0/8', 'localhost', '[::1]', '0.0.0.0/8', '169.254.0.0/16', '10.0.0.0/8', '192.168.0.0/16', 'db.internal.example', '203.0.113.7']) {
      expect(denyNet).toContain(entry);
    }
    const args = runnerArgs({ deno: '/bin/deno', denoDir: '/tmp/d', denyNet }, 256);
    expect(args).toContain('--allow-net');
    expect(args).toContain('--no-prompt');
    expect(args).toContain('--v8-flags=--max-old-space-size=256');
    expect(args.find((a) => a.startsWith('--deny-net='))).toContain('127.0.0.0/8');
    expect(args.find((a) => a.startsWith('--deny-import='))).toContain('127.0.0.0/8');
    for (const flag of ['--allow-read', '--allow-write', '--allow-env', '--allow-run', '--allow-ffi', '--allow-sys', '--allow-all', '-A']) {
      expect(args.some((a) => a === flag || a.startsWith(`${flag}=`))).toBe(false);
    }
    expect(runnerEnv({ deno: '/bin/deno', denoDir: '/tmp/d', denyNet })).toEqual({ DENO_DIR: '/tmp/d', NO_COLOR: '1' });
  });

  it('leaves private ranges reachable only when the operator allows them', async () => {
    const denyNet = await buildDenyList({ databaseUrls: [], allowPrivateNet: true, extra: [] });
    expect(denyNet).toContain('127.0.0.0/8');
    expect(denyNet).not.toContain('10.0.0.0/8');
  });
});
