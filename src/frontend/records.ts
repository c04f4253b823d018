// The deployment record: reading and locking a deployment row (joined with its app's subdomain), its public
// view, and the errors every part answers about a deployment that is missing or in the wrong state.
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.ts';
import { AppError, errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { siteUrl } from './sites.ts';
import type { DeploymentStatus, DeploymentView, Framework } from './types.ts';

export type FrontendDb = Kysely<ControlDatabase>;
export type FrontendTx = Transaction<ControlDatabase>;

/** A deployment row joined with its app's subdomain (bigint columns arrive as strings from pg). */
export interface DeploymentRow {
  id: string;
  app_id: string;
  framework: Framework;
  status: DeploymentStatus;
  error: string | null;
  size_bytes: string | null;
  unzipped_bytes: string | null;
  file_count: number | null;
  live: boolean;
  has_site: boolean;
  upload_expires_at: Date;
  created_at: Date;
  updated_at: Date;
  uploaded_at: Date | null;
  ready_at: Date | null;
  subdomain: string;
}

export function stateError(status: DeploymentStatus, message: string, remediation: string): AppError {
  return new AppError(409, 'INVALID_DEPLOYMENT_STATE', message, remediation, { status });
}

export function notFound(id: string): AppError {
  return errors.notFound(`Frontend deployment '${id}'`, 'List the deployments with frontend_deploy_list (GET /v1/{app_id}/frontend/deployments).');
}

export class DeploymentRecords {
  readonly #db: FrontendDb;
  readonly #config: Config;

  constructor(deps: { db: FrontendDb; config: Config }) {
    this.#db = deps.db;
    this.#config = deps.config;
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
    return row as DeploymentRow;
  }

  /** Locks the deployment row for the rest of the transaction. */
  async lock(tx: FrontendTx, appId: string, id: string): Promise<DeploymentRow | undefined> {
    const row = await this.select(tx).where('d.id', '=', id).where('d.app_id', '=', appId).forUpdate('d').executeTakeFirst();
    return row as DeploymentRow | undefined;
  }

  /** Locks the deployment row for the rest of the transaction, or 404. */
  async locked(tx: FrontendTx, appId: string, id: string): Promise<DeploymentRow> {
    const row = await this.lock(tx, appId, id);
    if (!row) throw notFound(id);
    return row;
  }

  view(row: DeploymentRow): DeploymentView {
    const { baseUrl } = this.#config;
    const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
    const num = (v: string | number | null) => (v === null ? null : Number(v));
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
      url: row.live ? siteUrl(this.#config, row.app_id, row.subdomain) : row.has_site ? `${baseUrl}/sites/${row.app_id}/d/${row.id}/` : null,
      created_at: iso(row.created_at)!,
      updated_at: iso(row.updated_at)!,
      uploaded_at: iso(row.uploaded_at),
      ready_at: iso(row.ready_at),
    };
  }
}
