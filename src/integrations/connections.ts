// End users' connected accounts. connect() asks the vendor for a hosted connect link whose callback carries a
// single-use state token; the vendor sends the browser to that callback once the OAuth dance is over, and complete()
// records the connection (after asking the vendor, never trusting the callback's query) and sends the browser on to
// the app's redirectUrl. Vendor user ids are namespaced per app, so an end user of app A can never act as one of B.
import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { AppRecord } from '../apps/types.ts';
import { hashKey } from '../core/crypto.ts';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { checkRedirect, parseRedirectUrl, withOutcome } from './redirects.ts';
import type { Toolkits } from './toolkits.ts';
import { integrationErrors, iso, type ConnectionView, type IntegrationsDeps } from './types.ts';
import type { VendorConnectedAccount } from './vendor-port.ts';
import { askVendor } from './vendor.ts';

type RequestRow = Selectable<ControlDatabase['integration_connection_requests']>;
export type ConnectionRow = Selectable<ControlDatabase['integration_connections']>;

/** How long a connect link may wait for its callback (the vendor's own link expiry, when sooner, wins). */
const REQUEST_TTL_MS = 60 * 60_000;

/** The id the vendor knows an end user by: theirs within the app, prefixed with the app (app ids contain no ':'). */
export function vendorUserId(appId: string, userId: string): string {
  return `${appId}:${userId}`;
}

export class Connections {
  readonly #d: IntegrationsDeps;
  readonly #toolkits: Toolkits;

  constructor(deps: IntegrationsDeps, toolkits: Toolkits) {
    this.#d = deps;
    this.#toolkits = toolkits;
  }

  /** A hosted connect link for the user; the browser comes back to redirectUrl (which must be allowed) when done. */
  async connect(app: AppRecord, userId: string, input: { toolkit: string; redirectUrl: string }): Promise<{ authUrl: string; connectionRequestId: string }> {
    const enabled = await this.#toolkits.requireEnabled(app.id, input.toolkit);
    await this.#checkRedirect(app, parseRedirectUrl(input.redirectUrl));
    const state = randomBytes(32).toString('base64url');
    const callbackUrl = `${this.#d.baseUrl}/v1/${app.id}/integrations/callback?state=${state}`;
    const link = await askVendor(() =>
      this.#d.vendor.createConnectLink({ authConfigId: enabled.auth_config_id, userId: vendorUserId(app.id, userId), callbackUrl }),
    );
    const id = randomUUID();
    const ttlEnd = Date.now() + REQUEST_TTL_MS;
    await this.#d.db
      .insertInto('integration_connection_requests')
      .values({
        id,
        state_hash: hashKey(state),
        app_id: app.id,
        user_id: userId,
        toolkit: input.toolkit,
        redirect_url: input.redirectUrl,
        vendor_account_id: link.connectedAccountId,
        expires_at: new Date(Math.min(ttlEnd, link.expiresAt?.getTime() ?? ttlEnd)),
      })
      .execute();
    return { authUrl: link.redirectUrl, connectionRequestId: id };
  }

  /**
   * The public callback: the raw query of the vendor's redirect. Only `state` is read from it; whether the user
   * connected is asked of the vendor. Returns where to send the browser: the request's redirectUrl with status
   * (success or failed), toolkit, connectionRequestId, and connectionId or error.
   */
  async complete(app: AppRecord, query: string): Promise<string> {
    const state = new URLSearchParams(query).get('state');
    if (!state) throw errors.validation("The callback has no 'state' parameter.", [{ path: 'state', message: 'required' }]);
    const request = await this.#d.db
      .selectFrom('integration_connection_requests')
      .selectAll()
      .where('state_hash', '=', hashKey(state))
      .where('app_id', '=', app.id)
      .executeTakeFirst();
    if (!request || request.status !== 'pending' || request.expires_at.getTime() <= Date.now()) throw integrationErrors.requestNotFound();
    // The owner may have withdrawn the origin since the link was made.
    await this.#checkRedirect(app, new URL(request.redirect_url));
    const account = await askVendor(() => this.#d.vendor.getConnectedAccount(request.vendor_account_id));
    const base = { toolkit: request.toolkit, connectionRequestId: request.id };
    if (account?.status === 'ACTIVE') {
      const connectionId = await this.#record(request);
      return withOutcome(request.redirect_url, { status: 'success', ...base, connectionId });
    }
    await this.#fail(request.id);
    return withOutcome(request.redirect_url, { status: 'failed', ...base, error: failureOf(account) });
  }

  /** The user's connections, or (null: a key naming no user) every connection of the app. */
  async list(appId: string, userId: string | null): Promise<ConnectionView[]> {
    let query = this.#d.db
      .selectFrom('integration_connections as c')
      .leftJoin('integration_toolkits as t', (j) => j.onRef('t.app_id', '=', 'c.app_id').onRef('t.toolkit', '=', 'c.toolkit'))
      .select(['c.id', 'c.toolkit', 'c.user_id', 'c.created_at', 't.toolkit as enabled_toolkit'])
      .where('c.app_id', '=', appId);
    if (userId !== null) query = query.where('c.user_id', '=', userId);
    const rows = await query.orderBy('c.created_at').orderBy('c.id').execute();
    return rows.map((r) => ({ id: r.id, toolkit: r.toolkit, userId: r.user_id, status: r.enabled_toolkit ? 'active' : 'toolkit_disabled', createdAt: iso(r.created_at) }));
  }

  /** Revokes the account at the vendor, then forgets it; a user reaches only their own (another's is 404). */
  async remove(appId: string, userId: string | null, id: string): Promise<void> {
    let query = this.#d.db.selectFrom('integration_connections').selectAll().where('app_id', '=', appId).where('id', '=', id);
    if (userId !== null) query = query.where('user_id', '=', userId);
    const row = await query.executeTakeFirst();
    if (!row) throw integrationErrors.connectionNotFound(id);
    await askVendor(() => this.#d.vendor.deleteConnectedAccount(row.vendor_account_id));
    await this.#d.db.deleteFrom('integration_connections').where('id', '=', id).execute();
  }

  /** The user's connection for the toolkit, or 400 INTEGRATIONS_NOT_CONNECTED pointing to connect. */
  async activeFor(appId: string, userId: string, toolkit: string): Promise<ConnectionRow> {
    const row = await this.#d.db
      .selectFrom('integration_connections')
      .selectAll()
      .where('app_id', '=', appId)
      .where('user_id', '=', userId)
      .where('toolkit', '=', toolkit)
      .executeTakeFirst();
    if (!row) throw integrationErrors.notConnected(toolkit);
    return row;
  }

  /** Revokes every account of a deleted app at the vendor, then forgets it; a failure throws, so the job retries. */
  async purgeApp(appId: string): Promise<void> {
    const rows = await this.#d.db.selectFrom('integration_connections').select(['id', 'vendor_account_id']).where('app_id', '=', appId).execute();
    for (const row of rows) {
      await this.#d.vendor.deleteConnectedAccount(row.vendor_account_id);
      await this.#d.db.deleteFrom('integration_connections').where('id', '=', row.id).execute();
    }
  }

  async connectedToolkits(appId: string, userId: string): Promise<Set<string>> {
    const rows = await this.#d.db.selectFrom('integration_connections').select('toolkit').where('app_id', '=', appId).where('user_id', '=', userId).execute();
    return new Set(rows.map((r) => r.toolkit));
  }

  async #checkRedirect(app: AppRecord, url: URL): Promise<void> {
    checkRedirect(url, this.#toolkits.appOrigin(app), await this.#toolkits.redirectOrigins(app.id));
  }

  /**
   * Claims the request (once: a replayed callback finds it finished) and makes its account the user's connection
   * for the toolkit; an account it replaces is revoked at the vendor afterwards.
   */
  async #record(request: RequestRow): Promise<string> {
    const id = randomUUID();
    const replaced = await this.#d.db.transaction().execute(async (tx) => {
      const claimed = await tx
        .updateTable('integration_connection_requests')
        .set({ status: 'completed', connection_id: id, finished_at: sql`now()` })
        .where('id', '=', request.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (claimed.numUpdatedRows === 0n) throw integrationErrors.requestNotFound();
      const previous = await tx
        .deleteFrom('integration_connections')
        .where('app_id', '=', request.app_id)
        .where('user_id', '=', request.user_id)
        .where('toolkit', '=', request.toolkit)
        .returning('vendor_account_id')
        .executeTakeFirst();
      await tx
        .insertInto('integration_connections')
        .values({ id, app_id: request.app_id, user_id: request.user_id, toolkit: request.toolkit, vendor_account_id: request.vendor_account_id })
        .execute();
      return previous?.vendor_account_id;
    });
    if (replaced && replaced !== request.vendor_account_id) this.#revokeQuietly(replaced);
    return id;
  }

  async #fail(id: string): Promise<void> {
    await this.#d.db
      .updateTable('integration_connection_requests')
      .set({ status: 'failed', finished_at: sql`now()` })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  }

  /** The replaced account is no longer reachable through the platform; a failure to revoke it only leaves it idle. */
  #revokeQuietly(vendorAccountId: string): void {
    this.#d.vendor.deleteConnectedAccount(vendorAccountId).catch((err: unknown) =>
      this.#d.log.warn({ err, vendor_account_id: vendorAccountId }, 'revoking a replaced integration account failed'),
    );
  }
}

/** Why a connection did not complete, as the app's redirectUrl receives it in `error`. */
function failureOf(account: VendorConnectedAccount | null): string {
  if (!account) return 'not_found';
  return (account.statusReason ?? account.status.toLowerCase()).slice(0, 200);
}
