// Public receiver names are resolved by c-ares against the configured name servers, with a deadline: a loopback DNS
// server here answers A and AAAA queries, says NXDOMAIN, or stays silent (the slow name server a hostile receiver
// could run), and the outbound guard resolves, refuses internal answers, and gives up in bounded time.
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressesOf, checkOutboundUrl, RESOLVE_DEADLINE_MS, setOutboundNameServers } from '../../src/core/outbound.ts';

const RECORDS: Record<string, { a?: string[]; aaaa?: string[] }> = {
  'public.example': { a: ['93.184.216.34'], aaaa: ['2606:2800:220:1:248:1893:25c8:1946'] },
  'internal.example': { a: ['10.0.0.7'] },
  'v4only.example': { a: ['93.184.216.35'] },
};
const SILENT = 'silent.example';
/** Answers A, never AAAA (name servers that drop AAAA queries exist). */
const NO_AAAA = 'v4only.example';

let server: dgram.Socket;

/** The question's name and type, from a DNS query's wire form. */
function question(msg: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at]! > 0) {
    labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString('ascii'));
    at += msg[at]! + 1;
  }
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

function answer(query: Buffer): Buffer | undefined {
  const { name, type, end } = question(query);
  if (name === SILENT || (name === NO_AAAA && type === 28)) return undefined;
  const record = RECORDS[name];
  const values = type === 1 ? record?.a : type === 28 ? record?.aaaa : undefined;
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(record ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(values?.length ?? 0, 6);
  const answers = (values ?? []).map((value) => {
    const rdata = type === 1 ? Buffer.from(value.split('.').map(Number)) : ipv6Bytes(value);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, end), ...answers]);
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

beforeAll(async () => {
  server = dgram.createSocket('udp4');
  server.on('message', (msg, peer) => {
    const reply = answer(msg);
    if (reply) server.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  setOutboundNameServers([`127.0.0.1:${server.address().port}`]);
});
afterAll(() => server?.close());

describe('outbound name resolution', () => {
  it('resolves a public name to its A and AAAA records', async () => {
    expect(await addressesOf('public.example', false)).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    await expect(checkOutboundUrl(new URL('https://public.example/hook'), false, 'url')).resolves.toBeUndefined();
  });

  it('refuses a name that resolves to an internal address, and one that does not resolve', async () => {
    await expect(checkOutboundUrl(new URL('https://internal.example/hook'), false, 'url')).rejects.toMatchObject({ status: 400, code: 'OUTBOUND_ADDRESS_REFUSED' });
    await expect(checkOutboundUrl(new URL('https://nowhere.example/hook'), false, 'url')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(await addressesOf('app.localhost', false)).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('gives up on a silent name server at its deadline instead of holding a thread', async () => {
    const started = Date.now();
    await expect(addressesOf(SILENT, false)).rejects.toMatchObject({ code: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(RESOLVE_DEADLINE_MS + 500);
  }, 10_000);

  it('does not wait out a name server that drops AAAA queries once A has answered', async () => {
    const started = Date.now();
    expect(await addressesOf(NO_AAAA, false)).toEqual([{ address: '93.184.216.35', family: 4 }]);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
