// The TXT lookups of custom domain verification (src/domains/dns-port.ts) with node:dns's own resolver (c-ares), asking
// the servers SVC_DNS_SERVERS names, or the system's when it names none. Asynchronous only: the thread pool's
// getaddrinfo is never used, and a silent server costs at most TIMEOUT_MS x TRIES per server.
import { Resolver } from 'node:dns/promises';
import { DnsUnavailableError, type TxtLookup } from '../domains/dns-port.ts';

const TIMEOUT_MS = 2000;
const TRIES = 2;
/** Answers that mean "no such record": the name does not exist, or has no TXT records. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);

export class DnsTxtLookup implements TxtLookup {
  readonly #servers: readonly string[];

  constructor(servers: readonly string[]) {
    this.#servers = servers;
  }

  async txt(name: string): Promise<string[]> {
    // A resolver per lookup: cancel() or a hung query of one verification never touches another's.
    const resolver = new Resolver({ timeout: TIMEOUT_MS, tries: TRIES });
    if (this.#servers.length > 0) resolver.setServers(this.#servers);
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && NOT_FOUND.has(code)) return [];
      throw new DnsUnavailableError(typeof code === 'string' ? code : 'EUNKNOWN');
    }
  }
}
