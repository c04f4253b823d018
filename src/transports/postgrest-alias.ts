import type { RequestHandler } from 'express';

const ON_PLATFORM = /^\/v1\/([^/]+)\/rest\/v1\/([^/?]+)\/?(\?.*)?$/;
const ON_APP_HOST = /^\/rest\/v1\/([^/?]+)\/?(\?.*)?$/;

/**
 * supabase-js calls `<url>/rest/v1/<table>`: created with the app's base URL (`<platform>/v1/<app_id>`, or the app's
 * own host), its `from()` reaches the data API unchanged. Rewritten before anything else reads the path, so errors
 * take the data API's shape too; a rewritten platform path is marked so that only the data API's routes serve it.
 */
export const postgrestAlias: RequestHandler = (req, res, next) => {
  if (req.url.includes('/rest/v1/')) {
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
