// Every call the console makes: the platform's public REST routes, the same as any client's, with the session
// cookie (same-origin fetch; the browser adds the Origin header the platform checks on writes).

/** The platform's error envelope { error: { code, message, remediation } }, with the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One call of a public REST route with the session cookie; a non-2xx answer throws ApiError. */
export async function call<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await ensureOk(res);
  return (res.status === 204 ? null : await res.json().catch(() => null)) as T;
}

/** Throws the ApiError of a non-2xx answer (`what` failed, when its body is not the platform's envelope). */
export async function ensureOk(res: Response, what = 'request'): Promise<void> {
  if (res.ok) return;
  const e = ((await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null)?.error;
  throw new ApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? `The ${what} failed (${res.status}).`);
}

export const query = (params: Record<string, string | undefined>): string => {
  const q = new URLSearchParams(Object.entries(params).filter((p): p is [string, string] => p[1] !== undefined));
  return q.size ? `?${q}` : '';
};
export const seg = encodeURIComponent;

// Roles from the highest; a role may do what any role after it may.
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const roleAtLeast = (role: Role, needed: Role): boolean => ROLES.indexOf(role) <= ROLES.indexOf(needed);

export interface Person {
  id: string;
  email: string;
  name: string;
}
export interface SessionInfo {
  person: Person;
  account_id: string;
  role: Role;
  accounts: Array<{ account_id: string; account_name: string; role: Role }>;
}
export interface App {
  app_id: string;
  name: string;
  subdomain: string;
  url: string;
  region: string;
  created_at: string;
  /** When a free app was paused for inactivity (it answers 423 until restored), or null. */
  paused_at: string | null;
}
export interface AppDetails extends App {
  migration_version: number;
}
export interface Key {
  id: string;
  name: string;
  hint: string;
  created_at: string;
}
/** A publishable key (svc_pub_...): public, so listed with the key itself (supabase-js's key in a browser). */
export interface PublishableKey {
  id: string;
  name: string;
  key: string;
  created_at: string;
}
export interface PlatformKey extends Key {
  role: Role;
  created_by: string | null;
}
export interface Member {
  person_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: string;
}
export interface Invitation {
  id: string;
  email: string | null;
  role: Role;
  created_at: string;
  expires_at: string;
}
export interface AuditEntry {
  id: string;
  actor_kind: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  created_at: string;
}
/** The steps of a clone in the order they run (GET /v1/clones/{id}'s status is the one running). */
export const CLONE_STEPS = ['database', 'schema', 'functions', 'site', 'ai_rag', 'integrations', 'billing', 'seed'] as const;
export type CloneStep = (typeof CLONE_STEPS)[number];
export interface TodoItem {
  kind: 'secret' | 'frontend_env' | 'connect_onboarding' | 'integration' | 'setup';
  message: string;
  tool: string;
  function?: string;
  name?: string;
}
export interface TemplateSummary {
  app_id: string;
  title: string;
  description: string;
  visibility: 'account' | 'public';
  version: string;
  shipped: boolean;
  published_at: string;
}
export interface Manifest extends TemplateSummary {
  creates: {
    tables: Array<{ name: string; access: string; seed_rows: number | null }>;
    migrations: number;
    functions: Array<{ name: string; trigger: string; schedule?: string; event?: string }>;
    site: { framework: string; files: number } | null;
    frontend_env_keys: string[];
    ai: { default_model: string | null } | null;
    rag_collections: Array<{ name: string; documents: number }>;
    integrations: string[];
    billing: { plans: string[]; products: string[] };
    substrate_link: boolean;
    uses: string[];
  };
  owner_must_supply: TodoItem[];
}
export interface Clone {
  clone_id: string;
  app_id: string;
  name: string;
  region: string;
  template: { app_id: string; version: string };
  status: 'queued' | CloneStep | 'ready' | 'failed';
  failed_step: CloneStep | null;
  error: string | null;
  todo: TodoItem[];
  created_at: string;
  finished_at: string | null;
}

export const session = {
  get: () => call<SessionInfo>('GET', '/dashboard/session'),
  signIn: (email: string, password: string) => call('POST', '/dashboard/signin', { email, password }),
  /** Signed in at once, or (an open sign-up where the platform sends mail) `{ email, mail_configured }`: the mailed link finishes it. */
  signUp: (input: { email: string; password: string; name?: string; invitation_token?: string }) =>
    call<{ person: unknown } | { email: string; mail_configured: true }>('POST', '/dashboard/signup', input),
  signOut: () => call('POST', '/dashboard/signout'),
  providers: () => call<{ providers: Array<{ name: string; start_url: string }> }>('GET', '/dashboard/oidc'),
};

export const apps = {
  list: async () => (await call<{ apps: App[] }>('GET', '/apps')).apps,
  regions: async () => (await call<{ regions: Array<{ name: string; default: boolean }> }>('GET', '/regions')).regions,
  create: (name: string, region: string) => call<App & { service_key: Key & { key: string } }>('POST', '/init', { name, region }),
  get: (id: string) => call<AppDetails>('GET', `/apps/${seg(id)}`),
  remove: (id: string) => call('DELETE', `/apps/${seg(id)}`),
  restore: (id: string) => call<App>('POST', `/apps/${seg(id)}/restore`),
};

export const templates = {
  list: async () => (await call<{ templates: TemplateSummary[] }>('GET', '/v1/templates')).templates,
  get: (appId: string) => call<Manifest>('GET', `/v1/templates/${seg(appId)}`),
  clone: (appId: string, name: string, region: string) => call<Clone>('POST', `/v1/templates/${seg(appId)}/clone`, { name, region }),
  cloneGet: (cloneId: string) => call<Clone>('GET', `/v1/clones/${seg(cloneId)}`),
};

export const serviceKeys = {
  list: async (appId: string) => (await call<{ keys: Key[] }>('GET', `/apps/${seg(appId)}/keys`)).keys,
  create: (appId: string, name: string) => call<Key & { key: string }>('POST', `/apps/${seg(appId)}/keys`, { name }),
  revoke: (appId: string, keyId: string) => call('DELETE', `/apps/${seg(appId)}/keys/${seg(keyId)}`),
};

export const publishableKeys = {
  list: async (appId: string) => (await call<{ keys: PublishableKey[] }>('GET', `/apps/${seg(appId)}/publishable-keys`)).keys,
  create: (appId: string, name: string) => call<PublishableKey>('POST', `/apps/${seg(appId)}/publishable-keys`, { name }),
  revoke: (appId: string, keyId: string) => call('DELETE', `/apps/${seg(appId)}/publishable-keys/${seg(keyId)}`),
};

export const account = {
  members: async () => (await call<{ members: Member[] }>('GET', '/dashboard/members')).members,
  setRole: (personId: string, role: Role) => call('PATCH', `/dashboard/members/${seg(personId)}`, { role }),
  removeMember: (personId: string) => call('DELETE', `/dashboard/members/${seg(personId)}`),
  invitations: async () => (await call<{ invitations: Invitation[] }>('GET', '/dashboard/invitations')).invitations,
  invite: (role: Role, email?: string) => call<Invitation & { token: string; url: string }>('POST', '/dashboard/invitations', { role, ...(email ? { email } : {}) }),
  revokeInvitation: (id: string) => call('DELETE', `/dashboard/invitations/${seg(id)}`),
  keys: async () => (await call<{ keys: PlatformKey[] }>('GET', '/dashboard/keys')).keys,
  createKey: (name: string, role: Role) => call<PlatformKey & { key: string }>('POST', '/dashboard/keys', { name, role }),
  revokeKey: (id: string) => call('DELETE', `/dashboard/keys/${seg(id)}`),
  audit: (cursor?: string) => call<{ entries: AuditEntry[]; next_cursor: string | null }>('GET', `/dashboard/audit${query({ limit: '20', cursor })}`),
};

/** A substrate action as GET /v1/me/substrate/actions lists it (the signed-in person's own substrate user). */
export interface SubstrateAction {
  action_id: string;
  capability: string;
  payload: unknown;
  status: 'proposed' | 'executed' | 'rejected';
  proposer_kind: 'human' | 'agent';
  source_app_id: string | null;
  source_rule_id: string | null;
  verdict: {
    result: 'auto_approved' | 'auto_approved_yolo' | 'requires_approval' | 'rejected';
    reason: string;
    conflicts: Array<{ principle_id: string; title: string; mode: 'require_approval' | 'reject' }>;
  };
  requires_approval: boolean;
  reject_reason: string | null;
  decided_via: 'rest' | 'mcp_elicitation' | 'app_end_user' | null;
  decided_by: string | null;
  created_at: string;
  decided_at: string | null;
}

export const substrate = {
  pending: async () => (await call<{ actions: SubstrateAction[] }>('GET', `/v1/me/substrate/actions${query({ status: 'proposed', limit: '500' })}`)).actions,
  get: (id: string) => call<SubstrateAction>('GET', `/v1/me/substrate/actions/${seg(id)}`),
  approve: (id: string) => call<SubstrateAction>('POST', `/v1/me/substrate/actions/${seg(id)}/approve`),
  reject: (id: string, reason?: string) => call<SubstrateAction>('POST', `/v1/me/substrate/actions/${seg(id)}/reject`, reason ? { reason } : {}),
  /** A single-use ticket (60 s) for one connection of the change stream. */
  ticket: () => call<{ ticket: string; expires_in: number }>('POST', '/v1/me/substrate/ws-ticket'),
};
