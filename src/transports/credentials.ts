import type { Caller } from '../core/caller.ts';
import { errors } from '../core/errors.ts';
import type { Services } from '../services.ts';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Authorization header to caller. No header is `none`; anything present but not valid is a 401. */
export async function resolveCaller(header: string | undefined, services: Services): Promise<Caller> {
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
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
