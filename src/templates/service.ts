// Templates and cloning (docs/templates.md): the catalog of templates an account can see (catalog.ts), clones
// running as one job per step (clones.ts, steps.ts), and the templates shipped in the repository (shipped.ts).
import type { BillingGate } from '../billing/gate.ts';
import type { AppsService } from '../apps/service.ts';
import { TemplateCatalog, type CatalogDeps } from './catalog.ts';
import { Clones, type ClonesDeps } from './clones.ts';
import { installShippedTemplates } from './shipped.ts';
import type { CloneView } from './types.ts';

export interface TemplatesServiceDeps extends ClonesDeps, Omit<CatalogDeps, keyof ClonesDeps> {
  apps: AppsService;
  gate: BillingGate;
}

export class TemplatesService {
  readonly catalog: TemplateCatalog;
  readonly clones: Clones;
  readonly #d: TemplatesServiceDeps;

  constructor(deps: TemplatesServiceDeps) {
    this.#d = deps;
    this.catalog = new TemplateCatalog(deps);
    this.clones = new Clones(deps);
  }

  /**
   * Clones a template the account can see into a new app in `region` (default: the default region). The account must
   * be able to write (a soft-locked or suspended one cannot grow through clones); the template is pinned as it is now.
   */
  async clone(accountId: string, templateAppId: string, input: { name: string; region?: string | undefined }): Promise<CloneView> {
    const region = this.#d.apps.region(input.region);
    const { source } = await this.catalog.manifest(accountId, templateAppId);
    await this.#d.gate.check({ id: templateAppId, account_id: accountId, paused_at: null }, 'write');
    return this.clones.request(accountId, source, input.name, region);
  }

  /** Installs the template folders of `dir` whose version is not installed yet (at start, in the background). */
  installShipped(dir: string): Promise<void> {
    return installShippedTemplates(this.#d, dir);
  }
}
