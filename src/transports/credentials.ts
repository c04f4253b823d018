import type { Request } from 'express';
import type { Caller } from '../core/caller.ts';
import { errors } from '../core/errors.ts';
import { mcpResource, OAUTH_PREFIX } from '../identity/oauth.ts';
import { KEY_PREFIX } from '../auth/keys.ts';
import type { Services } from '../services.ts';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The caller of an HTTP request: its Authorization header when it has one, else its `apikey` header (an app's
 * publishable or service key, as supabase-js sends its key), else a person's session cookie. A cookie that no longer
 * resolves (signed out, expired) counts as no credential, so public routes still answer.
 */
export async function resolveRequestCaller(req: Request, services: Services, sessionToken: string | undefined): Promise<{ caller: Caller; viaCookie: boolean }> {
  const { authorization, apikey } = req.headers;
  if (authorization === undefined && apikey !== undefined) return { caller: await resolveApiKey(apikey, services), viaCookie: false };
  if (authorization !== undefined || sessionToken === undefined) return { caller: await resolveCaller(authorization, services), viaCookie: false };
  const caller = await services.identity.sessions.resolve(sessionToken);
  return caller ? { caller, viaCookie: true } : { caller: { kind: 'none' }, viaCookie: false };
}

/**
 * An `apikey` header: an app's publishable key (anonymous on that app) or service key, the keys supabase-js is made
 * with. Read only without an Authorization header, which decides when both come (supabase-js sends the signed-in end
 * user's token there). Any other value is a 401.
 */
async function resolveApiKey(header: string | string[], services: Services): Promise<Caller> {
  const key = typeof header === 'string' ? header.trim() : undefined;
  const caller = key?.startsWith(KEY_PREFIX.publishable) || key?.startsWith(KEY_PREFIX.service) ? await services.keys.resolve(key) : undefined;
  if (!caller) throw errors.invalidToken();
  return caller;
}

/** Authorization header to caller. No header is `none`; anything present but not valid is a 401. */
export async function resolveCaller(header: string | undefined, services: Services): Promise<Caller> {
  if (header === undefined || header === '') return { kind: 'none' };
  const match = BEARER.exec(header);
  if (!match) throw errors.invalidToken();
  const token = match[1]!;
  const caller = token.startsWith('svc_')
    ? await services.keys.resolve(token)
    : JWT_SHAPE.test(token)
      ? await services.endUserTokens.verify(token)
      : undefined;
  if (!caller) throw errors.invalidToken();
  return caller;
}

/**
 * The caller of /mcp: an OAuth access token issued for /mcp, the protected resource (its audience, RFC 8707: one for
 * another resource is an invalid token here, and no other route takes any), or any credential resolveCaller takes.
 */
export async function resolveMcpCaller(header: string | undefined, services: Services): Promise<Caller> {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  if (!token?.startsWith(OAUTH_PREFIX.access)) return resolveCaller(header, services);
  const caller = await services.oauth.resolve(token, mcpResource(services.config.baseUrl).href);
  if (!caller) throw errors.invalidToken();
  return caller;
}
