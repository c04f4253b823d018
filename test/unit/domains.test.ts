// What may be a custom domain, how a Host header is read, and the DNS server setting (SVC_DNS_SERVERS).
import { describe, expect, it } from 'vitest';
import { domainProblem, hostOf } from '../../src/domains/names.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const hosts = { baseUrl: 'https://api.example.net:8443', baseDomain: 'apps.example.net' };

describe('custom domain names', () => {
  it.each(['www.example.com', 'example.com', 'a-b.c0.example.co.uk', `${'a'.repeat(63)}.example.com`, 'xn--bcher-kva.example'])('%s may be one', (domain) => {
    expect(domainProblem(domain, hosts)).toBeUndefined();
  });

  it.each([
    ['', '1-253 characters'],
    [`${Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')}.io`, '1-253 characters'],
    ['10.0.0.1', 'IP address'],
    ['::1', 'IP address'],
    ['[2001:db8::1]', 'IP address'],
    ['localhost', 'two or more labels'],
    ['example.com.', "'' is not a DNS label"],
    ['*.example.com', "'*' is not a DNS label"],
    ['a..example.com', "'' is not a DNS label"],
    ['under_score.example.com', "'under_score' is not a DNS label"],
    ['x-.example.com', "'x-' is not a DNS label"],
    [`${'a'.repeat(64)}.example.com`, 'is not a DNS label'],
    ['host.1', 'not all digits'],
    ['api.example.net', "the platform's own host"],
    ['apps.example.net', 'subdomain routing'],
    ['shop-x1y2z3.apps.example.net', 'subdomain routing'],
  ])('%s is refused: %s', (domain, problem) => {
    expect(domainProblem(domain, hosts)).toContain(problem);
  });

  it('a name that only ends like the routing domain is not under it', () => {
    expect(domainProblem('myapps.example.net', hosts)).toBeUndefined();
    expect(domainProblem('apps.example.net.evil.com', hosts)).toBeUndefined();
    expect(domainProblem('x.apps.example.net', { ...hosts, baseDomain: 'apps.example.net:8080' })).toContain('subdomain routing');
  });

  it('the Host header: lowercase, no port, no final dot; an IPv6 literal keeps its brackets', () => {
    expect(hostOf('WWW.Example.COM:8080')).toBe('www.example.com');
    expect(hostOf('www.example.com.')).toBe('www.example.com');
    expect(hostOf('www.example.com.:80')).toBe('www.example.com');
    expect(hostOf('[::1]:8080')).toBe('[::1]');
    expect(hostOf(undefined)).toBe('');
  });

  it('the Host header read again, after more distinct ones than are remembered, and when too long to remember: the same answer', () => {
    expect(hostOf('Again.Example.COM:1')).toBe('again.example.com');
    for (let i = 0; i < 1500; i++) expect(hostOf(`H${i}.example.com.:80`)).toBe(`h${i}.example.com`);
    expect(hostOf('Again.Example.COM:1')).toBe('again.example.com');
    const long = `${'A'.repeat(300)}.example.com:443`;
    expect(hostOf(long)).toBe(`${'a'.repeat(300)}.example.com`);
    expect(hostOf(long)).toBe(`${'a'.repeat(300)}.example.com`);
  });
});

describe('SVC_DNS_SERVERS', () => {
  it('empty: the system resolvers; else the addresses as given', () => {
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(loadConfig({ SVC_DNS_SERVERS: ' 1.1.1.1, 127.0.0.1:5353,2606:4700::1111, [::1]:53 ' }).dnsServers).toEqual([
      '1.1.1.1',
      '127.0.0.1:5353',
      '2606:4700::1111',
      '[::1]:53',
    ]);
  });

  it.each(['dns.example.com', '1.1.1', '1.1.1.1:0', '1.1.1.1:70000', '[::1', '[example]:53', '2606:4700::1111:53:x'])('%s is refused, naming the variable', (entry) => {
    expect(() => loadConfig({ SVC_DNS_SERVERS: entry })).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_DNS_SERVERS: entry })).toThrow(/SVC_DNS_SERVERS: '.*' is not a DNS server address/);
  });
});
