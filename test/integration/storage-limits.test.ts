// Per-app storage limits against a platform with tight operator limits: overrides may only tighten them, and
// the end users' pending-upload caps follow SVC_STORAGE_USER_PENDING_*.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let appId: string;
let base: string;

beforeAll(async () => {
  p = await startTestPlatform({
    SVC_STORAGE_MAX_FILE_BYTES: '1000',
    SVC_STORAGE_MAX_APP_BYTES: '100000',
    SVC_STORAGE_ALLOWED_CONTENT_TYPES: 'image/*,application/pdf',
    SVC_STORAGE_USER_PENDING_UPLOADS: '3',
    SVC_STORAGE_USER_PENDING_PERCENT: '50',
  });
  appId = (await p.api('POST', '/init', { body: { name: 'Tight limits' } })).body.app_id;
  base = `/storage/${appId}/limits`;
});
afterAll(async () => {
  await p?.close();
});

const upload = (sizeBytes: number, contentType = 'image/png') =>
  p.api('POST', `/storage/${appId}/upload`, { body: { filename: 'f', contentType, sizeBytes } });
const validationError = (message: string, path: string, issue: string) => ({
  error: { code: 'VALIDATION_FAILED', message, remediation: 'Fix the named field and send the request again.', details: [{ path, message: issue }] },
});

describe('PUT /storage/{app_id}/limits refuses anything looser than the platform, and changes nothing', () => {
  let before: unknown;

  beforeAll(async () => {
    const set = await p.api('PUT', base, { body: { max_file_bytes: 800, allowed_content_types: ['image/*'] } });
    expect(set.status).toBe(200);
    before = set.body;
  });

  it('reports the effective limits, the overrides and the end-user pending caps', () => {
    expect(before).toEqual({
      app_id: appId,
      max_file_bytes: 800,
      max_app_bytes: 100000,
      allowed_content_types: ['image/*'],
      max_user_pending_uploads: 3,
      max_user_pending_bytes: 50000,
      overrides: { max_file_bytes: 800, max_app_bytes: null, allowed_content_types: ['image/*'] },
      usage: { used_bytes: 0, pending_bytes: 0 },
    });
  });

  it.each([
    [{ max_file_bytes: 1001 }, validationError("'max_file_bytes' may not exceed the platform limit of 1000 bytes; per-app overrides can only tighten it.", 'max_file_bytes', 'at most 1000')],
    [
      { max_file_bytes: 500, max_app_bytes: 100001 },
      validationError("'max_app_bytes' may not exceed the platform limit of 100000 bytes; per-app overrides can only tighten it.", 'max_app_bytes', 'at most 100000'),
    ],
    [
      { max_file_bytes: 500, allowed_content_types: ['image/png', 'video/*', 'text/plain'] },
      validationError(
        "'allowed_content_types' may only narrow the platform's allow-list (image/*, application/pdf); it does not allow video/*, text/plain.",
        'allowed_content_types',
        'within image/*, application/pdf',
      ),
    ],
    [
      { allowed_content_types: ['*/*'] },
      validationError(
        "'allowed_content_types' may only narrow the platform's allow-list (image/*, application/pdf); it does not allow */*.",
        'allowed_content_types',
        'within image/*, application/pdf',
      ),
    ],
    [
      { max_file_size: 5000000 },
      validationError(
        "Invalid input: unknown field 'max_file_size'; the fields are max_file_bytes, max_app_bytes and allowed_content_types.",
        '',
        "unknown field 'max_file_size'; the fields are max_file_bytes, max_app_bytes and allowed_content_types",
      ),
    ],
    [
      { max_file_bytes: 500, maxAppBytes: 5000000 },
      validationError(
        "Invalid input: unknown field 'maxAppBytes'; the fields are max_file_bytes, max_app_bytes and allowed_content_types.",
        '',
        "unknown field 'maxAppBytes'; the fields are max_file_bytes, max_app_bytes and allowed_content_types",
      ),
    ],
  ])('%j -> 400 naming the field and what is allowed', async (body, expected) => {
    const r = await p.api('PUT', base, { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { ...expected.error, documentation_url: p.docsUrl('storage') } });
    expect((await p.api('GET', base)).body).toEqual(before);
  });

  it('narrowing within the platform allow-list is accepted', async () => {
    const r = await p.api('PUT', base, { body: { allowed_content_types: ['image/png', 'application/pdf'] } });
    expect(r.status).toBe(200);
    expect(r.body.allowed_content_types).toEqual(['image/png', 'application/pdf']);
    expect((await upload(10, 'image/gif')).body.error.code).toBe('CONTENT_TYPE_NOT_ALLOWED');
    expect((await upload(10, 'application/pdf')).status).toBe(200);
    expect((await p.api('PUT', base, { body: { allowed_content_types: ['image/*'] } })).status).toBe(200);
  });
});

describe('an override stored under a looser platform limit never loosens the current one', () => {
  it('the effective limits are the platform limits, reported and enforced', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'Old override' } })).body;
    // As if set while the operator allowed more; the operator has lowered the limits since.
    await p.sql('insert into storage_limits (app_id, max_file_bytes, max_app_bytes) values ($1, 5000, 500000)', [app.app_id]);
    const limits = await p.api('GET', `/storage/${app.app_id}/limits`);
    expect(limits.body).toMatchObject({
      max_file_bytes: 1000,
      max_app_bytes: 100000,
      max_user_pending_bytes: 50000,
      overrides: { max_file_bytes: 5000, max_app_bytes: 500000, allowed_content_types: null },
    });
    const r = await p.api('POST', `/storage/${app.app_id}/upload`, { body: { filename: 'f.png', contentType: 'image/png', sizeBytes: 1001 } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { size_bytes: 1001, max_file_bytes: 1000 } });
  });
});
