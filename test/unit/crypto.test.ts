import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { SecretBox, generateKey, hashKey, keyHint, parseMasterKey, safeEqual } from '../../src/core/crypto.ts';

describe('keys', () => {
  it('generates prefixed 256-bit keys and hashes them deterministically', () => {
    const a = generateKey('svc_sk_');
    expect(a).toMatch(/^svc_sk_[A-Za-z0-9_-]{43}$/);
    expect(generateKey('svc_sk_')).not.toBe(a);
    expect(hashKey(a)).toBe(hashKey(a));
    expect(hashKey(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shows only a short hint', () => {
    expect(keyHint('svc_sk_ABCDEFGHIJ')).toBe('svc_sk_ABCD…');
    expect(keyHint('svc_sub_ABCDEFGHIJ')).toBe('svc_sub_ABCD…');
  });

  it('compares in constant time and tolerates different lengths', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and never repeats a ciphertext', () => {
    const sealed = box.seal('sk-live-secret');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('sk-live-secret');
    expect(box.seal('sk-live-secret')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('sk-live-secret');
  });

  it('refuses a tampered ciphertext and another key', () => {
    const sealed = box.seal('hello');
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0]! ^= 1;
    parts[3] = ct.toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
    expect(() => box.open('garbage')).toThrow('unrecognised sealed secret');
  });

  it('parses hex and base64 master keys and refuses other lengths', () => {
    const raw = randomBytes(32);
    expect(parseMasterKey(raw.toString('hex')).equals(raw)).toBe(true);
    expect(parseMasterKey(raw.toString('base64url')).equals(raw)).toBe(true);
    expect(() => parseMasterKey('abcd')).toThrow('32 bytes');
  });
});
