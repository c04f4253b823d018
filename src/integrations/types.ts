// Rows, views and errors of third-party integrations (tables of db/migrations/0019_integrations.ts).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AppsService } from '../apps/service.ts';
import { AppError, errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { IntegrationsVendor } from './vendor-port.ts';

export type IntegrationsDb = Kysely<ControlDatabase>;

/** What the parts of the service share; they exist only when the vendor is configured. */
export interface IntegrationsDeps {
  db: IntegrationsDb;
  vendor: IntegrationsVendor;
  apps: AppsService;
  /** Where the vendor sends the browser back: {baseUrl}/v1/{app_id}/integrations/callback. */
  baseUrl: string;
  log: Logger;
}

// ---- views (the tools' outputs) --------------------------------------------------------------------------

export interface AvailableToolkit {
  toolkit: string;
  displayName: string;
  curated: boolean;
  description: string | null;
  /** Whether this app enabled it (integrations_configure). */
  enabled: boolean;
}

export interface EnabledToolkitView {
  toolkit: string;
  displayName: string;
  /** null: the scopes the vendor manages for the toolkit. */
  scopes: string[] | null;
  createdAt: string;
  updatedAt: string;
}

export interface ConfigView {
  integrations: EnabledToolkitView[];
  /** Origins the owner listed as connect redirect targets, besides appOrigin. */
  redirectOrigins: string[];
  /** The origin of the app's own URL, always a valid redirect target. */
  appOrigin: string;
}

export interface ConnectionView {
  id: string;
  toolkit: string;
  userId: string;
  /** toolkit_disabled: the app disabled the toolkit since; the connection is kept but cannot execute. */
  status: 'active' | 'toolkit_disabled';
  createdAt: string;
}

export interface ToolView {
  name: string;
  toolkit: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Set when the call names an end user: whether they connected the tool's toolkit. */
  connected?: boolean;
}

export interface ExecutionView {
  id: string;
  userId: string;
  toolName: string;
  toolkit: string | null;
  successful: boolean;
  durationMs: number;
  error: string | null;
  createdAt: string;
}

// ---- errors ----------------------------------------------------------------------------------------------

const CONFIGURE = 'integrations_configure (POST /v1/{app_id}/integrations/configure)';
const CONNECT = 'integrations_connect (POST /v1/{app_id}/integrations/connect)';
const EXECUTION_FAILED = 'INTEGRATIONS_EXECUTION_FAILED';

export const integrationErrors = {
  notConfigured: () =>
    new AppError(
      400,
      'INTEGRATIONS_NOT_CONFIGURED',
      'Third-party integrations are not configured on this platform.',
      'The operator sets SVC_INTEGRATIONS_API_KEY (and SVC_INTEGRATIONS_BASE_URL for a vendor other than Composio\'s cloud).',
    ),
  toolkitNotEnabled: (toolkit: string) =>
    new AppError(400, 'INTEGRATIONS_TOOLKIT_NOT_ENABLED', `Toolkit '${toolkit}' is not enabled for this app.`, `Enable it with ${CONFIGURE}; integrations_config lists the enabled ones.`),
  notConnected: (toolkit: string) =>
    new AppError(
      400,
      'INTEGRATIONS_NOT_CONNECTED',
      `This end user has not connected their ${toolkit} account.`,
      `Call ${CONNECT} with { toolkit: '${toolkit}', redirectUrl } and send the user to the returned authUrl; execute again once they are back.`,
    ),
  /** The tool ran and failed, or the vendor refused its arguments: the caller's to fix. */
  toolFailed: (message: string) =>
    new AppError(422, EXECUTION_FAILED, `The tool failed: ${message.slice(0, 1000)}`, "Fix the params as the message says (integrations_tools shows each tool's inputSchema), or reconnect the account."),
  /** The vendor could not run it: outage, network, timeout. */
  executionUnavailable: (why: string) => new AppError(502, EXECUTION_FAILED, `The integration vendor ${why}.`, 'Retry with backoff.'),
  vendorUnavailable: (why: string) => new AppError(502, 'UPSTREAM_ERROR', `The integration vendor ${why}.`, 'Retry with backoff; if it persists, the operator should check SVC_INTEGRATIONS_API_KEY and the vendor.'),
  vendorRejected: (message: string) =>
    new AppError(400, 'UPSTREAM_REJECTED', `The integration vendor refused: ${message.slice(0, 500)}`, 'Fix the request as the vendor says (an unknown toolkit or scope, a toolkit without managed auth).'),
  toolkitNotFound: (toolkit: string) =>
    errors.notFound(`Toolkit '${toolkit}'`, 'Find toolkit slugs with integrations_available (search= searches the whole catalog).'),
  toolNotFound: (tool: string) => errors.notFound(`Tool '${tool}'`, 'integrations_tools lists the tools of the enabled toolkits by name.'),
  connectionNotFound: (id: string) => errors.notFound(`Connection '${id}'`, 'integrations_connections_list lists the connections you may see.'),
  requestNotFound: () =>
    errors.notFound('Connection request (unknown, already used or expired)', `Start again with ${CONNECT}; each authUrl completes once, within an hour.`),
  redirectNotAllowed: (origin: string) =>
    errors.validation(
      `'redirectUrl' is on '${origin.slice(0, 200)}', which is not one of this app's redirect origins; add it with ${CONFIGURE} (redirectOrigins) or use the app's own URL.`,
      [{ path: 'redirectUrl', message: "not on the app's own origin or its redirectOrigins" }],
    ),
  userIdWithToken: () =>
    errors.validation("'userId' is only for keys: an end-user token already names the user.", [{ path: 'userId', message: 'omit it with an end-user token' }]),
  userRequired: () =>
    errors.validation("This route acts for an end user: send their access token, or with a key name them with 'userId' (or 'user_token' over MCP).", [
      { path: 'userId', message: 'required with a platform or service key' },
    ]),
  userTwice: () => errors.validation("Give either 'userId' or 'user_token', not both.", [{ path: 'userId', message: 'not with user_token' }]),
};

export const iso = (d: Date): string => d.toISOString();
