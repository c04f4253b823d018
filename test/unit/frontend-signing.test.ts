import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, UploadSigner } from '../../src/frontend/signing.ts';

const master = randomBytes(32);
const signer = new UploadSigner(deriveKey(master, 'frontend-upload-url'));
const APP = 'abcdefghij012345';
const DEP = '6f1c2d8e-2b7e-4a57-9a55-0d5d4c1e8b11';

describe('upload URL signatures', () => {
  const expires = Math.floor(Date.now() / 1000) + 900;
  const sig = signer.sign(APP, DEP, expires);

  it('verifies its own signature until the expiry second', () => {
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signer.verify(APP, DEP, String(expires), sig)).toBe('ok');
    expect(signer.verify(APP, DEP, String(expires), sig, (expires + 1) * 1000)).toBe('expired');
  });

  it('refuses anything changed: expiry, app, deployment, signature, key', () => {
    expect(signer.verify(APP, DEP, String(expires + 1), sig)).toBe('invalid');
    expect(signer.verify('zbcdefghij012345', DEP, String(expires), sig)).toBe('invalid');
    expect(signer.verify(APP, DEP.replace('6f', '7f'), String(expires), sig)).toBe('invalid');
    expect(signer.verify(APP, DEP, String(expires), sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A'))).toBe('invalid');
    expect(signer.verify(APP, DEP, String(expires), undefined)).toBe('invalid');
    expect(signer.verify(APP, DEP, ['1', '2'], sig)).toBe('invalid');
    expect(signer.verify(APP, DEP, '1e12', sig)).toBe('invalid');
    const other = new UploadSigner(deriveKey(randomBytes(32), 'frontend-upload-url'));
    expect(other.verify(APP, DEP, String(expires), sig)).toBe('invalid');
  });

  it('derives distinct keys per purpose, never the master key itself', () => {
    const a = deriveKey(master, 'frontend-upload-url');
    expect(a).toHaveLength(32);
    expect(a.equals(master)).toBe(false);
    expect(a.equals(deriveKey(master, 'something-else'))).toBe(false);
    expect(a.equals(deriveKey(master, 'frontend-upload-url'))).toBe(true);
  });
});
