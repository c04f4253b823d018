import { describe, expect, it } from 'vitest';
import { dummyHash, hashPassword, PASSWORD_HASH_OPTIONS, verifyAgainstDummy, verifyPassword } from '../../src/auth/passwords.ts';

describe('password hashing', () => {
  it('produces argon2id PHC strings with the configured parameters and a fresh salt each time', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
    expect(PASSWORD_HASH_OPTIONS).toMatchObject({ memoryCost: 19_456, timeCost: 2, parallelism: 1 });
  });

  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(await verifyPassword(stored, 'correct horse battery')).toBe(true);
    expect(await verifyPassword(stored, 'correct horse batterY')).toBe(false);
    expect(await verifyPassword(stored, '')).toBe(false);
  });

  it('handles non-ASCII passwords byte-exactly', async () => {
    const stored = await hashPassword('pässwörd-密码-🔑');
    expect(await verifyPassword(stored, 'pässwörd-密码-🔑')).toBe(true);
    expect(await verifyPassword(stored, 'passwort-密码-🔑')).toBe(false);
  });

  it('treats a stored value that is not an argon2 hash as a mismatch, not an error', async () => {
    expect(await verifyPassword('not a hash', 'anything')).toBe(false);
    expect(await verifyPassword('', 'anything')).toBe(false);
  });

  it('the dummy hash is made once, with the same parameters, and never matches', async () => {
    const first = await dummyHash();
    expect(await dummyHash()).toBe(first);
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyAgainstDummy('correct horse battery')).toBe(false);
  });
});
