import type { Request, Response, NextFunction } from 'express';
import type { Services } from '../../services.ts';
import { errors } from '../../core/errors.ts';
import { toAppError } from '../../core/invoke.ts';
import { errorsInArea, sendError, type SubdomainLocals } from '../rest.ts';
import { rawPath, rawQuery, serveSite } from '../../frontend/serve.ts';
import type { RawRoutes } from './index.ts';
import { settleUnreadBody } from './unread-body.ts';
import { admitApp } from './admit.ts';
import { asksForDocument, TENANT_SANDBOX_POLICY } from '../tenant-content.ts';
import { onAnotherAppsHost } from '../app-host.ts';
import { appHostUrl } from '../../apps/hosts.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SITES = /^\/sites\/([^/]*)(\/.*)?$/;
const PINNED = /^\/d\/([0-9a-f-]{36})(\/.*)?$/;

/**
 * Hosted frontends, outside the descriptor registry because their wire is raw bytes:
 * - early (before JSON parsing): the signed zip PUT at /v1/{app_id}/frontend/deployments/{id}/upload, and
 *   the sites at /sites/{app_id}/... (live deployment) and /sites/{app_id}/d/{deployment_id}/... (a kept
 *   READY deployment, pro plans) on the platform's host: a browser opening the live site is sent to the app's own
 *   host; what is served here is sandboxed to an opaque origin (tenant-content.ts); never on another app's host;
 * - fallback (after every API route): the live site on the app's own host (its subdomain or custom domain), its
 *   own origin, so the platform's routes keep priority there.
 */
export const siteRoutes: RawRoutes = {
  early: (router, services) => {
    router.put('/v1/:app_id/frontend/deployments/:id/upload', (req, res) => {
      errorsInArea(res, 'frontend');
      upload(req, res, services).catch((err: unknown) => sendError(res, toAppError(err, req.log, 'frontend_upload')));
    });
    router.use((req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      const m = SITES.exec(rawPath(req));
      if (!m) return next();
      errorsInArea(res, 'frontend');
      res.setHeader('Content-Security-Policy', TENANT_SANDBOX_POLICY);
      sitesPath(req, res, services, m[1]!, m[2] ?? '').catch((err: unknown) => failed(req, res, err));
    });
  },
  fallback: (router, services) => {
    router.use((req, res, next) => {
      const appId = (res.locals as SubdomainLocals).subdomainAppId;
      if (!appId || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
      serveLive(req, res, next, services, appId, rawPath(req)).catch((err: unknown) => failed(req, res, err));
    });
  },
};

async function upload(req: Request, res: Response, services: Services): Promise<void> {
  try {
    const deployment = await services.frontend.receiveUpload({
      appId: String(req.params.app_id),
      deploymentId: String(req.params.id),
      expires: req.query.expires,
      signature: req.query.signature,
      contentType: req.headers['content-type'],
      contentLength: req.headers['content-length'],
      body: req,
    });
    res.status(200).json(deployment);
  } catch (err) {
    await settleUnreadBody(req, res);
    throw err;
  }
}

async function sitesPath(req: Request, res: Response, services: Services, rawApp: string, rest: string): Promise<void> {
  let appId: string;
  try {
    appId = decodeURIComponent(rawApp);
  } catch {
    appId = '';
  }
  const app = await services.apps.get(appId);
  if (app) {
    if (await onAnotherAppsHost(req.headers.host, services, appId)) return sendError(res, noSite(appId));
    // A browser opening the live site is sent to the app's own host, its origin (kept deployments have no other address).
    const home = asksForDocument(req.headers['sec-fetch-dest']) && !PINNED.test(rest) ? appHostUrl(services.config, app.subdomain) : undefined;
    if (home) return res.redirect(308, home + (rest || '/') + rawQuery(req));
    await admitApp(services, app, req, res);
  }
  if (rest === '') {
    res.redirect(301, rawPath(req) + '/' + req.originalUrl.slice(rawPath(req).length));
    return;
  }
  const pinned = PINNED.exec(rest);
  if (pinned && UUID.test(pinned[1]!)) {
    if (pinned[2] === undefined) {
      res.redirect(301, rawPath(req) + '/' + req.originalUrl.slice(rawPath(req).length));
      return;
    }
    const site = await services.frontend.site(appId, pinned[1]!);
    if (!site) return sendError(res, errors.notFound(`Deployment '${pinned[1]}' of app '${appId}' as a site`, 'Only READY deployments that are kept (pro plans) are served at /sites/{app_id}/d/{id}/; see frontend_deploy_list.'));
    return serveSite(req, res, site, pinned[2], { publicEnv: () => services.frontend.publicEnv(appId) });
  }
  const site = await services.frontend.site(appId);
  if (!site) return sendError(res, noSite(appId));
  return serveSite(req, res, site, rest, { publicEnv: () => services.frontend.publicEnv(appId) });
}

async function serveLive(req: Request, res: Response, next: NextFunction, services: Services, appId: string, rest: string): Promise<void> {
  const site = await services.frontend.site(appId);
  if (!site) return next();
  errorsInArea(res, 'frontend');
  const app = await services.apps.get(appId);
  if (app) await admitApp(services, app, req, res);
  return serveSite(req, res, site, rest, { publicEnv: () => services.frontend.publicEnv(appId) });
}

function noSite(appId: string) {
  return errors.notFound(`Live site of app '${appId}'`, 'Deploy a frontend: frontend_deploy_create, PUT the zip to uploadUrl, frontend_deploy_start, then poll until READY.');
}

function failed(req: Request, res: Response, err: unknown): void {
  sendError(res, toAppError(err, req.log, 'frontend_site'));
}
