// Third-party integrations through the vendor's toolkits (the port vendor-port.ts, which src/adapters/composio.ts
// implements and the composition root passes in): the toolkits an app enables (toolkits.ts), its end users'
// connected accounts (connections.ts), tool executions and their log (executions.ts). Tables:
// db/migrations/0019_integrations.ts. Without SVC_INTEGRATIONS_API_KEY there is no vendor, and every part answers
// 400 INTEGRATIONS_NOT_CONFIGURED.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AppsService } from '../apps/service.ts';
import type { AppPurger } from '../apps/types.ts';
import type { Config } from '../config.ts';
import type { ControlDatabase } from '../db/types.ts';
import { Connections } from './connections.ts';
import { Executions } from './executions.ts';
import { ToolCatalog } from './tool-catalog.ts';
import { Toolkits } from './toolkits.ts';
import { integrationErrors, type IntegrationsDb } from './types.ts';
import type { IntegrationsVendor } from './vendor-port.ts';

export interface IntegrationsServiceDeps {
  db: Kysely<ControlDatabase>;
  apps: AppsService;
  config: Config;
  /** The vendor the composition root built from the configuration (undefined: SVC_INTEGRATIONS_API_KEY unset). */
  vendor: IntegrationsVendor | undefined;
  log: Logger;
}

interface Parts {
  toolkits: Toolkits;
  connections: Connections;
  catalog: ToolCatalog;
  executions: Executions;
}

/** Finished connection requests and old execution rows are kept this long (the integrations_prune job deletes them). */
export const PRUNE_INTEGRATIONS_SQL = `
  delete from integration_connection_requests where expires_at < now() - interval '1 day';
  delete from integration_executions where created_at < now() - interval '90 days';
`;

export class IntegrationsService implements AppPurger {
  readonly #parts: Parts | undefined;
  readonly #db: IntegrationsDb;

  constructor({ db, apps, config, vendor, log }: IntegrationsServiceDeps) {
    this.#db = db;
    if (!vendor) return;
    const deps = { db: this.#db, vendor, apps, baseUrl: config.baseUrl, log };
    const toolkits = new Toolkits(deps);
    const connections = new Connections(deps, toolkits);
    const catalog = new ToolCatalog(vendor);
    this.#parts = { toolkits, connections, catalog, executions: new Executions(deps, { toolkits, connections, catalog }) };
  }

  /** Enabled toolkits, redirect origins, the catalog. Throws 400 INTEGRATIONS_NOT_CONFIGURED without a vendor. */
  get toolkits(): Toolkits {
    return this.#ready().toolkits;
  }

  /** End users' connections. Throws 400 INTEGRATIONS_NOT_CONFIGURED without a vendor. */
  get connections(): Connections {
    return this.#ready().connections;
  }

  /** The vendor's tools per toolkit. Throws 400 INTEGRATIONS_NOT_CONFIGURED without a vendor. */
  get catalog(): ToolCatalog {
    return this.#ready().catalog;
  }

  /** Tool executions and their log. Throws 400 INTEGRATIONS_NOT_CONFIGURED without a vendor. */
  get executions(): Executions {
    return this.#ready().executions;
  }

  /**
   * A deleted app's connections (kept past the app row for this) are revoked at the vendor; without a vendor there is
   * nothing to revoke them with, and they are only forgotten.
   */
  async purgeApp(appId: string): Promise<void> {
    if (this.#parts) await this.#parts.connections.purgeApp(appId);
    else await this.#db.deleteFrom('integration_connections').where('app_id', '=', appId).execute();
  }

  #ready(): Parts {
    if (!this.#parts) throw integrationErrors.notConfigured();
    return this.#parts;
  }
}
