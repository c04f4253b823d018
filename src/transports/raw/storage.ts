import { pipeline } from 'node:stream/promises';
import type { Request, Response, Router } from 'express';
import type { Services } from '../../services.ts';
import { toAppError } from '../../core/invoke.ts';
import { errorsInArea, sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';
import { settleUnreadBody } from './unread-body.ts';

/**
 * The local backend's blob routes: `PUT /blob/storage/{object_id}?op=put&exp=&sig=` receives the bytes,
 * `GET /blob/storage/{object_id}?op=get&exp=&sig=` streams them. Mounted early, before JSON parsing, so the
 * PUT reads the raw request stream. With the S3 backend the URLs point at the bucket and these routes 404.
 */
export const storageRawRoutes: RawRoutes = {
  early: (router: Router, services: Services) => {
    router.put('/blob/storage/:objectId', async (req: Request, res: Response) => {
      errorsInArea(res, 'storage');
      try {
        const out = await services.storage.putBlob(String(req.params.objectId), req.query as Record<string, unknown>, req.headers, req);
        res.status(200).json({ objectId: out.objectId, status: 'ready', size_bytes: out.size_bytes });
      } catch (err) {
        await settleUnreadBody(req, res);
        sendError(res, toAppError(err, req.log, 'storage_blob_put'));
      }
    });

    router.get('/blob/storage/:objectId', async (req: Request, res: Response) => {
      errorsInArea(res, 'storage');
      try {
        const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
        const blob = await services.storage.getBlob(String(req.params.objectId), req.query as Record<string, unknown>, range, req.method === 'HEAD');
        // A download is its app's bandwidth (the signed URL was the app's to hand out; no other gate applies here).
        services.billing.traffic.meterResponse(blob.appId, req.socket, (done) => res.once('close', done));
        res.status(blob.status);
        for (const [name, value] of Object.entries(blob.headers)) res.setHeader(name, value);
        if (!blob.body) {
          res.end();
          return;
        }
        await pipeline(blob.body, res);
      } catch (err) {
        // Mid-stream (typically the client went away): nothing left to answer, and not an error worth logging.
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const appErr = toAppError(err, req.log, 'storage_blob_get');
        if (appErr.code === 'RANGE_NOT_SATISFIABLE') res.setHeader('Content-Range', `bytes */${(appErr.details as { size_bytes: number }).size_bytes}`);
        sendError(res, appErr);
      }
    });
  },
};
