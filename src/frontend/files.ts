// Where a frontend's files live on disk: <SVC_DATA_DIR>/frontend/<app_id>/<deployment_id>/, holding upload.zip
// until the build ends, then site/. Shared by uploads, the build, the deployments and the site lookup.
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

const APP_ID = /^[a-z0-9]{16}$/;
const DEPLOYMENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isAppId = (id: string): boolean => APP_ID.test(id);
export const isDeploymentId = (id: string): boolean => DEPLOYMENT_ID.test(id);

export class FrontendFiles {
  readonly #root: string;

  constructor(dataDir: string) {
    this.#root = path.join(dataDir, 'frontend');
  }

  /** Built from validated ids only, never from user-supplied names. */
  appDir(appId: string): string {
    if (!isAppId(appId)) throw new Error(`not an app id: ${appId}`);
    return path.join(this.#root, appId);
  }

  dir(appId: string, id: string): string {
    if (!isDeploymentId(id)) throw new Error(`not a deployment id: ${id}`);
    return path.join(this.appDir(appId), id);
  }

  zipPath(appId: string, id: string): string {
    return path.join(this.dir(appId, id), 'upload.zip');
  }

  siteDir(appId: string, id: string): string {
    return path.join(this.dir(appId, id), 'site');
  }

  async removeDeployment(appId: string, id: string): Promise<void> {
    await rm(this.dir(appId, id), { recursive: true, force: true });
  }

  /** Everything of a published deployment but its site: the zip, and the temp folders of build runs that died. */
  async removeLeftovers(appId: string, id: string): Promise<void> {
    const dir = this.dir(appId, id);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) if (name !== 'site') await rm(path.join(dir, name), { recursive: true, force: true });
  }

  async removeApp(appId: string): Promise<void> {
    await rm(this.appDir(appId), { recursive: true, force: true });
  }
}
