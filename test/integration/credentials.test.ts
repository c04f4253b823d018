import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair } from 'jose';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { invoke } from '../../src/core/invoke.ts';
import { appsGet } from '../../tools/apps/apps.ts';
import { platformHealth } from '../../tools/platform/platform.ts';
import pino from 'pino';

let p: TestPlatform;
let appA: { app_id: string; service_key: { key: string } };
let appB: { app_id: string; service_key: { key: string } };
const USER = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';

beforeAll(async () => {
  p = await startTestPlatform();
  appA = (await p.api('POST', '/init', { body: { name: 'A' } })).body;
  appB = (await p.api('POST', '/init', { body: { name: 'B' } })).body;
});
afterAll(async () => {
  await p?.close();
});

describe('end-user JWT verification', () => {
  it('accepts a token the app signed and binds it to that app', async () => {
    const token = await p.services.endUserTokens.sign(appA.app_id, { sub: USER, email: 'a@example.com' }, 60);
    const caller = await p.services.endUserTokens.verify(token);
    expect(caller).toMatchObject({ kind: 'user', appId: appA.app_id, userId: USER, claims: { email: 'a@example.com', aud: appA.app_id } });
    const log = pino({ level: 'silent' });
    const own = await invoke({ ...appsGet, auth: ['user'] },  { app_id: appA.app_id }, { services: p.services, admission: p.services.admission, audit: p.services.audit, caller: caller!, requestId: 't', clientId: 'test', log });
    expect(own).toMatchObject({ app_id: appA.app_id });
  });

  it('refuses a token of app A presented for app B', async () => {
    const token = await p.services.endUserTokens.sign(appA.app_id, { sub: USER }, 60);
    const caller = (await p.services.endUserTokens.verify(token))!;
    const log = pino({ level: 'silent' });
    const userTool = { ...appsGet, auth: ['user'] as const };
    await expect(invoke(userTool, { app_id: appB.app_id }, { services: p.services, admission: p.services.admission, audit: p.services.audit, caller, requestId: 't', clientId: 'test', log })).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
    });
    await expect(invoke(userTool, { app_id: appA.app_id }, { services: p.services, admission: p.services.admission, audit: p.services.audit, caller, requestId: 't', clientId: 'test', log })).resolves.toMatchObject({
      app_id: appA.app_id,
    });
  });

  it('refuses expired, forged, re-audienced and tampered tokens with 401', async () => {
    const expired = await p.services.endUserTokens.sign(appA.app_id, { sub: USER }, -10);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ sub: USER }).setProtectedHeader({ alg: 'ES256', kid: 'x' }).setAudience(appA.app_id).setIssuer(p.services.config.baseUrl).setExpirationTime('1m').sign(privateKey);
    const valid = await p.services.endUserTokens.sign(appA.app_id, { sub: USER }, 60);
    const [h, body, sig] = valid.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const reAudienced = [h, Buffer.from(JSON.stringify({ ...claims, aud: appB.app_id })).toString('base64url'), sig].join('.');
    const tampered = [h, Buffer.from(JSON.stringify({ ...claims, sub: '00000000-0000-0000-0000-000000000000' })).toString('base64url'), sig].join('.');
    for (const token of [expired, forged, reAudienced, tampered, 'a.b.c']) {
      expect(await p.services.endUserTokens.verify(token)).toBeUndefined();
      const r = await p.api('GET', '/health', { key: token });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
    expect((await p.api('GET', '/health', { key: valid })).status).toBe(200);
  });

  it('stores the signing key sealed, never in clear', async () => {
    const rows = await p.sql('select private_key_sealed from app_signing_keys where app_id = $1', [appA.app_id]);
    expect(rows[0].private_key_sealed).toMatch(/^v1\./);
    expect(rows[0].private_key_sealed).not.toContain('PRIVATE KEY');
  });
});

describe('key binding', () => {
  it('a service key of app A is refused on app B with 403, accepted on A', async () => {
    expect((await p.api('GET', `/apps/${appA.app_id}`, { key: appA.service_key.key })).status).toBe(200);
    const r = await p.api('GET', `/apps/${appB.app_id}`, { key: appA.service_key.key });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      error: {
        code: 'FORBIDDEN',
        message: 'The credential does not grant access to this app.',
        remediation: 'Use a credential issued for this app, or the platform key of its owner.',
        documentation_url: p.docsUrl('apps'),
      },
    });
  });

  it('keys are stored hashed', async () => {
    const rows = await p.sql('select key_hash, hint from service_keys where app_id = $1', [appA.app_id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(appA.service_key.key.startsWith(rows[0].hint.slice(0, -1))).toBe(true);
  });

  it('a malformed Authorization header is 401, no header on a public route is fine', async () => {
    expect((await p.api('GET', '/health', { key: null, headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await p.api('GET', '/health', { key: null })).status).toBe(200);
    const none = await invoke(platformHealth, {}, { services: p.services, admission: p.services.admission, audit: p.services.audit, caller: { kind: 'none' }, requestId: 't', clientId: 'test', log: pino({ level: 'silent' }) });
    expect(none).toMatchObject({ status: 'ok' });
  });
});
