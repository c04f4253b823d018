// The deployment record: reading and locking a deployment row (joined with its app's subdomain), its public
// view, and the errors every part answers about a deployment that is missing or in the wrong state.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Config } from '../config.ts';
import { AppError, errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { siteUrl } from './sites.ts';
import type { DeploymentStatus, DeploymentView } from './types.ts';

export type FrontendDb = Kysely<ControlDatabase>;
export type FrontendTx = Transaction<ControlDatabase>;

/** A deployment row joined with its app's subdomain. */
export type DeploymentRow = Selectable<ControlDatabase['frontend_deployments']> & Pick<Selectable<ControlDatabase['apps']>, 'subdomain'>;

export function stateError(status: DeploymentStatus, message: string, remediation: string): AppError {
  return new AppError(409, 'INVALID_DEPLOYMENT_STATE', message, remediation, { status });
}

export function notFound(id: string): AppError {
  return errors.notFound(`Frontend deployment '${id}'`, 'List the deployments with frontend_deploy_list (GET /v1/{app_id}/frontend/deployments).');
}

export class DeploymentRecords {
  readonly #db: FrontendDb;

  constructor(deps: { db: FrontendDb }) {
    this.#db = deps.db;
  }

  select(db: FrontendDb | FrontendTx = this.#db) {
    return db
      .selectFrom('frontend_deployments as d')
      .innerJoin('apps as a', 'a.id', 'd.app_id')
      .selectAll('d')
      .select('a.subdomain');
  }

  /** The deployment of that app, or 404. */
  async row(appId: string, id: string): Promise<DeploymentRow> {
    const row = await this.select().where('d.id', '=', id).where('d.app_id', '=', appId).executeTakeFirst();
    if (!row) throw notFound(id);
    return row;
  }

  /** Locks the deployment row for the rest of the transaction. */
  async lock(tx: FrontendTx, appId: string, id: string): Promise<DeploymentRow | undefined> {
    return this.select(tx).where('d.id', '=', id).where('d.app_id', '=', appId).forUpdate('d').executeTakeFirst();
  }

  /** Locks the deployment row for the rest of the transaction, or 404. */
  async locked(tx: FrontendTx, appId: string, id: string): Promise<DeploymentRow> {
    const row = await this.lock(tx, appId, id);
    if (!row) throw notFound(id);
    return row;
  }
}

export function deploymentView(row: DeploymentRow, config: Config): DeploymentView {
  const num = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: row.id,
    app_id: row.app_id,
    framework: row.framework,
    status: row.status,
    error: row.error,
    size_bytes: num(row.size_bytes),
    unzipped_bytes: num(row.unzipped_bytes),
    file_count: row.file_count,
    live: row.live,
    url: row.live ? siteUrl(config, row.app_id, row.subdomain) : row.has_site ? `${config.baseUrl}/sites/${row.app_id}/d/${row.id}/` : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    uploaded_at: row.uploaded_at?.toISOString() ?? null,
    ready_at: row.ready_at?.toISOString() ?? null,
  };
}
