import { createHmac, hkdfSync } from 'node:crypto';
import { safeEqual } from '../core/crypto.ts';

/** A key for one purpose, derived from the master key with HKDF-SHA256, so no two features share a key. */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `svc:${purpose}`, 32));
}

export type SignatureCheck = 'ok' | 'invalid' | 'expired';

/**
 * Signs the zip upload URL of one deployment: HMAC-SHA256 over the method, app, deployment and expiry,
 * so a signature is good for exactly that PUT until that second. Compared in constant time.
 */
export class UploadSigner {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  sign(appId: string, deploymentId: string, expires: number): string {
    return createHmac('sha256', this.#key).update(`PUT\n${appId}\n${deploymentId}\n${expires}`).digest('base64url');
  }

  /** `expires` and `signature` as they came in the query string (unparsed). */
  verify(appId: string, deploymentId: string, expires: unknown, signature: unknown, nowMs = Date.now()): SignatureCheck {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(expires)) return 'invalid';
    if (!safeEqual(this.sign(appId, deploymentId, Number(expires)), signature)) return 'invalid';
    return Number(expires) * 1000 < nowMs ? 'expired' : 'ok';
  }
}
