import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, UrlSigner, type BlobGrant } from '../../src/storage/signing.ts';

const master = randomBytes(32);
const T0 = 1_900_000_000;
const at = (seconds: number) => () => seconds * 1000;
const grant: BlobGrant = { op: 'put', objectId: '0b7c6f5e-1d2a-4b3c-8d9e-0f1a2b3c4d5e', contentType: 'image/png', sizeBytes: 1234, exp: T0 + 300 };

describe('UrlSigner', () => {
  it('accepts its own signature until the expiry second, then reports expiry', () => {
    const sig = new UrlSigner(master).sign(grant);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new UrlSigner(master, at(T0)).verify(grant, sig)).toBe('ok');
    expect(new UrlSigner(master, at(T0 + 300)).verify(grant, sig)).toBe('ok');
    expect(new UrlSigner(master, at(T0 + 301)).verify(grant, sig)).toBe('expired');
  });

  it('binds every signed field: op, object id, content type, size and expiry', () => {
    const signer = new UrlSigner(master, at(T0));
    const sig = signer.sign(grant);
    const variants: BlobGrant[] = [
      { ...grant, op: 'get' },
      { ...grant, objectId: '0b7c6f5e-1d2a-4b3c-8d9e-0f1a2b3c4d5f' },
      { ...grant, contentType: 'text/html' },
      { ...grant, sizeBytes: 1235 },
      { ...grant, exp: grant.exp + 3600 },
    ];
    for (const v of variants) expect(signer.verify(v, sig)).toBe('bad_signature');
  });

  it('refuses tampered, truncated, padded or foreign signatures', () => {
    const signer = new UrlSigner(master, at(T0));
    const sig = signer.sign(grant);
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const flippedFirst = flip(sig[0]!) + sig.slice(1);
    // The last character carries two padding bits: another spelling of the same bytes is refused too.
    const last = sig.at(-1)!;
    const respelled = sig.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) ^ 1);
    for (const bad of [flippedFirst, respelled, sig.slice(0, -1), sig + 'A', '', 'not a signature', sig.replace(/[a-z]/g, (c) => c.toUpperCase()) + '-']) {
      expect(signer.verify(grant, bad)).toBe('bad_signature');
    }
    const other = new UrlSigner(randomBytes(32), at(T0));
    expect(other.verify(grant, sig)).toBe('bad_signature');
  });

  it('a tampered signature is reported as such even when the URL has also expired', () => {
    const sig = new UrlSigner(master).sign(grant);
    const tampered = (sig[0] === 'x' ? 'y' : 'x') + sig.slice(1);
    expect(new UrlSigner(master, at(T0 + 10_000)).verify(grant, tampered)).toBe('bad_signature');
  });

  it('builds the blob URL from the base URL, id and signed query', () => {
    const signer = new UrlSigner(master, at(T0));
    const url = new URL(signer.url('https://api.example.com', grant));
    expect(url.origin + url.pathname).toBe(`https://api.example.com/blob/storage/${grant.objectId}`);
    expect(url.searchParams.get('op')).toBe('put');
    expect(url.searchParams.get('exp')).toBe(String(grant.exp));
    expect(signer.verify(grant, url.searchParams.get('sig')!)).toBe('ok');
  });

  it('derives purpose-bound keys that differ from the master key and from each other', () => {
    const a = deriveKey(master, 'storage/blob-url/v1');
    expect(a).toHaveLength(32);
    expect(a.equals(master)).toBe(false);
    expect(a.equals(deriveKey(master, 'other'))).toBe(false);
    expect(a.equals(deriveKey(master, 'storage/blob-url/v1'))).toBe(true);
  });
});
