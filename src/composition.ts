import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger as WorkerLogger, run as runWorker, type Runner } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Config, PeopleSlotConfig } from './config.ts';
import { SecretBox } from './core/crypto.ts';
import { loadMasterKey } from './core/master-key.ts';
import { appAdmission, type Services } from './services.ts';
import { ensureDatabase, migrateControl, openControlDb } from './db/control.ts';
import { AppDatabases } from './apps/app-databases.ts';
import { AppsService } from './apps/service.ts';
import type { AppPurger } from './apps/types.ts';
import { CatalogCache } from './schema/catalog-cache.ts';
import { DataService } from './data/service.ts';
import { IdentityService } from './identity/service.ts';
import { ensureOwnerClaim } from './identity/invitations.ts';
import { MembersService } from './identity/members.ts';
import { AuditLog } from './identity/audit.ts';
import { OIDC_CALLBACK_PATH, OidcSignIn } from './identity/oidc.ts';
import { OAuthGrants } from './identity/oauth.ts';
import { OpenIdConnectClient } from './adapters/openid-connect.ts';
import { KeysService } from './auth/keys.ts';
import { EndUserTokens } from './auth/end-user-tokens.ts';
import { EndUsers } from './auth/users.ts';
import { RateLimiter } from './auth/rate-limit.ts';
import { SuggestionsService } from './platform/suggestions.ts';
import { HealthService } from './platform/health.ts';
import { FrontendService } from './frontend/service.ts';
import { DomainsService } from './domains/service.ts';
import { DnsTxtLookup } from './adapters/dns.ts';
import { StorageService } from './storage/service.ts';
import { S3Backend } from './adapters/s3.ts';
import { FunctionsService } from './functions/service.ts';
import { AiGateway } from './ai/gateway.ts';
import { AiSettingsStore } from './ai/settings.ts';
import { CreditLedger } from './credits/ledger.ts';
import { OpenAiUpstream } from './adapters/openai.ts';
import { RecallAdapter } from './adapters/recall.ts';
import { ComposioClient } from './adapters/composio.ts';
import { RagService } from './rag/service.ts';
import { SubstrateService } from './substrate/service.ts';
import { BillingService } from './billing/service.ts';
import { PlatformStripe, stripeClient } from './adapters/stripe.ts';
import { SmtpMailer } from './adapters/smtp.ts';
import { EndUserMails } from './auth/mail-flows.ts';
import { AuthSettingsStore } from './auth/settings.ts';
import { MonetizationService } from './monetization/service.ts';
import { ConnectStripe } from './adapters/stripe-connect.ts';
import { PeopleService } from './people/service.ts';
import type { PeopleProvider } from './people/provider.ts';
import { ExaPeople } from './adapters/people-exa.ts';
import { ProxycurlPeople } from './adapters/people-proxycurl.ts';
import { MeetingsService } from './meetings/service.ts';
import { IntegrationsService } from './integrations/service.ts';
import { SubstrateOutbox } from './substrate/outbox.ts';
import { TemplatesService } from './templates/service.ts';
import { BranchesService } from './branches/service.ts';
import { SubstrateStream } from './substrate/stream.ts';
import { attachWebSockets, type WebSocketGateway } from './transports/ws.ts';
import { FunctionsPlatformChannel } from './transports/platform-channel.ts';
import { McpTransport } from './transports/mcp.ts';
import { PgNotices } from './db/notices.ts';
import { RealtimeService } from './realtime/service.ts';
import { AppChanges } from './apps/changes.ts';
import { deriveKey } from './frontend/signing.ts';
import { McpSessions } from './transports/mcp-sessions.ts';
import { createHttpServer } from './transports/http-app.ts';
import { toolAreas, tools } from '../tools/index.ts';
import { createDocs } from './platform/docs.ts';
import { crontab, taskList } from '../workers/index.ts';
import { WorkerLiveness } from './jobs/liveness.ts';

export const LLMS_TXT_PATH = new URL('../llms.txt', import.meta.url);

export interface Platform {
  services: Services;
  /** The listening address when this process serves HTTP. */
  url: string | undefined;
  /** Resolves once the shipped templates are installed (or failed to be; the log says why). */
  shippedTemplates: Promise<void>;
  stop(): Promise<void>;
}

/** Composition root: migrate, build services once, then start the HTTP server and/or the worker per SVC_ROLE. */
export async function startPlatform(config: Config, log: Logger): Promise<Platform> {
  await ensureDatabase(config.databaseUrl, log);
  const control = openControlDb(config.databaseUrl, config.controlPoolSize, config.dbAcquireTimeoutMs);
  // What every api process must hear at once (keys revoked, MCP sessions changed elsewhere, apps' definitions), on one
  // LISTEN connection; a worker never starts it, so it caches nothing on its strength.
  const notices = new PgNotices(config.databaseUrl, log);
  const keys = new KeysService(control.db, notices);
  await migrateControl(control, log, async () => {
    if (config.platformApiKey) await keys.ensureOwnerKey(config.platformApiKey);
    else await keys.ensureFirstAccount(config.dataDir, log);
    await ensureOwnerClaim(control.db, config.dataDir, log);
  });

  const masterKey = loadMasterKey(config.masterKey, config.dataDir, log);
  const box = new SecretBox(masterKey);
  const databases = new AppDatabases({
    clusters: config.regions.clusters,
    defaultRegion: config.regions.defaultRegion,
    regionOf: async (appId) => (await control.db.selectFrom('apps').select('region').where('id', '=', appId).executeTakeFirst())?.region,
    prefix: config.appDbPrefix,
    poolSize: config.appPoolSize,
    budget: config.appPoolBudget,
    acquireTimeoutMs: config.dbAcquireTimeoutMs,
    log,
  });
  const endUserTokens = new EndUserTokens(control.db, box, config.baseUrl);
  const apps = new AppsService({ db: control.db, databases, keys, tokens: endUserTokens, baseUrl: config.baseUrl, baseDomain: config.baseDomain, log });
  const catalogs = new CatalogCache(databases);
  const llmsTxt = readFileSync(LLMS_TXT_PATH, 'utf8');
  const credits = new CreditLedger(control.db, control.pool);
  const aiSettings = new AiSettingsStore(control.db, box);
  const upstream = config.ai.baseUrl ? new OpenAiUpstream({ baseUrl: config.ai.baseUrl, timeoutMs: config.ai.timeoutMs }) : undefined;
  // S3 is a vendor adapter, built here; without one the storage area builds its own local-disk backend.
  const storageBackend = config.storage.backend === 's3' ? new S3Backend(config.storage.s3) : undefined;
  const storage = new StorageService({ db: control.db, config, masterKey, backend: storageBackend, log });
  const stripe = stripeClient(config.billing.stripe);
  // One SMTP adapter for billing's e-mails and people's (verification, password reset): it is each area's mail port.
  const mailer = config.billing.smtp.url ? new SmtpMailer(config.billing.smtp.url, config.billing.smtp.from) : undefined;
  const billing = new BillingService({
    db: control.db,
    credits,
    databases,
    stripe: stripe && new PlatformStripe(stripe),
    proPriceId: config.billing.stripe.proPriceId,
    baseUrl: config.baseUrl,
    idlePauseDays: config.billing.idlePauseDays,
    mailer,
    log,
  });
  // Monthly active users: every end-user token issued or used counts its user for the month.
  endUserTokens.onUse((appId, userId) => billing.traffic.activeUser(appId, userId));
  // The areas' vendor ports (meetings/provider.ts, integrations/vendor-port.ts, people/provider.ts), built here from
  // the configuration.
  const { meetings: meetingsConfig, integrations: integrationsConfig } = config;
  const meetingsProvider =
    meetingsConfig.baseUrl && meetingsConfig.apiKey
      ? new RecallAdapter({ baseUrl: meetingsConfig.baseUrl, apiKey: meetingsConfig.apiKey, timeoutMs: meetingsConfig.timeoutMs })
      : undefined;
  const integrationsVendor = integrationsConfig.apiKey ? new ComposioClient({ baseUrl: integrationsConfig.baseUrl, apiKey: integrationsConfig.apiKey }) : undefined;
  const { slots: peopleSlots, timeoutMs: peopleTimeoutMs } = config.people;
  const peopleProviders = { primary: peopleProvider(peopleSlots.primary, peopleTimeoutMs), secondary: peopleProvider(peopleSlots.secondary, peopleTimeoutMs) };
  const ai = new AiGateway({ db: control.db, ledger: credits, settings: aiSettings, config: config.ai, upstream, log });
  const identity = new IdentityService(control.db, config.identity, { sender: mailer, baseUrl: config.baseUrl, log });
  const endUsers = new EndUsers({
    databases,
    tokens: endUserTokens,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlDays: config.refreshTokenTtlDays,
    log,
  });
  const authSettings = new AuthSettingsStore(control.db, box, mailer !== undefined);
  const oidcConfig = config.identity.oidc;
  // The OpenID Connect port (identity/oidc-port.ts); the provider sends people back to the callback route.
  const oidcProvider = oidcConfig && {
    name: oidcConfig.name,
    client: new OpenIdConnectClient({ ...oidcConfig, redirectUri: config.baseUrl + OIDC_CALLBACK_PATH }),
  };
  const areas: Omit<Services, 'templates' | 'branches'> = {
    config,
    admission: appAdmission(apps, billing),
    // invoke() records the tools that declare `audit` through it, as it admits app calls through `admission`.
    audit: new AuditLog(control.db),
    apps,
    databases,
    catalogs,
    data: new DataService(databases, catalogs, { maxResponseBytes: config.dataMaxResponseBytes }),
    keys,
    identity,
    members: new MembersService({ db: control.db, sender: mailer, baseUrl: config.baseUrl, keys, log }),
    oidc: new OidcSignIn({ db: control.db, identity, signup: config.identity.signup, provider: oidcProvider, log }),
    oauth: new OAuthGrants(control.db, config.oauth),
    endUserTokens,
    endUsers,
    endUserMails: new EndUserMails({
      db: control.db,
      databases,
      endUsers,
      settings: authSettings,
      platformSender: mailer,
      openAppSender: ({ url, address, from }) => new SmtpMailer(url, from, address),
      codeKey: deriveKey(masterKey, 'end-user-mail-codes'),
      hosts: config,
      outboundAllowPrivate: config.outboundAllowPrivate,
      log,
    }),
    authSettings,
    rateLimits: new RateLimiter(control.db),
    mcpSessions: new McpSessions(control.db, notices),
    appChanges: new AppChanges(control.db, notices),
    suggestions: new SuggestionsService(control.db),
    health: new HealthService(control.pool),
    docs: createDocs(llmsTxt, toolAreas),
    frontend: new FrontendService({ db: control.db, box, masterKey, config, log }),
    // The domains area's DNS port (domains/dns-port.ts): node:dns asking SVC_DNS_SERVERS, or the system's resolvers.
    domains: new DomainsService({ db: control.db, dns: new DnsTxtLookup(config.dnsServers), hosts: config, log }),
    storage,
    functions: await FunctionsService.create({ db: control.db, box, config, log }),
    ai,
    aiSettings,
    credits,
    substrate: new SubstrateService(
      control.db,
      new SubstrateOutbox({ db: control.db, box, config, log }),
      new SubstrateStream({ db: control.db, databaseUrl: config.databaseUrl, log }),
    ),
    billing,
    monetization: new MonetizationService({ db: control.db, config, stripe: stripe && new ConnectStripe(stripe), log }),
    people: new PeopleService({ db: control.db, ledger: credits, config, providers: peopleProviders, log }),
    meetings: new MeetingsService({ db: control.db, box, credits, config, provider: meetingsProvider, log }),
    integrations: new IntegrationsService({ db: control.db, apps, config, vendor: integrationsVendor, log }),
    rag: new RagService({ control: control.db, apps, databases, ai, aiSettings, storage, maxFileBytes: config.storage.maxFileBytes, log }),
    realtime: new RealtimeService({
      db: control.db,
      notices,
      verifiers: { keys, endUserTokens },
      tokens: { key: deriveKey(masterKey, 'realtime-tokens'), credentials: keys },
      databases,
      catalogs,
      changes: config.realtime,
      maxSocketsPerApp: config.realtimeMaxSocketsPerApp,
      log,
    }),
  };
  const templates = new TemplatesService({
    ...areas,
    db: control.db,
    box,
    tokens: endUserTokens,
    gate: billing.gate,
    baseUrl: config.baseUrl,
    perAccount: config.templates.clonesPerAccount,
    publicAllowed: config.templates.publicAllowed,
    log,
  });
  const services: Services = {
    ...areas,
    templates,
    branches: new BranchesService({ ...areas, db: control.db, templates, idleDays: config.branchIdleDays, log }),
  };

  // Services that keep app data outside the app database (stored objects, hosted sites).
  const appPurgers: AppPurger[] = [];
  appPurgers.push(services.frontend);
  appPurgers.push(services.storage);
  appPurgers.push(services.functions);
  appPurgers.push(services.integrations);
  // ctx.data and fetch() to the platform's own URL from functions: a transport into the tools, as the functions' port.
  const functionsChannel = new FunctionsPlatformChannel({ services, tools }, config, log);
  services.functions.attach(functionsChannel);

  let server: http.Server | undefined;
  let mcp: McpTransport | undefined;
  let sockets: WebSocketGateway | undefined;
  let url: string | undefined;
  if (config.role !== 'worker') {
    // Every api process LISTENs for substrate changes and fans them out to its own stream sockets.
    await services.substrate.stream.start();
    // Realtime hears the other api processes on the notices' connection.
    services.realtime.start();
    await notices.start();
    billing.traffic.start();
    mcp = new McpTransport(tools, services, log, deriveKey(masterKey, 'mcp-request-state'));
    mcp.start();
    server = createHttpServer({ tools, services, mcp, log });
    sockets = attachWebSockets(server, services, log);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, resolve);
    });
    const { port } = server.address() as AddressInfo;
    url = `http://127.0.0.1:${port}`;
    // The address functions' platform calls are sent to: the listener itself (a wildcard bind answers on loopback).
    const local = ['0.0.0.0', '::', ''].includes(config.host) ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
    functionsChannel.listen(`http://${local}:${port}`);
    log.info({ port, base_url: config.baseUrl }, 'http server listening');
  }

  let runner: Runner | undefined;
  let liveness: WorkerLiveness | undefined;
  if (config.role !== 'api') {
    liveness = new WorkerLiveness({ db: control.db, staleAfterSeconds: config.workerStaleAfterSeconds, log });
    runner = await runWorker({
      pgPool: control.pool,
      taskList: taskList({ ...services, purgers: appPurgers }),
      crontab,
      concurrency: config.workerConcurrency,
      noHandleSignals: true,
      logger: workerLogger(log),
      events: liveness.events,
    });
    liveness.start();
    log.info({ concurrency: config.workerConcurrency }, 'worker running');
  }

  // Templates shipped in the repository: installed in the background, so a start never waits on Deno or a site build.
  const shipped = config.templates.install
    ? services.templates.installShipped(config.templates.dir).catch((err: unknown) => log.error({ err }, 'shipped templates not installed'))
    : Promise.resolve();

  return {
    services,
    url,
    shippedTemplates: shipped,
    stop: async () => {
      await shipped;
      await sockets?.close();
      // What the closed sockets' channels published (their presences leaving) goes out before the connections close.
      await services.realtime.stop();
      await services.substrate.stream.stop();
      await notices.stop();
      if (server) await closeServer(server, mcp!, config.shutdownTimeoutMs);
      await billing.traffic.stop();
      if (runner) await runner.stop();
      await liveness?.stop();
      // Kills every function process and writes the last invocation logs.
      await services.functions.stop();
      // Usage rows (and charges) of AI calls still being recorded: answers being charged, streams that ended.
      await services.ai.settled();
      services.storage.close();
      await databases.close();
      await control.close();
      log.info('stopped');
    },
  };
}

/** Stop accepting, let in-flight requests finish (up to the timeout), then cut what is left. */
async function closeServer(server: http.Server, mcp: McpTransport, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await mcp.close();
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}

/** The adapter of one people slot's configured vendor (SVC_PEOPLE_<SLOT>_KIND); undefined: the slot is empty. */
function peopleProvider(slot: PeopleSlotConfig | undefined, timeoutMs: number): PeopleProvider | undefined {
  if (!slot) return undefined;
  const options = { baseUrl: slot.baseUrl, apiKey: slot.apiKey, timeoutMs };
  return slot.kind === 'exa' ? new ExaPeople(options) : new ProxycurlPeople(options);
}

function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const child = log.child({ worker: scope, ...meta });
    if (level === 'error') child.error(message);
    else if (level === 'warning') child.warn(message);
    else if (level === 'info') child.info(message);
    else child.debug(message);
  });
}
