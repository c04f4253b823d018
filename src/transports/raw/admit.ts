import type { Request, Response } from 'express';
import type { Services } from '../../services.ts';
import type { AppRecord } from '../../apps/types.ts';

/**
 * For the raw routes that serve an app (function invocations, sites), what invoke() does for tools: a paused app or
 * a suspended account is refused (throws), and what passes is the app's activity and bandwidth.
 */
export async function admitApp(services: Services, app: AppRecord, req: Request, res: Response): Promise<void> {
  await services.billing.gate.check(app, 'read');
  services.billing.traffic.touch(app.id);
  services.billing.traffic.meterResponse(app.id, req.socket, (done) => res.once('close', done));
}
