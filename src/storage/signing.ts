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

/**
 * What a signed object URL grants: reading one path of one bucket (createSignedUrl), or writing it as the signer
 * (createSignedUploadUrl: `user` is the end user who signed, null for the app's keys; `upsert` allows replacing), until
 * `exp` (unix seconds, inclusive).
 */
export interface PathGrant {
  appId: string;
  bucket: string;
  name: string;
  op: 'get' | 'put';
  user: string | null;
  upsert: boolean;
  exp: number;
}

/**
 * Tokens of signed object URLs: `base64url(JSON grant).HMAC-SHA256`, keyed with their own subkey of the master key.
 * Bound to the path, not to an object id, so a replaced object serves its new bytes.
 */
export class PathTokens {
  readonly #key: Buffer;

  constructor(masterKey: Buffer) {
    this.#key = deriveKey(masterKey, 'storage/v1-sign');
  }

  sign(grant: PathGrant): string {
    const body = Buffer.from(JSON.stringify({ v: 1, a: grant.appId, b: grant.bucket, n: grant.name, o: grant.op, u: grant.user, x: grant.upsert, e: grant.exp })).toString(
      'base64url',
    );
    return `${body}.${createHmac('sha256', this.#key).update(body).digest('base64url')}`;
  }

  /** A genuine token's verdict for this path and operation (the signature is checked before the expiry), and its grant. */
  verify(token: string, path: Pick<PathGrant, 'appId' | 'bucket' | 'name' | 'op'>, nowSeconds: number): { verdict: Verdict; grant?: PathGrant } {
    const bad = { verdict: 'bad_signature' as const };
    const [body, sig, extra] = token.split('.');
    if (!body || !sig || extra !== undefined) return bad;
    const expected = Buffer.from(createHmac('sha256', this.#key).update(body).digest('base64url'));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return bad;
    let g: { a?: unknown; b?: unknown; n?: unknown; o?: unknown; u?: unknown; x?: unknown; e?: unknown };
    try {
      g = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof g;
    } catch {
      return bad;
    }
    if (g.a !== path.appId || g.b !== path.bucket || g.n !== path.name || g.o !== path.op || typeof g.e !== 'number') return bad;
    const grant: PathGrant = { ...path, user: typeof g.u === 'string' ? g.u : null, upsert: g.x === true, exp: g.e };
    return { verdict: nowSeconds > g.e ? 'expired' : 'ok', grant };
  }
}
