// The outbound guard refuses internal addresses and lets public ones through (one BlockList with ::ffff:0:0/96 once
// refused every IPv4 address, since a BlockList checks IPv4 addresses against its IPv6 rules as mapped ones).
import { describe, expect, it } from 'vitest';
import { isInternalAddress } from '../../src/core/outbound.ts';

describe('isInternalAddress', () => {
  it.each(['8.8.8.8', '203.0.113.7', '1.1.1.1', '::ffff:8.8.8.8', '2606:4700:4700::1111'])('lets the public address %s through', (address) => {
    expect(isInternalAddress(address)).toBe(false);
  });

  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', 'fd00::1', 'fe80::1', '64:ff9b::a01:203', '2002:a01:203::1'])(
    'refuses the internal address %s',
    (address) => {
      expect(isInternalAddress(address)).toBe(true);
    },
  );
});
