// An app's hosted site: deployments (GET/POST /v1/{app_id}/frontend/deployments), a zip's upload to the signed URL
// frontend_deploy_create hands out, then start, promote (rollback), cancel, delete; the site's public variables (names read, the set replaced).
import { call, seg } from '../api.ts';
import { putBytes } from './upload.ts';

export const FRAMEWORKS = ['static', 'react-vite', 'nextjs-static', 'other'] as const;
export type Framework = (typeof FRAMEWORKS)[number];
export type DeploymentStatus = 'WAITING' | 'UPLOADING' | 'BUILDING' | 'READY' | 'ERROR' | 'CANCELED';

export interface Deployment {
  id: string;
  framework: Framework;
  status: DeploymentStatus;
  error: string | null;
  size_bytes: number | null;
  file_count: number | null;
  live: boolean;
  /** The site URL when live; the deployment's own URL when READY and its files are kept; null otherwise. */
  url: string | null;
  created_at: string;
  ready_at: string | null;
}

/** A state the deployment will not leave by itself. */
export const settled = (s: DeploymentStatus): boolean => s === 'READY' || s === 'ERROR' || s === 'CANCELED';
/** frontend_deploy_cancel's states. */
export const cancellable = (s: DeploymentStatus): boolean => s === 'WAITING' || s === 'UPLOADING' || s === 'BUILDING';
/** frontend_deploy_promote takes a READY deployment whose files are kept: its `url` is null once they are gone. */
export const canRollBackTo = (d: Deployment): boolean => d.status === 'READY' && !d.live && d.url !== null;

const base = (appId: string) => `/v1/${seg(appId)}/frontend/deployments`;
const one = (appId: string, id: string) => `${base(appId)}/${seg(id)}`;

export const sites = {
  list: async (appId: string) => (await call<{ deployments: Deployment[] }>('GET', `${base(appId)}?limit=100`)).deployments,
  get: (appId: string, id: string) => call<Deployment>('GET', one(appId, id)),
  /** Create, PUT the zip to the signed URL, start the build: the deployment, BUILDING. */
  deployZip: async (appId: string, framework: Framework, zip: Blob): Promise<Deployment> => {
    const created = await call<{ id: string; uploadUrl: string }>('POST', base(appId), { framework });
    // A refused zip leaves no WAITING deployment behind.
    await putBytes(created.uploadUrl, zip, 'application/zip').catch(async (err: unknown) => {
      await call('POST', `${one(appId, created.id)}/cancel`).catch(() => {});
      throw err;
    });
    return call<Deployment>('POST', `${one(appId, created.id)}/start`);
  },
  promote: (appId: string, id: string) => call<Deployment>('POST', `${one(appId, id)}/promote`),
  cancel: (appId: string, id: string) => call<Deployment>('POST', `${one(appId, id)}/cancel`),
  remove: (appId: string, id: string) => call('DELETE', one(appId, id)),
  envKeys: async (appId: string) => (await call<{ keys: string[] }>('GET', `/v1/${seg(appId)}/frontend/env`)).keys,
  /** Replaces the whole set ({} clears it). */
  setEnv: (appId: string, env: Record<string, string>) => call<{ keys: string[] }>('PUT', `/v1/${seg(appId)}/frontend/env`, env),
};
