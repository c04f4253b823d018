// Requests the platform sends to URLs its users gave (outbox webhooks, meeting forwards, OAuth clients' metadata
// documents):
// refused when the host resolves to a loopback, link-local, private or otherwise internal address, unless the
// operator allows it (SVC_OUTBOUND_ALLOW_PRIVATE=true). The address is checked when the connection is made, on the
// very address connected to, so a name that resolves differently between a check and the request cannot slip by.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { AppError, errors } from './errors.ts';

// Two lists: a BlockList checks an IPv4 address against its IPv6 rules too (as ::ffff:a.b.c.d), so one list holding
// ::ffff:0:0/96 refused every IPv4 address, public ones included.
const BLOCKED_V4 = new net.BlockList();
const BLOCKED_V6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED_V4.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 96],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2001::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED_V6.addSubnet(prefix, bits, 'ipv6');
}

/**
 * Whether an address is one the platform does not send user-directed requests to: IPv4 internal ranges, and IPv6
 * loopback, unique-local, link-local, multicast, IPv4-compatible and -mapped, NAT64, 6to4 and Teredo (which can reach
 * internal IPv4 addresses).
 */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED_V4.check(mapped[1]!, 'ipv4');
  return net.isIPv6(address) ? BLOCKED_V6.check(address, 'ipv6') : BLOCKED_V4.check(address, 'ipv4');
}

export const outboundErrors = {
  internal: (host: string) =>
    new AppError(
      400,
      'OUTBOUND_ADDRESS_REFUSED',
      `'${host.slice(0, 200)}' resolves to a loopback, link-local or private address, which the platform does not send requests to.`,
      'Use a public URL; an operator running receivers on a private network sets SVC_OUTBOUND_ALLOW_PRIVATE=true.',
    ),
};

/** Parses a user-given http(s) URL (400 naming `field` otherwise). */
export function parseOutboundUrl(raw: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.validation(`'${field}' is not a URL.`, [{ path: field, message: 'must be an absolute http(s) URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw errors.validation(`'${field}' must use http or https.`, [{ path: field, message: 'must be an absolute http(s) URL' }]);
  }
  if (url.username || url.password) throw errors.validation(`'${field}' may not carry credentials.`, [{ path: field, message: 'no user:password@' }]);
  return url;
}

/** Refuses a URL whose host resolves to an internal address (when saving it; delivery checks again on connect). */
export async function checkOutboundUrl(url: URL, allowPrivate: boolean, field: string): Promise<void> {
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = (await addressesOf(host, false).catch(() => [])).map((a) => a.address);
  if (addresses.length === 0) throw errors.validation(`'${url.hostname}' does not resolve.`, [{ path: field, message: 'host not found' }]);
  if (addresses.some(isInternalAddress)) throw outboundErrors.internal(url.hostname);
}

/**
 * Public names are resolved by c-ares (`dns.Resolver`), with a deadline, not by getaddrinfo: getaddrinfo runs on
 * libuv's four-thread pool with the system's own timeouts, so receivers behind slow or silent name servers (a name
 * anyone can register) could hold every thread and stall the process's file, crypto and DNS work. With private
 * receivers allowed (an operator's own network), the system resolver applies, /etc/hosts included.
 */
const publicResolver = new dns.promises.Resolver({ timeout: 1000, tries: 2 });
/** The longest a public name's resolution may take, whatever the name servers do. */
export const RESOLVE_DEADLINE_MS = 3000;
/** Once one address family has answered, how long the other may still take (a server dropping AAAA costs no more). */
const SECOND_FAMILY_GRACE_MS = 250;

/** Name servers of the public resolver (tests point it at a loopback server). */
export function setOutboundNameServers(servers: string[]): void {
  publicResolver.setServers(servers);
}

/** The addresses a host name (or literal) stands for. */
export async function addressesOf(host: string, allowPrivate: boolean): Promise<dns.LookupAddress[]> {
  const family = net.isIP(host);
  if (family) return [{ address: host, family }];
  if (allowPrivate) return dns.promises.lookup(host, { all: true });
  // RFC 6761: *.localhost is loopback, whatever a name server would say.
  if (host === 'localhost' || host.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }];
  return resolvePublic(host);
}

/**
 * A and AAAA queries at once, within RESOLVE_DEADLINE_MS; when one family answers first, the other has
 * SECOND_FAMILY_GRACE_MS more. Rejects (code ENOTFOUND or ETIMEOUT) when neither gives an address in time.
 */
function resolvePublic(host: string): Promise<dns.LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const found: dns.LookupAddress[] = [];
    let pending = 2;
    let lastError: NodeJS.ErrnoException | undefined;
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(deadline);
      clearTimeout(grace);
      if (found.length) resolve([...found].sort((a, b) => a.family - b.family));
      else reject(Object.assign(new Error(`${host} does not resolve`), { code: lastError?.code ?? 'ETIMEOUT' }));
    };
    const deadline = setTimeout(finish, RESOLVE_DEADLINE_MS);
    const settle = (addresses: dns.LookupAddress[] | undefined, err?: NodeJS.ErrnoException) => {
      if (addresses) found.push(...addresses);
      if (err) lastError = err;
      if (--pending === 0) return finish();
      if (found.length && !grace) grace = setTimeout(finish, SECOND_FAMILY_GRACE_MS);
    };
    publicResolver.resolve4(host).then((a) => settle(a.map((address) => ({ address, family: 4 }))), (err: NodeJS.ErrnoException) => settle(undefined, err));
    publicResolver.resolve6(host).then((a) => settle(a.map((address) => ({ address, family: 6 }))), (err: NodeJS.ErrnoException) => settle(undefined, err));
  });
}

export interface OutboundResponse {
  status: number;
  /** The first bytes of the body, for an error message. */
  excerpt: string;
}

interface OutboundOptions {
  allowPrivate: boolean;
  /** One deadline for the whole exchange (socket timeouts only measure silences, which a receiver can keep short). */
  timeoutMs: number;
}

/**
 * Sends one request whose connection refuses internal addresses (unless allowed) at lookup, bounded by a deadline;
 * `onResponse` settles the promise (its `done` clears the deadline). Redirects are not followed.
 */
function sendOutbound<T>(
  url: URL,
  init: { method: string; headers: Record<string, string | number>; body?: string },
  opts: OutboundOptions,
  onResponse: (res: http.IncomingMessage, done: (result: T) => void, fail: (err: Error) => void) => void,
): Promise<T> {
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    addressesOf(hostname, opts.allowPrivate).then(
      (list) => {
        const usable = opts.allowPrivate ? list : list.filter((a) => !isInternalAddress(a.address));
        if (usable.length === 0) return callback(Object.assign(new Error(`refused: ${hostname} resolves to an internal address`), { code: 'EINTERNAL' }), '', 4);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!opts.allowPrivate && net.isIP(literal) && isInternalAddress(literal)) return Promise.reject(outboundErrors.internal(literal));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => req.destroy(new Error(`no complete answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const settle = <A>(finish: (arg: A) => void) => (arg: A) => {
      clearTimeout(deadline);
      finish(arg);
    };
    const req = client.request(url, { method: init.method, headers: init.headers, lookup }, (res) => {
      res.on('error', () => undefined);
      onResponse(res, settle(resolve), settle(reject));
    });
    req.on('error', settle(reject));
    req.end(init.body);
  });
}

/** POSTs `body` to `url` with the given headers (see sendOutbound); resolves with the status and an excerpt. */
export function postOutbound(url: URL, body: string, headers: Record<string, string>, opts: OutboundOptions): Promise<OutboundResponse> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }, body };
  return sendOutbound<OutboundResponse>(url, init, opts, (res, done) => {
    let excerpt = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      excerpt += chunk.slice(0, 500 - excerpt.length);
      // The status and an excerpt are all that is needed: a long or endless body is not read further.
      if (excerpt.length >= 500) {
        done({ status: res.statusCode ?? 0, excerpt });
        res.destroy();
      }
    });
    res.on('end', () => done({ status: res.statusCode ?? 0, excerpt }));
  });
}

export interface FetchedDocument {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A body longer than getOutbound's maxBytes (the request is abandoned there). */
export class OutboundTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`the answer is longer than ${maxBytes} bytes`);
  }
}

/**
 * GETs a document from `url` (see sendOutbound): its status, headers and whole body, which may hold at most `maxBytes`
 * (else OutboundTooLarge). A redirect is returned as it is, not followed.
 */
export function getOutbound(url: URL, headers: Record<string, string>, opts: OutboundOptions & { maxBytes: number }): Promise<FetchedDocument> {
  return sendOutbound<FetchedDocument>(url, { method: 'GET', headers }, opts, (res, done, fail) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > opts.maxBytes) {
        fail(new OutboundTooLarge(opts.maxBytes));
        res.destroy();
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
  });
}
