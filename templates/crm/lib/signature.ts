// Signed webhooks: the platform's meeting events (x-svc-signature: v1,<base64 HMAC-SHA256>) and the substrate outbox
// (x-svc-signature: sha256=<hex HMAC-SHA256>), both over the raw body. crypto.subtle.verify compares the MAC itself,
// in constant time, so no byte of the expected signature leaks through timing.
import { HttpError } from './http.ts';

const encoder = new TextEncoder();

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^(?:[0-9a-f]{2})+$/i.test(text)) return null;
  return Uint8Array.from(text.match(/../g)!, (h) => parseInt(h, 16));
}

/** Whether `mac` is HMAC-SHA256(secret, raw). */
async function hmacValid(secret: string, raw: string, mac: Uint8Array<ArrayBuffer> | null): Promise<boolean> {
  if (!secret || !mac || mac.length !== 32) return false;
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify('HMAC', key, mac, encoder.encode(raw));
}

/** The platform's meeting events: `v1,<base64>` keyed with the wsec_ secret of meetings_webhook_set. */
export function meetingSignatureValid(secret: string, raw: string, header: string | null): Promise<boolean> {
  const base64 = header?.startsWith('v1,') ? header.slice(3) : null;
  return hmacValid(secret, raw, base64 === null ? null : fromBase64(base64));
}

/** The substrate outbox's deliveries: `sha256=<hex>`. */
export function outboxSignatureValid(secret: string, raw: string, header: string | null): Promise<boolean> {
  const hex = header?.startsWith('sha256=') ? header.slice(7) : null;
  return hmacValid(secret, raw, hex === null ? null : fromHex(hex));
}

/**
 * A signed webhook's JSON body, once its signature verifies over the raw bytes: 401 bad_signature when it does not
 * (nothing of the body is read before), 400 invalid_json when it is not JSON.
 */
export async function verifiedJson<T>(request: Request, scheme: 'meetings' | 'outbox', secret: string | undefined, secretName: string): Promise<T> {
  const raw = await request.text();
  const valid = scheme === 'meetings' ? meetingSignatureValid : outboxSignatureValid;
  if (!(await valid(secret ?? '', raw, request.headers.get('x-svc-signature')))) {
    throw new HttpError(401, 'bad_signature', `The x-svc-signature does not verify with ${secretName}.`);
  }
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not JSON.');
  }
}
