// The only module that reads process.env: everything else receives this frozen object. The environment's schema and
// the Config it builds live here; parsers of what a variable holds (price tables, routing, origin lists) live in
// src/config-values.ts, and their types are exported from here too so that callers import config from one place.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  commaList,
  invalidEnvironment,
  parseDnsServers,
  parseRegions,
  REGION_NAME,
  type Regions,
  parseMcpOrigins,
  parseModelPrice,
  parseModelPrices,
  parsePeoplePrices,
  parsePeopleRouting,
  withoutTrailingSlash,
  loopbackAppsDomain,
  type McpOrigins,
  type ModelPrice,
  type PeoplePrices,
  type PeopleRouting,
  type PeopleSlot,
  type PeopleSlotConfig,
} from './config-values.ts';

export { ConfigError, PEOPLE_ROUTES, PEOPLE_SLOTS } from './config-values.ts';
export type { McpOrigins, ModelPrice, PeoplePrice, PeoplePrices, PeopleRoute, PeopleRouting, PeopleSlot, PeopleSlotConfig, Regions } from './config-values.ts';

/** The repository's templates/ folder (templates shipped with the platform). */
const SHIPPED_TEMPLATES_DIR = fileURLToPath(new URL('../templates/', import.meta.url));

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const EnvSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/svc'),
  SVC_APP_DB_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,29}$/, 'lowercase letters, digits and underscores, at most 30 characters')
    .default('svc_app_'),
  SVC_APP_DATABASE_URL: optionalString,
  // The region of SVC_APP_DATABASE_URL's cluster, and the other regions apps may be placed in (name=postgres://...).
  SVC_DEFAULT_REGION: z.string().regex(REGION_NAME, 'lowercase letters, digits and dashes, starting with a letter').default('local'),
  SVC_REGIONS: z.string().default(''),
  // Templates (src/templates/): whether accounts may publish templates every account sees; clones in progress per account.
  SVC_TEMPLATES_PUBLIC: z.enum(['true', 'false']).default('false'),
  SVC_CLONES_PER_ACCOUNT: z.coerce.number().int().min(1).max(100).default(3),
  SVC_BRANCH_IDLE_DAYS: z.coerce.number().int().min(1).max(365).default(7),
  // The shipped templates' folder (one sub-folder per template) and whether a start installs them.
  SVC_TEMPLATES_DIR: z.string().default(''),
  SVC_TEMPLATES_INSTALL: z.enum(['true', 'false']).default('true'),
  SVC_PLATFORM_API_KEY: optionalString.pipe(
    z.string().regex(/^svc_pk_[A-Za-z0-9_-]{16,200}$/, 'must look like svc_pk_<at least 16 url-safe characters>').optional(),
  ),
  SVC_DATA_DIR: z.string().default('./.data'),
  SVC_MASTER_KEY: optionalString,
  SVC_BASE_URL: optionalString,
  SVC_BASE_DOMAIN: optionalString.pipe(
    z.string().regex(/^[a-z0-9.-]+(:[0-9]+)?$/i, 'a host name such as apps.example.com').optional(),
  ),
  // DNS servers that check custom domains' TXT records (comma-separated ip or ip:port, [ipv6]:port); empty: the system's.
  SVC_DNS_SERVERS: z.string().default(''),
  // Web origins (comma-separated, e.g. https://app.example.com) whose pages may call /mcp; unset: loopback origins on
  // any port. The origin of SVC_BASE_URL is always allowed; `*` allows every origin. Requests without Origin always pass.
  SVC_MCP_ALLOWED_ORIGINS: optionalString,
  SVC_ROLE: z.enum(['all', 'api', 'worker']).default('all'),
  // Proxy hops in front of the platform whose X-Forwarded-For is trusted (0: use the TCP peer address).
  SVC_TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  SVC_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i).default('1mb'),
  SVC_APP_POOL_SIZE: positiveInt.default(5),
  SVC_APP_POOL_BUDGET: positiveInt.default(50),
  SVC_CONTROL_POOL_SIZE: positiveInt.default(10),
  SVC_DB_ACQUIRE_TIMEOUT_MS: positiveInt.default(5000),
  SVC_DATA_MAX_RESPONSE_BYTES: positiveInt.min(1024).max(256 * 1024 * 1024).default(16 * 1024 * 1024),
  SVC_WORKER_CONCURRENCY: positiveInt.default(4),
  // A worker whose heartbeat stopped this long ago is gone: its job locks are released so the jobs run again.
  SVC_WORKER_STALE_AFTER_SECONDS: positiveInt.max(4 * 3600).default(60),
  SVC_SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
  SVC_ACCESS_TOKEN_TTL_SECONDS: positiveInt.min(60).max(86_400).default(900),
  SVC_REFRESH_TOKEN_TTL_DAYS: positiveInt.max(365).default(30),
  SVC_AUTH_RATE_LIMIT_PER_MINUTE: positiveInt.default(10),
  SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE: positiveInt.default(60),
  // Verification and password reset e-mails to one address per minute: lower than the routes' own limit, so that no
  // one can flood a mailbox (or the mail server's reputation) through the platform.
  SVC_PERSON_MAIL_RATE_LIMIT_PER_MINUTE: positiveInt.max(60).default(3),
  SVC_STORAGE_BACKEND: z.enum(['local', 's3']).default('local'),
  SVC_S3_ENDPOINT: optionalString,
  SVC_S3_REGION: z.string().default('us-east-1'),
  SVC_S3_BUCKET: optionalString,
  SVC_S3_ACCESS_KEY_ID: optionalString,
  SVC_S3_SECRET_ACCESS_KEY: optionalString,
  SVC_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  SVC_STORAGE_MAX_FILE_BYTES: positiveInt.default(10 * 1024 * 1024),
  SVC_STORAGE_MAX_APP_BYTES: positiveInt.default(1024 * 1024 * 1024),
  // Comma-separated MIME types (`image/*` wildcards allowed); empty allows every type.
  SVC_STORAGE_ALLOWED_CONTENT_TYPES: z.string().default(''),
  // What one end user may hold reserved in pending uploads at once: a count, and a percentage of the app's total.
  SVC_STORAGE_USER_PENDING_UPLOADS: positiveInt.default(20),
  SVC_STORAGE_USER_PENDING_PERCENT: positiveInt.max(100).default(10),
  // postgres_changes: the pause between reads of an app's captured changes that found none, and how long changes are
  // kept for readers that fall behind.
  SVC_REALTIME_POLL_MS: positiveInt.min(5).max(1000).default(25),
  SVC_REALTIME_RETENTION_SECONDS: positiveInt.min(90).max(3600).default(120),
  // Realtime sockets one app may hold open on one api process: one tenant's clients cannot take every connection.
  SVC_REALTIME_MAX_SOCKETS_PER_APP: positiveInt.max(1_000_000).default(5000),
  // A direct upload (storage-js) that sends nothing for this long is given up (408), its reservation released.
  SVC_STORAGE_UPLOAD_IDLE_SECONDS: positiveInt.max(3600).default(30),
  SVC_FRONTEND_MAX_ZIP_BYTES: positiveInt.default(100 * 1024 * 1024),
  SVC_FRONTEND_MAX_UNZIPPED_BYTES: positiveInt.default(500 * 1024 * 1024),
  SVC_FRONTEND_MAX_FILES: positiveInt.default(10_000),
  SVC_FRONTEND_MAX_COMPRESSION_RATIO: positiveInt.default(100),
  // Functions (src/functions/): Deno binary (default: from the npm package @deno/linux-x64-glibc or `deno`), process pool, limits, network deny list.
  SVC_DENO_PATH: optionalString,
  SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION: positiveInt.max(64).default(2),
  SVC_FUNCTIONS_MAX_PROCESSES: positiveInt.max(4096).default(16),
  // One app's share of those processes (default: half) and of requests waiting for one (default: share x concurrency).
  SVC_FUNCTIONS_MAX_PROCESSES_PER_APP: positiveInt.max(4096).optional(),
  SVC_FUNCTIONS_MAX_WAITING_PER_APP: positiveInt.optional(),
  // CPU a function process may use: this many cores while it serves requests, and this much CPU time (ms) beyond that.
  SVC_FUNCTIONS_CPU_CORES: positiveInt.max(256).default(2),
  SVC_FUNCTIONS_CPU_GRACE_MS: positiveInt.default(2000),
  SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: positiveInt.max(256).default(16),
  SVC_FUNCTIONS_IDLE_MS: positiveInt.default(300_000),
  SVC_FUNCTIONS_START_TIMEOUT_MS: positiveInt.default(15_000),
  SVC_FUNCTIONS_QUEUE_TIMEOUT_MS: positiveInt.default(30_000),
  SVC_FUNCTIONS_LOG_RETENTION: positiveInt.default(1000),
  SVC_FUNCTIONS_MAX_BODY_BYTES: positiveInt.default(6 * 1024 * 1024),
  SVC_FUNCTIONS_RSS_HEADROOM_MB: positiveInt.default(128),
  // Comma-separated hosts, addresses or IPv4 CIDR ranges functions may not reach, beyond the built-in list.
  SVC_FUNCTIONS_DENY_NET: z.string().default(''),
  SVC_FUNCTIONS_ALLOW_PRIVATE_NET: z.enum(['true', 'false']).default('false'),
  // AI gateway (src/ai/): an OpenAI-compatible upstream (OpenRouter-style); unset base URL: AI routes answer 503.
  SVC_AI_BASE_URL: optionalString.pipe(z.string().url().optional()),
  SVC_AI_API_KEY: optionalString,
  SVC_AI_TIMEOUT_MS: positiveInt.max(600_000).default(120_000),
  // USD per million tokens by model, JSON: {"openai/gpt-4o-mini":{"input":0.15,"output":0.6}}; used when the upstream
  // reports no cost. Models not listed cost SVC_AI_DEFAULT_PRICE ("input,output" USD per million tokens).
  SVC_AI_PRICES: z.string().default('{}'),
  SVC_AI_DEFAULT_PRICE: z
    .string()
    .regex(/^\d+(\.\d+)?,\d+(\.\d+)?$/, 'two numbers "input,output", USD per million tokens')
    .default('2.5,10'),
  // User-supplied outbound URLs (outbox webhooks, ...) that resolve to loopback, link-local or private addresses are
  // refused unless this is true (tests, receivers on a private network).
  SVC_OUTBOUND_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  // Substrate outbox deliveries: attempts (exponential backoff between them) before a delivery is dead, and the time
  // one attempt may take.
  SVC_OUTBOX_MAX_ATTEMPTS: positiveInt.max(25).default(8),
  SVC_OUTBOX_TIMEOUT_MS: positiveInt.max(120_000).default(10_000),
  // Stripe: the platform's own billing (checkout, portal, its webhook) and apps' monetization (Connect). Without a
  // secret key the routes that need Stripe answer 503 STRIPE_NOT_CONFIGURED; plans, meters and enforcement still work.
  SVC_STRIPE_SECRET_KEY: optionalString,
  // Where the stripe SDK sends its requests (https://api.stripe.com when unset): a fake or stripe-mock in tests.
  SVC_STRIPE_API_URL: optionalString.pipe(z.string().url().optional()),
  // Signing secret (whsec_...) of the platform's own webhook endpoint, POST /webhooks/stripe.
  SVC_STRIPE_WEBHOOK_SECRET: optionalString,
  // The spec's name: signing secret of the Connect endpoint, POST /webhooks/payments/connect.
  PAYMENTS_CONNECT_WEBHOOK_SECRET: optionalString,
  // Stripe price id (price_...) of the pro plan's monthly subscription.
  SVC_STRIPE_PRO_PRICE_ID: optionalString,
  // The platform's share of every end-user payment made through an app (Stripe application fee), in percent.
  SVC_PLATFORM_FEE_PERCENT: z.coerce.number().min(0).max(100).default(5),
  // Free apps without a request for this many days are paused (0: never).
  SVC_APP_IDLE_PAUSE_DAYS: z.coerce.number().int().min(0).max(365).default(7),
  SVC_WS_RECHECK_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  // Billing notification e-mails (payment failed, suspension): smtp(s)://user:pass@host:port; unset: logged only.
  SVC_SMTP_URL: optionalString.pipe(z.string().regex(/^smtps?:\/\//, 'an smtp:// or smtps:// URL').optional()),
  SVC_SMTP_FROM: z.string().default('billing@localhost'),
  // Meeting bots (src/meetings/): Recall.ai's v1 bot API at this base URL (the region's host, e.g.
  // https://us-east-1.recall.ai; requests go to <base>/api/v1/...). Unset: the meetings routes answer 501
  // provider_unavailable and GET /v1/ai/meetings/_status { available: false }. With it, the API key and the signing
  // secret (whsec_<base64>) of the webhook endpoint POST /webhooks/meetings/recall are required.
  SVC_MEETINGS_BASE_URL: optionalString.pipe(z.string().url().optional()),
  SVC_MEETINGS_API_KEY: optionalString,
  SVC_MEETINGS_WEBHOOK_SECRET: optionalString.pipe(
    z.string().regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must look like whsec_<base64>, as the provider shows it').optional(),
  ),
  // USD charged per hour of a finished session: recording (every session) and transcription (when enabled).
  SVC_MEETINGS_RECORDING_USD_PER_HOUR: z.coerce.number().min(0).max(1000).default(0.5),
  SVC_MEETINGS_TRANSCRIPTION_USD_PER_HOUR: z.coerce.number().min(0).max(1000).default(0.15),
  SVC_MEETINGS_DEFAULT_BOT_NAME: z.string().min(1).max(64).default('Meeting Notetaker'),
  SVC_MEETINGS_TIMEOUT_MS: positiveInt.max(120_000).default(15_000),
  // Third-party integrations (src/integrations/): Composio's v3 REST API at this base URL (requests go to
  // <base>/api/v3/...). Without the API key every integrations route answers 400 INTEGRATIONS_NOT_CONFIGURED.
  SVC_INTEGRATIONS_BASE_URL: z.string().url().default('https://backend.composio.dev'),
  SVC_INTEGRATIONS_API_KEY: optionalString,
  // People search (src/people/): provider slots (a Proxycurl-style v2 API, or a semantic search API), routing, the
  // balance gate, prices and the e-mail lookup deadline. A slot without a URL has no provider.
  SVC_PEOPLE_ENABLED: z.enum(['true', 'false']).default('true'),
  SVC_PEOPLE_EMAIL_LOOKUP_ENABLED: z.enum(['true', 'false']).default('true'),
  SVC_PEOPLE_PRIMARY_URL: optionalString.pipe(z.string().url().optional()),
  SVC_PEOPLE_PRIMARY_KEY: optionalString,
  SVC_PEOPLE_PRIMARY_KIND: z.enum(['proxycurl', 'exa']).default('proxycurl'),
  SVC_PEOPLE_SECONDARY_URL: optionalString.pipe(z.string().url().optional()),
  SVC_PEOPLE_SECONDARY_KEY: optionalString,
  SVC_PEOPLE_SECONDARY_KIND: z.enum(['proxycurl', 'exa']).default('exa'),
  // Which slot serves which action, e.g. "query=secondary,profile=primary"; unnamed actions keep their default.
  SVC_PEOPLE_ROUTING: z.string().default(''),
  SVC_PEOPLE_MIN_BALANCE_USD: z.coerce.number().min(0).max(1000).default(0.05),
  // Price table overrides, JSON by action (see docs/people.md); unnamed actions and fields keep the defaults.
  SVC_PEOPLE_PRICES: z.string().default('{}'),
  SVC_PEOPLE_TIMEOUT_MS: positiveInt.max(300_000).default(30_000),
  SVC_PEOPLE_EMAIL_LOOKUP_DEADLINE_SECONDS: positiveInt.max(30 * 86_400).default(86_400),
  // People on the platform (src/identity): who may sign up: open (anyone, into an account of their own), invite (only
  // with an invitation; the first person claims the owner account with the file <data dir>/owner-invitation), closed.
  SVC_SIGNUP: z.enum(['open', 'invite', 'closed']).default('invite'),
  // A session ends after this many hours without a request, and this many days after sign-in in any case.
  SVC_SESSION_IDLE_HOURS: positiveInt.max(24 * 90).default(72),
  SVC_SESSION_MAX_DAYS: positiveInt.max(365).default(30),
  // Accounts' audit log entries are deleted this many days after they were written (the daily audit_purge job).
  SVC_AUDIT_RETENTION_DAYS: positiveInt.max(36_500).default(365),
  // OAuth for MCP clients (src/identity/oauth.ts): an access token's lifetime, and a refresh token's (renewed on each
  // rotation).
  SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS: positiveInt.min(60).max(86_400).default(3600),
  SVC_OAUTH_REFRESH_TOKEN_TTL_DAYS: positiveInt.max(365).default(30),
  // OpenID Connect sign-in of people: the provider's issuer (https://, or http:// on a loopback host; discovery at
  // <issuer>/.well-known/openid-configuration), the platform's client there (redirect URI
  // <SVC_BASE_URL>/dashboard/oidc/callback) and the sign-in button's label. Unset issuer: no OpenID Connect sign-in.
  SVC_OIDC_ISSUER: optionalString.pipe(z.string().url().optional()),
  SVC_OIDC_CLIENT_ID: optionalString,
  SVC_OIDC_CLIENT_SECRET: optionalString,
  SVC_OIDC_NAME: z.string().trim().min(1).max(60).default('OpenID Connect'),
  // Each request to the provider (discovery, keys, code exchange, userinfo) gives up after this long.
  SVC_OIDC_TIMEOUT_MS: positiveInt.max(60_000).default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** Every variable this module reads: deployment files are checked against it (test/unit/deploy-files.test.ts). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.freeze(Object.keys(EnvSchema.shape));

export type Config = Readonly<{
  port: number;
  host: string;
  databaseUrl: string;
  /** Where per-app databases live: the default region on SVC_APP_DATABASE_URL (the control cluster unless set), and SVC_REGIONS. */
  regions: Regions;
  templates: Readonly<{ publicAllowed: boolean; clonesPerAccount: number; dir: string; install: boolean }>;
  /** Days a branch lives without a request (branches_create's idle_days default). */
  branchIdleDays: number;
  appDbPrefix: string;
  platformApiKey: string | undefined;
  dataDir: string;
  masterKey: string | undefined;
  baseUrl: string;
  /** The origin of baseUrl: a request authenticated by the session cookie must come from it. */
  platformOrigin: string;
  /** The host name of baseUrl, lowercase, without its port: the platform's own host, never an app's. */
  platformHost: string;
  /** Session cookies carry Secure when the base URL is https. */
  secureCookies: boolean;
  identity: Readonly<{
    signup: 'open' | 'invite' | 'closed';
    idleHours: number;
    maxDays: number;
    /** The OpenID Connect provider people may sign in with; undefined: none. */
    oidc: OidcConfig | undefined;
  }>;
  /** Days an audit log entry is kept. */
  auditRetentionDays: number;
  /** Lifetimes of the tokens MCP clients get through OAuth (the issuer is baseUrl). */
  oauth: Readonly<{ accessTokenTtlSeconds: number; refreshTokenTtlDays: number }>;
  /**
   * Apps' own hosts are `{subdomain}.{baseDomain}` (SVC_BASE_DOMAIN; by default `localhost:<port>` for a loopback base
   * URL); undefined: no subdomain routing, tenant content only on sandboxed paths of the platform's host.
   */
  baseDomain: string | undefined;
  /** DNS servers (ip, ip:port, [ipv6]:port) of custom domains' verification lookups; empty: the system's resolvers. */
  dnsServers: readonly string[];
  role: 'all' | 'api' | 'worker';
  /** Which browser origins may call /mcp (requests without Origin always may). */
  mcp: McpOrigins;
  /** Proxy hops whose X-Forwarded-For is trusted for the client address (rate limits). */
  trustProxy: number;
  bodyLimit: string;
  appPoolSize: number;
  appPoolBudget: number;
  controlPoolSize: number;
  /** Longest wait for a free database connection (control or app pool) before the request fails with 503. */
  dbAcquireTimeoutMs: number;
  /** Ceiling on the JSON one data API response may carry, enforced in the query (413 past it). */
  dataMaxResponseBytes: number;
  /** How often open websockets' keys are rechecked (a revoked key's sockets close within this time). */
  wsRecheckSeconds: number;
  workerConcurrency: number;
  /** Heartbeat age after which a graphile-worker worker counts as gone and its jobs are unlocked (src/jobs/). */
  workerStaleAfterSeconds: number;
  shutdownTimeoutMs: number;
  /** Lifetime of end-user access JWTs; they are stateless, so logout cannot cut them short. */
  accessTokenTtlSeconds: number;
  /** Lifetime of each end-user refresh token; every rotation starts a fresh one. */
  refreshTokenTtlDays: number;
  /** Per client, app and minute, for each of auth signup and login. */
  authRateLimitPerMinute: number;
  /** Per client, app and minute, for auth refresh. */
  refreshRateLimitPerMinute: number;
  /** Per e-mail address and minute, verification and password reset e-mails of people on the platform. */
  personMailRateLimitPerMinute: number;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  storage: Readonly<{
    backend: 'local' | 's3';
    s3: Readonly<{ endpoint: string | undefined; region: string; bucket: string | undefined; accessKeyId: string | undefined; secretAccessKey: string | undefined; forcePathStyle: boolean }>;
    maxFileBytes: number;
    maxAppBytes: number;
    /** Empty: every content type is allowed. */
    allowedContentTypes: readonly string[];
    /** Pending uploads one end user may hold at once, so that no user can reserve the app's quota. */
    userPendingUploads: number;
    /** Bytes one end user may hold reserved at once, in percent of the app's total. */
    userPendingPercent: number;
    /** A direct upload that sends nothing for this long is given up. */
    uploadIdleMs: number;
  }>;
  /** postgres_changes: the pause between reads that found nothing, and how long captured changes are kept. */
  realtime: Readonly<{ pollMs: number; retentionSeconds: number }>;
  /** SVC_REALTIME_MAX_SOCKETS_PER_APP. */
  realtimeMaxSocketsPerApp: number;
  frontend: Readonly<{ maxZipBytes: number; maxUnzippedBytes: number; maxFiles: number; maxCompressionRatio: number }>;
  functions: Readonly<{
    denoPath: string | undefined;
    maxWarmPerFunction: number;
    maxProcesses: number;
    maxProcessesPerApp: number;
    maxWaitingPerApp: number;
    cpuCores: number;
    cpuGraceMs: number;
    concurrencyPerProcess: number;
    idleMs: number;
    startTimeoutMs: number;
    queueTimeoutMs: number;
    logRetention: number;
    maxBodyBytes: number;
    rssHeadroomMb: number;
    denyNet: readonly string[];
    allowPrivateNet: boolean;
  }>;
  /** Whether user-supplied outbound URLs may reach loopback, link-local and private addresses. */
  outboundAllowPrivate: boolean;
  outbox: Readonly<{ maxAttempts: number; timeoutMs: number }>;
  billing: Readonly<{
    stripe: Readonly<{
      secretKey: string | undefined;
      apiUrl: string | undefined;
      webhookSecret: string | undefined;
      connectWebhookSecret: string | undefined;
      proPriceId: string | undefined;
    }>;
    platformFeePercent: number;
    idlePauseDays: number;
    smtp: Readonly<{ url: string | undefined; from: string }>;
  }>;
  meetings: Readonly<{
    /** Recall.ai's base URL (region host); undefined: no provider, the meetings routes answer 501. */
    baseUrl: string | undefined;
    apiKey: string | undefined;
    /** whsec_<base64>: verifies the provider's Svix-signed webhooks. */
    webhookSecret: string | undefined;
    recordingUsdPerHour: number;
    transcriptionUsdPerHour: number;
    defaultBotName: string;
    timeoutMs: number;
  }>;
  integrations: Readonly<{
    /** Composio's base URL (without /api/v3). */
    baseUrl: string;
    /** Undefined: no vendor, every integrations route answers 400 INTEGRATIONS_NOT_CONFIGURED. */
    apiKey: string | undefined;
  }>;
  people: Readonly<{
    /** false: every people route answers 503 people_disabled. */
    enabled: boolean;
    /** false: profile/email answers 503 email_lookup_disabled (lookups already queued still resolve). */
    emailLookupEnabled: boolean;
    /** The provider of each slot; undefined: no provider registered there. */
    slots: Readonly<Record<PeopleSlot, PeopleSlotConfig | undefined>>;
    /** Which slot serves each action; `query` is any search sent with a natural-language query. */
    routing: PeopleRouting;
    /** Below this available balance (USD) a billed call is refused with 402 before the provider is called. */
    minBalanceUsd: number;
    prices: PeoplePrices;
    timeoutMs: number;
    /** A pending e-mail lookup without a callback by then becomes `expired`. */
    emailLookupDeadlineSeconds: number;
  }>;
  ai: Readonly<{
    /** The upstream's OpenAI-compatible base URL (…/v1); undefined: the AI routes answer 503 provider_unavailable. */
    baseUrl: string | undefined;
    /** The platform's shared upstream key, used for apps without their own (byokKey). */
    apiKey: string | undefined;
    timeoutMs: number;
    /** USD per million tokens, by model id; used when the upstream's response carries no cost. */
    prices: Readonly<Record<string, ModelPrice>>;
    defaultPrice: ModelPrice;
  }>;
}>;

export type OidcConfig = Readonly<{ issuer: string; clientId: string; clientSecret: string; name: string; timeoutMs: number }>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw invalidEnvironment(...parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  if (e.SVC_STORAGE_BACKEND === 's3' && !e.SVC_S3_BUCKET) {
    throw invalidEnvironment('SVC_S3_BUCKET is required when SVC_STORAGE_BACKEND is s3');
  }
  if (e.SVC_APP_POOL_SIZE > e.SVC_APP_POOL_BUDGET) {
    throw invalidEnvironment('SVC_APP_POOL_SIZE must not exceed SVC_APP_POOL_BUDGET');
  }
  const fnPerApp = e.SVC_FUNCTIONS_MAX_PROCESSES_PER_APP ?? Math.max(1, Math.floor(e.SVC_FUNCTIONS_MAX_PROCESSES / 2));
  if (fnPerApp > e.SVC_FUNCTIONS_MAX_PROCESSES) {
    throw invalidEnvironment('SVC_FUNCTIONS_MAX_PROCESSES_PER_APP must not exceed SVC_FUNCTIONS_MAX_PROCESSES');
  }
  const baseUrl = withoutTrailingSlash(e.SVC_BASE_URL ?? `http://localhost:${e.PORT}`);
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    templates: Object.freeze({
      publicAllowed: e.SVC_TEMPLATES_PUBLIC === 'true',
      clonesPerAccount: e.SVC_CLONES_PER_ACCOUNT,
      dir: e.SVC_TEMPLATES_DIR ? path.resolve(e.SVC_TEMPLATES_DIR) : SHIPPED_TEMPLATES_DIR,
      install: e.SVC_TEMPLATES_INSTALL === 'true',
    }),
    branchIdleDays: e.SVC_BRANCH_IDLE_DAYS,
    regions: parseRegions('SVC_REGIONS', e.SVC_REGIONS, e.SVC_DEFAULT_REGION, e.SVC_APP_DATABASE_URL ?? e.DATABASE_URL),
    appDbPrefix: e.SVC_APP_DB_PREFIX,
    platformApiKey: e.SVC_PLATFORM_API_KEY,
    dataDir: path.resolve(e.SVC_DATA_DIR),
    masterKey: e.SVC_MASTER_KEY,
    baseUrl,
    platformOrigin: new URL(baseUrl).origin,
    platformHost: new URL(baseUrl).hostname.toLowerCase(),
    secureCookies: baseUrl.startsWith('https://'),
    identity: Object.freeze({ signup: e.SVC_SIGNUP, idleHours: e.SVC_SESSION_IDLE_HOURS, maxDays: e.SVC_SESSION_MAX_DAYS, oidc: oidcConfig(e) }),
    auditRetentionDays: e.SVC_AUDIT_RETENTION_DAYS,
    oauth: Object.freeze({ accessTokenTtlSeconds: e.SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS, refreshTokenTtlDays: e.SVC_OAUTH_REFRESH_TOKEN_TTL_DAYS }),
    baseDomain: e.SVC_BASE_DOMAIN?.toLowerCase() ?? loopbackAppsDomain(baseUrl),
    dnsServers: parseDnsServers('SVC_DNS_SERVERS', e.SVC_DNS_SERVERS),
    role: e.SVC_ROLE,
    mcp: parseMcpOrigins('SVC_MCP_ALLOWED_ORIGINS', e.SVC_MCP_ALLOWED_ORIGINS, baseUrl),
    trustProxy: e.SVC_TRUST_PROXY,
    bodyLimit: e.SVC_BODY_LIMIT,
    appPoolSize: e.SVC_APP_POOL_SIZE,
    appPoolBudget: e.SVC_APP_POOL_BUDGET,
    controlPoolSize: e.SVC_CONTROL_POOL_SIZE,
    dbAcquireTimeoutMs: e.SVC_DB_ACQUIRE_TIMEOUT_MS,
    dataMaxResponseBytes: e.SVC_DATA_MAX_RESPONSE_BYTES,
    wsRecheckSeconds: e.SVC_WS_RECHECK_SECONDS,
    workerConcurrency: e.SVC_WORKER_CONCURRENCY,
    workerStaleAfterSeconds: e.SVC_WORKER_STALE_AFTER_SECONDS,
    shutdownTimeoutMs: e.SVC_SHUTDOWN_TIMEOUT_MS,
    accessTokenTtlSeconds: e.SVC_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlDays: e.SVC_REFRESH_TOKEN_TTL_DAYS,
    authRateLimitPerMinute: e.SVC_AUTH_RATE_LIMIT_PER_MINUTE,
    refreshRateLimitPerMinute: e.SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE,
    personMailRateLimitPerMinute: e.SVC_PERSON_MAIL_RATE_LIMIT_PER_MINUTE,
    logLevel: e.LOG_LEVEL,
    storage: Object.freeze({
      backend: e.SVC_STORAGE_BACKEND,
      s3: Object.freeze({
        endpoint: e.SVC_S3_ENDPOINT,
        region: e.SVC_S3_REGION,
        bucket: e.SVC_S3_BUCKET,
        accessKeyId: e.SVC_S3_ACCESS_KEY_ID,
        secretAccessKey: e.SVC_S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.SVC_S3_FORCE_PATH_STYLE === 'true',
      }),
      maxFileBytes: e.SVC_STORAGE_MAX_FILE_BYTES,
      maxAppBytes: e.SVC_STORAGE_MAX_APP_BYTES,
      allowedContentTypes: commaList(e.SVC_STORAGE_ALLOWED_CONTENT_TYPES.toLowerCase()),
      userPendingUploads: e.SVC_STORAGE_USER_PENDING_UPLOADS,
      userPendingPercent: e.SVC_STORAGE_USER_PENDING_PERCENT,
      uploadIdleMs: e.SVC_STORAGE_UPLOAD_IDLE_SECONDS * 1000,
    }),
    realtime: Object.freeze({ pollMs: e.SVC_REALTIME_POLL_MS, retentionSeconds: e.SVC_REALTIME_RETENTION_SECONDS }),
    realtimeMaxSocketsPerApp: e.SVC_REALTIME_MAX_SOCKETS_PER_APP,
    frontend: Object.freeze({
      maxZipBytes: e.SVC_FRONTEND_MAX_ZIP_BYTES,
      maxUnzippedBytes: e.SVC_FRONTEND_MAX_UNZIPPED_BYTES,
      maxFiles: e.SVC_FRONTEND_MAX_FILES,
      maxCompressionRatio: e.SVC_FRONTEND_MAX_COMPRESSION_RATIO,
    }),
    functions: Object.freeze({
      denoPath: e.SVC_DENO_PATH,
      maxWarmPerFunction: e.SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION,
      maxProcesses: e.SVC_FUNCTIONS_MAX_PROCESSES,
      maxProcessesPerApp: fnPerApp,
      maxWaitingPerApp: e.SVC_FUNCTIONS_MAX_WAITING_PER_APP ?? fnPerApp * e.SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS,
      cpuCores: e.SVC_FUNCTIONS_CPU_CORES,
      cpuGraceMs: e.SVC_FUNCTIONS_CPU_GRACE_MS,
      concurrencyPerProcess: e.SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS,
      idleMs: e.SVC_FUNCTIONS_IDLE_MS,
      startTimeoutMs: e.SVC_FUNCTIONS_START_TIMEOUT_MS,
      queueTimeoutMs: e.SVC_FUNCTIONS_QUEUE_TIMEOUT_MS,
      logRetention: e.SVC_FUNCTIONS_LOG_RETENTION,
      maxBodyBytes: e.SVC_FUNCTIONS_MAX_BODY_BYTES,
      rssHeadroomMb: e.SVC_FUNCTIONS_RSS_HEADROOM_MB,
      denyNet: commaList(e.SVC_FUNCTIONS_DENY_NET),
      allowPrivateNet: e.SVC_FUNCTIONS_ALLOW_PRIVATE_NET === 'true',
    }),
    outboundAllowPrivate: e.SVC_OUTBOUND_ALLOW_PRIVATE === 'true',
    outbox: Object.freeze({ maxAttempts: e.SVC_OUTBOX_MAX_ATTEMPTS, timeoutMs: e.SVC_OUTBOX_TIMEOUT_MS }),
    billing: Object.freeze({
      stripe: Object.freeze({
        secretKey: e.SVC_STRIPE_SECRET_KEY,
        apiUrl: e.SVC_STRIPE_API_URL,
        webhookSecret: e.SVC_STRIPE_WEBHOOK_SECRET,
        connectWebhookSecret: e.PAYMENTS_CONNECT_WEBHOOK_SECRET,
        proPriceId: e.SVC_STRIPE_PRO_PRICE_ID,
      }),
      platformFeePercent: e.SVC_PLATFORM_FEE_PERCENT,
      idlePauseDays: e.SVC_APP_IDLE_PAUSE_DAYS,
      smtp: Object.freeze({ url: e.SVC_SMTP_URL, from: e.SVC_SMTP_FROM }),
    }),
    meetings: meetingsConfig(e),
    integrations: Object.freeze({ baseUrl: withoutTrailingSlash(e.SVC_INTEGRATIONS_BASE_URL), apiKey: e.SVC_INTEGRATIONS_API_KEY }),
    people: peopleConfig(e),
    ai: Object.freeze({
      baseUrl: e.SVC_AI_BASE_URL === undefined ? undefined : withoutTrailingSlash(e.SVC_AI_BASE_URL),
      apiKey: e.SVC_AI_API_KEY,
      timeoutMs: e.SVC_AI_TIMEOUT_MS,
      prices: parseModelPrices('SVC_AI_PRICES', e.SVC_AI_PRICES),
      defaultPrice: parseModelPrice(e.SVC_AI_DEFAULT_PRICE),
    }),
  });
}

/** The meetings provider is all or nothing: a base URL without its key or webhook secret could spawn bots it never hears from. */
function meetingsConfig(e: z.infer<typeof EnvSchema>): Config['meetings'] {
  if (e.SVC_MEETINGS_BASE_URL && (!e.SVC_MEETINGS_API_KEY || !e.SVC_MEETINGS_WEBHOOK_SECRET)) {
    throw invalidEnvironment('SVC_MEETINGS_API_KEY and SVC_MEETINGS_WEBHOOK_SECRET are required when SVC_MEETINGS_BASE_URL is set');
  }
  return Object.freeze({
    baseUrl: e.SVC_MEETINGS_BASE_URL === undefined ? undefined : withoutTrailingSlash(e.SVC_MEETINGS_BASE_URL),
    apiKey: e.SVC_MEETINGS_API_KEY,
    webhookSecret: e.SVC_MEETINGS_WEBHOOK_SECRET,
    recordingUsdPerHour: e.SVC_MEETINGS_RECORDING_USD_PER_HOUR,
    transcriptionUsdPerHour: e.SVC_MEETINGS_TRANSCRIPTION_USD_PER_HOUR,
    defaultBotName: e.SVC_MEETINGS_DEFAULT_BOT_NAME,
    timeoutMs: e.SVC_MEETINGS_TIMEOUT_MS,
  });
}

/** Hosts an http:// issuer may have: a provider on this machine, which no one can listen in on (development, tests). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** All or nothing, like the meetings provider: an issuer without its client could only fail every sign-in. */
function oidcConfig(e: z.infer<typeof EnvSchema>): OidcConfig | undefined {
  if (!e.SVC_OIDC_ISSUER) return undefined;
  if (!e.SVC_OIDC_CLIENT_ID || !e.SVC_OIDC_CLIENT_SECRET) {
    throw invalidEnvironment('SVC_OIDC_CLIENT_ID and SVC_OIDC_CLIENT_SECRET are required when SVC_OIDC_ISSUER is set');
  }
  const issuer = new URL(e.SVC_OIDC_ISSUER);
  if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && LOOPBACK_HOSTS.has(issuer.hostname))) {
    throw invalidEnvironment('SVC_OIDC_ISSUER must be an https:// URL (http:// only on localhost, 127.0.0.1 or [::1])');
  }
  return Object.freeze({
    issuer: e.SVC_OIDC_ISSUER,
    clientId: e.SVC_OIDC_CLIENT_ID,
    clientSecret: e.SVC_OIDC_CLIENT_SECRET,
    name: e.SVC_OIDC_NAME,
    timeoutMs: e.SVC_OIDC_TIMEOUT_MS,
  });
}

function peopleConfig(e: z.infer<typeof EnvSchema>): Config['people'] {
  return Object.freeze({
    enabled: e.SVC_PEOPLE_ENABLED === 'true',
    emailLookupEnabled: e.SVC_PEOPLE_EMAIL_LOOKUP_ENABLED === 'true',
    slots: Object.freeze({
      primary: peopleSlot('PRIMARY', e.SVC_PEOPLE_PRIMARY_URL, e.SVC_PEOPLE_PRIMARY_KEY, e.SVC_PEOPLE_PRIMARY_KIND),
      secondary: peopleSlot('SECONDARY', e.SVC_PEOPLE_SECONDARY_URL, e.SVC_PEOPLE_SECONDARY_KEY, e.SVC_PEOPLE_SECONDARY_KIND),
    }),
    routing: parsePeopleRouting('SVC_PEOPLE_ROUTING', e.SVC_PEOPLE_ROUTING),
    minBalanceUsd: e.SVC_PEOPLE_MIN_BALANCE_USD,
    prices: parsePeoplePrices('SVC_PEOPLE_PRICES', e.SVC_PEOPLE_PRICES),
    timeoutMs: e.SVC_PEOPLE_TIMEOUT_MS,
    emailLookupDeadlineSeconds: e.SVC_PEOPLE_EMAIL_LOOKUP_DEADLINE_SECONDS,
  });
}

/** A slot with a URL must have its key: a keyless provider would answer every call with 401, billed as an outage. */
function peopleSlot(name: string, url: string | undefined, key: string | undefined, kind: PeopleSlotConfig['kind']): PeopleSlotConfig | undefined {
  if (!url) return undefined;
  if (!key) throw invalidEnvironment(`SVC_PEOPLE_${name}_KEY is required when SVC_PEOPLE_${name}_URL is set`);
  return Object.freeze({ kind, baseUrl: withoutTrailingSlash(url), apiKey: key });
}
