// GET /console/: the web console (src/console), served by the platform itself. It calls the same public REST routes
// as every client with the session cookie; these routes only hand out its files.
import type { Request, Response, Router } from 'express';
import type { Logger } from 'pino';
import { AppError, errors } from '../../core/errors.ts';
import { CONSOLE_PATH } from '../../console/path.ts';
import { rawQuery } from '../../frontend/serve.ts';
import { consolePolicy, ConsoleSite } from '../../console/site.ts';
import { sendError } from '../rest.ts';
import { ownFileSources, SECURITY_HEADERS } from './approvals.ts';
import type { RawRoutes } from './index.ts';

const unavailable = () => new AppError(503, 'SERVICE_UNAVAILABLE', 'The console did not build.', "The operator finds why in the platform's log ('console not built').");


async function serve(site: ConsoleSite, platformOrigin: string, req: Request, res: Response): Promise<void> {
  const found = await site.lookup(req.path);
  if ('missing' in found) {
    return sendError(res, found.missing === 'console' ? unavailable() : errors.notFound(`Console file '${req.path}'`, `Open ${CONSOLE_PATH}.`));
  }
  const policy = consolePolicy(ownFileSources(req, platformOrigin, CONSOLE_PATH));
  res.set({ ...SECURITY_HEADERS, 'content-security-policy': policy, 'content-type': found.file.type }).send(found.file.bytes);
}

/**
 * Mounting builds the console (an api process starting). `/` of the platform's own host (its base URL's) leads to it
 * too, so that the OpenID Connect sign-in, which lands on `/` (or `/?signin_error=<code>`), ends in the console; any
 * other host (an app's subdomain or custom domain) keeps `/` for its site or its 404.
 */
export const consoleRoutes: RawRoutes = {
  platformHostOnly: true,
  early: (router: Router, services, log: Logger) => {
    const site = new ConsoleSite(log);
    const ownHost = new URL(services.config.baseUrl).host.toLowerCase();
    router.get('/', (req, res, next) => (req.headers.host?.toLowerCase() === ownHost ? res.redirect(302, CONSOLE_PATH + rawQuery(req)) : next()));
    router.use('/console', (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      // Without the slash the page's relative links (main.js, styles.css) would resolve outside /console/.
      if (req.originalUrl.split('?')[0] === '/console') return res.redirect(301, CONSOLE_PATH + rawQuery(req));
      serve(site, services.config.platformOrigin, req, res).catch(next);
    });
  },
};
