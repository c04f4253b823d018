import type { RequestHandler } from 'express';

const ON_PLATFORM = /^\/v1\/([^/]+)\/rest\/v1\/((?:rpc\/)?[^/?]+)\/?(\?.*)?$/;
const ON_APP_HOST = /^\/rest\/v1\/((?:rpc\/)?[^/?]+)\/?(\?.*)?$/;
/** auth-js's getClaims reads the keys at its auth URL: the app's JWKS. */
const JWKS = /^(\/v1\/[^/]+)?\/auth\/v1\/\.well-known\/jwks\.json(\?.*)?$/;

/**
 * supabase-js calls `<url>/rest/v1/<table>` (and `<url>/rest/v1/rpc/<function>`): created with the app's base URL (`<platform>/v1/<app_id>`, or the app's
 * own host), its `from()` reaches the data API unchanged. Rewritten before anything else reads the path, so errors
 * take the data API's shape too; a rewritten platform path is marked so that only the data API's routes serve it.
 * auth-js's JWKS URL (`<url>/auth/v1/.well-known/jwks.json`) is the app's JWKS.
 */
export const postgrestAlias: RequestHandler = (req, res, next) => {
  const jwks = req.url.includes('/auth/v1/') ? JWKS.exec(req.url) : null;
  if (jwks) req.url = `${jwks[1] ?? ''}/.well-known/jwks.json${jwks[2] ?? ''}`;
  else if (req.url.includes('/rest/v1/')) {
    const platform = ON_PLATFORM.exec(req.url);
    if (platform) {
      req.url = `/v1/${platform[1]}/${platform[2]}${platform[3] ?? ''}`;
      // Only the data API's routes serve it (not /v1/{app_id}/models of the AI gateway, say).
      (res.locals as { postgrestAlias?: boolean }).postgrestAlias = true;
    } else {
      const host = ON_APP_HOST.exec(req.url);
      if (host) req.url = `/data/${host[1]}${host[2] ?? ''}`;
    }
  }
  next();
};
