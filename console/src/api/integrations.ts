// An app's integrations: the vendor's toolkits, the ones enabled, its end users' connections and the execution log
// (/v1/{app_id}/integrations/...). A platform caller naming no user reads the whole app's.
import { call, query, seg } from '../api.ts';

export interface Toolkit {
  toolkit: string;
  displayName: string;
  curated: boolean;
  description: string | null;
  enabled: boolean;
}

export interface IntegrationsConfig {
  integrations: Array<{ toolkit: string; displayName: string; scopes: string[] | null; createdAt: string; updatedAt: string }>;
  redirectOrigins: string[];
  appOrigin: string;
}

export interface Connection {
  id: string;
  toolkit: string;
  userId: string;
  status: 'active' | 'toolkit_disabled';
  createdAt: string;
}

export interface Execution {
  id: string;
  userId: string;
  toolName: string;
  toolkit: string | null;
  successful: boolean;
  durationMs: number;
  error: string | null;
  createdAt: string;
}

export const EXECUTIONS_PAGE = 50;

const base = (appId: string) => `/v1/${seg(appId)}/integrations`;

export const integrations = {
  available: async (appId: string, search?: string) => (await call<{ toolkits: Toolkit[] }>('GET', `${base(appId)}/available${query({ search })}`)).toolkits,
  config: (appId: string) => call<IntegrationsConfig>('GET', `${base(appId)}/config`),
  configure: (appId: string, input: { toolkit: string; displayName: string; scopes?: string[]; redirectOrigins?: string[] }) =>
    call<IntegrationsConfig>('POST', `${base(appId)}/configure`, input),
  disable: (appId: string, toolkit: string) => call('DELETE', `${base(appId)}/configure/${seg(toolkit)}`),
  connections: async (appId: string) => (await call<{ connections: Connection[] }>('GET', `${base(appId)}/connections`)).connections,
  disconnect: (appId: string, id: string) => call('DELETE', `${base(appId)}/connections/${seg(id)}`),
  executions: async (appId: string, before?: string) =>
    (await call<{ executions: Execution[] }>('GET', `${base(appId)}/executions${query({ limit: String(EXECUTIONS_PAGE), before })}`)).executions,
};
