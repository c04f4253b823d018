// What verifying a custom domain asks of DNS, in our terms: the TXT values published at a name. The adapter in
// src/adapters/ (dns.ts) asks the configured servers (SVC_DNS_SERVERS) with node:dns; the composition root builds it
// and hands it to DomainsService.

export interface TxtLookup {
  /**
   * The TXT values at `name` (each record's strings joined, as a record's value is one string split in 255-byte
   * parts); empty when the name or its TXT records do not exist. Throws DnsUnavailableError when no server answered.
   */
  txt(name: string): Promise<string[]>;
}

/** No DNS server gave an answer (timeout, refused, server failure): a passing condition, not the customer's record. */
export class DnsUnavailableError extends Error {
  /** The resolver's code, e.g. ETIMEOUT, ECONNREFUSED, ESERVFAIL. */
  readonly code: string;

  constructor(code: string) {
    super(`DNS lookup failed: ${code}`);
    this.code = code;
  }
}
