import { createHmac, timingSafeEqual } from 'node:crypto';

/** A purpose-bound subkey of the master key (HMAC-SHA256 as a KDF), so a signing key never doubles as the encryption key. */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', masterKey).update(`svc/${purpose}`).digest();
}

export type BlobOp = 'put' | 'get';

/** What a blob URL's signature covers. For `get`, contentType and sizeBytes are empty. */
export interface BlobGrant {
  op: BlobOp;
  objectId: string;
  contentType: string;
  sizeBytes: number | undefined;
  /** Unix seconds; the URL is valid through this second. */
  exp: number;
}

export type Verdict = 'ok' | 'bad_signature' | 'expired';

/**
 * HMAC-SHA256 signatures of the local backend's blob URLs, over (op, object id, content type, size, expiry),
 * keyed with a subkey of the master key and compared in constant time.
 */
export class UrlSigner {
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(masterKey: Buffer, now: () => number = Date.now) {
    this.#key = deriveKey(masterKey, 'storage/blob-url/v1');
    this.#now = now;
  }

  /** Current time in unix seconds. */
  nowSeconds(): number {
    return Math.floor(this.#now() / 1000);
  }

  sign(grant: BlobGrant): string {
    // Newlines cannot occur in any field (uuid, validated MIME type, integers), so the message is unambiguous.
    const message = ['svc-blob-v1', grant.op, grant.objectId, grant.contentType, grant.sizeBytes ?? '', grant.exp].join('\n');
    return createHmac('sha256', this.#key).update(message).digest('base64url');
  }

  /** The signature is checked first, so an expired URL is only reported as such when it is genuine. */
  verify(grant: BlobGrant, signature: string): Verdict {
    // The text itself is compared (not its decoded bytes), so no second spelling of a signature is accepted.
    const expected = Buffer.from(this.sign(grant));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad_signature';
    if (this.nowSeconds() > grant.exp) return 'expired';
    return 'ok';
  }

  /** `{base}/blob/storage/{id}?op=..&exp=..&sig=..` */
  url(baseUrl: string, grant: BlobGrant): string {
    const q = new URLSearchParams({ op: grant.op, exp: String(grant.exp), sig: this.sign(grant) });
    return `${baseUrl}/blob/storage/${grant.objectId}?${q.toString()}`;
  }
}
