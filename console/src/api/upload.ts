// A raw PUT of a file's bytes to a presigned URL the platform handed out (a storage upload, a site's zip): same origin
// with the local backends, no credential (the signature is the permission), the platform's error envelope on failure.
import { ensureOk } from '../api.ts';

export async function putBytes(url: string, file: Blob, contentType: string): Promise<void> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: file, credentials: 'omit' });
  await ensureOk(res, 'upload');
}
