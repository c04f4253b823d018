import type { AppsService } from './apps/service.ts';
import type { AppDatabases } from './apps/app-databases.ts';
import type { CatalogCache } from './schema/catalog-cache.ts';
import type { DataService } from './data/service.ts';
import type { KeysService } from './auth/keys.ts';
import type { IdentityService } from './identity/service.ts';
import type { MembersService } from './identity/members.ts';
import type { AuditLog } from './identity/audit.ts';
import type { OidcSignIn } from './identity/oidc.ts';
import type { OAuthGrants } from './identity/oauth.ts';
import type { EndUserTokens } from './auth/end-user-tokens.ts';
import type { EndUsers } from './auth/users.ts';
import type { EndUserMails } from './auth/mail-flows.ts';
import type { AuthSettingsStore } from './auth/settings.ts';
import type { RateLimiter } from './auth/rate-limit.ts';
import type { SuggestionsService } from './platform/suggestions.ts';
import type { HealthService } from './platform/health.ts';
import type { StorageService } from './storage/service.ts';
import type { FrontendService } from './frontend/service.ts';
import type { DomainsService } from './domains/service.ts';
import type { FunctionsService } from './functions/service.ts';
import type { Config } from './config.ts';
import type { Docs } from './platform/docs.ts';
import type { AiGateway } from './ai/gateway.ts';
import type { AiSettingsStore } from './ai/settings.ts';
import type { CreditLedger } from './credits/ledger.ts';
import type { RagService } from './rag/service.ts';
import type { SubstrateService } from './substrate/service.ts';
import type { BillingService } from './billing/service.ts';
import type { MonetizationService } from './monetization/service.ts';
import type { PeopleService } from './people/service.ts';
import type { MeetingsService } from './meetings/service.ts';
import type { IntegrationsService } from './integrations/service.ts';
import type { TemplatesService } from './templates/service.ts';
import type { BranchesService } from './branches/service.ts';
import type { RealtimeService } from './realtime/service.ts';
import type { McpSessions } from './transports/mcp-sessions.ts';
import type { AppChanges } from './apps/changes.ts';
import type { AppAdmission } from './core/invoke.ts';
import { governs, type AnyTool } from './core/define.ts';
import type { Caller } from './core/caller.ts';
import { errors } from './core/errors.ts';
import type { AppRecord } from './apps/types.ts';
import { toolAccess } from './billing/gate.ts';

/** Everything the transports and jobs may reach, built once at start by the composition root (src/composition.ts). */
export interface Services {
  config: Config;
  /** How invoke() admits an app-scoped call: the caller's binding to the app, then its pause and billing status. */
  admission: AppAdmission<AppRecord>;
  apps: AppsService;
  /** Per-app databases and their bounded pools. */
  databases: AppDatabases;
  /** Catalog snapshots of app databases; invalidate after changing an app's schema. */
  catalogs: CatalogCache;
  data: DataService;
  keys: KeysService;
  identity: IdentityService;
  /** An account's members, their roles and invitations. */
  members: MembersService;
  /** The accounts' audit logs; also invoke()'s recorder of audited tools. */
  audit: AuditLog;
  /** People signing in with the configured OpenID Connect provider (start, callback, linking by verified e-mail). */
  oidc: OidcSignIn;
  /** The platform as the OAuth authorization server of /mcp: MCP clients, consents, codes and tokens. */
  oauth: OAuthGrants;
  endUserTokens: EndUserTokens;
  /** End-user accounts and sessions of each app (signup, login, refresh, logout). */
  endUsers: EndUsers;
  /** End users' mailed flows (confirmation, codes and links, recovery, e-mail change) and PKCE codes. */
  endUserMails: EndUserMails;
  /** Each app's end-user auth settings (auth_settings_get/set). */
  authSettings: AuthSettingsStore;
  /** Per-route, per-client limits counted in the control database (shared by every instance). */
  rateLimits: RateLimiter;
  /** MCP sessions' rows, which let any api process serve a session's requests. */
  mcpSessions: McpSessions;
  /** An app's schema or functions changed (heard by every api process). */
  appChanges: AppChanges;
  suggestions: SuggestionsService;
  health: HealthService;
  /** The guide (/llms.txt) and each area's section. */
  docs: Docs;
  /** Hosted frontends: deployments, their build job, site lookup and the frontend environment. */
  frontend: FrontendService;
  /** Custom domains of apps' sites: claims, DNS TXT verification, and the app a request's Host names. */
  domains: DomainsService;
  /** File storage: object rows, quota, signed URLs, the local or S3 backend. */
  storage: StorageService;
  /** Serverless functions: deploy, invoke through the Deno process pool, logs and metrics, cron and websocket triggers. */
  functions: FunctionsService;
  /** The AI gateway: chat and embeddings relayed to the upstream, credits, usage. */
  ai: AiGateway;
  /** Per-app AI settings (ai_configs), the own provider key sealed at rest. */
  aiSettings: AiSettingsStore;
  /** The account credit ledger: grants, reservations and charges (AI now; people search and meetings later). */
  credits: CreditLedger;
  /** RAG collections, documents, ingestion and retrieval, in each app's database (schema svc_rag). */
  rag: RagService;
  /** The substrate: per-user ledger of proposed, approved and executed actions, and the memory they write. */
  substrate: SubstrateService;
  /** Platform billing: plans, meters, account status and its enforcement, the platform's Stripe subscription. */
  billing: BillingService;
  /** Apps charging their own end users through Stripe Connect: catalog, checkouts, subscriptions, orders. */
  monetization: MonetizationService;
  /** People search and enrichment through the provider slots, with its cache, credits and e-mail lookups. */
  people: PeopleService;
  /** Meeting bots through the meetings provider, their webhooks, forwarding and usage. */
  meetings: MeetingsService;
  /** Third-party integrations: enabled toolkits, end users' connected accounts, tool executions and their log. */
  integrations: IntegrationsService;
  /** Apps' realtime channels (realtime-js): broadcast and presence, fanned out across api processes. */
  realtime: RealtimeService;
  /** Templates: the catalog an account can see, clones as one job per step, the templates shipped in templates/. */
  templates: TemplatesService;
  /** Branches of apps, their three-way merges and the protection that sends agents' changes through them. */
  branches: BranchesService;
}

/**
 * The admission invoke() applies to app-scoped tools. A credential reaches only the apps it was issued for (a service
 * key or end-user token its own app, a platform key its account's apps); then a paused app or an account's billing
 * status may refuse the tool, and what passes is the app's activity.
 */
export function appAdmission(apps: AppsService, billing: BillingService): AppAdmission<AppRecord> {
  return {
    resolve: async (appId: string, caller: Caller) => {
      if ((caller.kind === 'service' || caller.kind === 'user') && caller.appId !== appId) throw errors.otherApp();
      if (caller.kind === 'none' && caller.appId !== undefined && caller.appId !== appId) throw errors.otherApp();
      const app = await apps.get(appId);
      if (!app) throw errors.notFound(`App '${appId}'`, 'List your apps with apps_list (GET /apps) to find a valid app_id.');
      if (caller.kind === 'platform' && app.account_id !== caller.accountId) throw errors.otherApp();
      return app;
    },
    admit: async (app: AppRecord, tool: AnyTool, input: Record<string, unknown>, caller: Caller) => {
      // A change of a protected app is a person's (src/apps/protection.ts); refused before anything else is judged.
      if (governs(tool, input)) await apps.guardProtected(app.id, caller, `${tool.name} (${tool.title.toLowerCase()})`);
      await billing.gate.check(app, toolAccess(tool, input));
      billing.traffic.touch(app.id);
    },
  };
}
