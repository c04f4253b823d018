import type { AnyTool } from '../src/core/define.ts';
import { appsCreate, appsDelete, appsGet, appsList, appsRegions, appsRestore } from './apps/apps.ts';
import { platformBillingTools } from './billing/platform.ts';
import { monetizationTools } from './billing/monetization.ts';
import { peopleTools } from './people/people.ts';
import { meetingsTools } from './meetings/meetings.ts';
import { integrationsTools } from './integrations/integrations.ts';
import { publishableKeysCreate, publishableKeysList, publishableKeysRevoke, serviceKeysCreate, serviceKeysList, serviceKeysRevoke, substrateKeysCreate, substrateKeysList, substrateKeysRevoke } from './keys/keys.ts';
import { schemaTools } from './schema/schema.ts';
import { authTools } from './auth/auth.ts';
import { gotrueTools } from './auth/gotrue.ts';
import { gotrueMailTools } from './auth/gotrue-mail.ts';
import { authSettingsTools } from './auth/settings.ts';
import { dataTools } from './data/data.ts';
import { rpcTools } from './data/rpc.ts';
import { dataOpenapi } from './data/openapi.ts';
import { frontendTools } from './frontend/frontend.ts';
import { domainsTools } from './domains/domains.ts';
import { storageTools } from './storage/storage.ts';
import { realtimeTools } from './realtime/realtime.ts';
import { functionsTools } from './functions/functions.ts';
import { aiTools } from './ai/ai.ts';
import { ragTools } from './rag/rag.ts';
import { substrateTools } from './substrate/substrate.ts';
import { substrateMemoryTools } from './substrate/memory.ts';
import { substrateEntityTools } from './substrate/entities.ts';
import { substrateLinkTools } from './substrate/links.ts';
import { substrateOutboxTools } from './substrate/outbox.ts';
import { substrateRuleTools } from './substrate/rules.ts';
import { identityTools } from './identity/session.ts';
import { oidcTools } from './identity/oidc.ts';
import { identityMailTools } from './identity/email.ts';
import { membersTools } from './members/members.ts';
import { platformKeysTools } from './members/platform-keys.ts';
import { auditList } from './members/audit.ts';
import { platformGuideTool, platformHealth, platformReady, suggestionsCreate } from './platform/platform.ts';
import { platformToolsetsEnable } from './platform/toolsets.ts';
import { templatesTools } from './templates/templates.ts';
import { branchesTools } from './branches/branches.ts';

/** The tools of each area but platform_guide, whose `area` input enumerates these areas (it joins platform below). */
const areaTools: Record<string, readonly AnyTool[]> = {
  apps: [appsList, appsCreate, appsGet, appsDelete, appsRestore, appsRegions],
  keys: [serviceKeysCreate, serviceKeysList, serviceKeysRevoke, publishableKeysCreate, publishableKeysList, publishableKeysRevoke, substrateKeysCreate, substrateKeysList, substrateKeysRevoke, ...identityTools, ...identityMailTools, ...oidcTools],
  schema: schemaTools,
  auth: [...authTools, ...authSettingsTools, ...gotrueTools, ...gotrueMailTools],
  platform: [suggestionsCreate, platformHealth, platformReady, platformToolsetsEnable],
  storage: storageTools,
  realtime: realtimeTools,
  frontend: frontendTools,
  domains: domainsTools,
  functions: functionsTools,
  data: [...rpcTools, ...dataTools, dataOpenapi],
  ai: aiTools,
  rag: ragTools,
  substrate: [...substrateTools, ...substrateEntityTools, ...substrateLinkTools],
  memory: substrateMemoryTools,
  outbox: substrateOutboxTools,
  rules: substrateRuleTools,
  billing: [...platformBillingTools, ...monetizationTools],
  people: peopleTools,
  meetings: meetingsTools,
  integrations: integrationsTools,
  members: [...membersTools, ...platformKeysTools, auditList],
  templates: templatesTools,
  branches: branchesTools,
};

export const platformGuide = platformGuideTool(Object.keys(areaTools));

/**
 * Toolsets: the tools of each area (the tools/<area> folders), so an MCP session can load only what it needs
 * (/mcp?toolsets=data,storage) and add more later (platform_toolsets_enable). Every tool is in exactly one area (test/unit/context-budget.test.ts). Each area also
 * has its section of the guide (GET /llms.txt?area=<area>), rendered from these tools.
 */
export const toolAreas: Readonly<Record<string, readonly AnyTool[]>> = { ...areaTools, platform: [...areaTools.platform!, platformGuide] };

// Each descriptor names its area: the errors of its calls link that area's section (documentation_url, see invoke()).
for (const [area, list] of Object.entries(toolAreas)) for (const tool of list) tool.area = area;

/**
 * The `core` toolset, what a session gets unless it names toolsets (`default`): one tool per step of the guide's
 * typical flow, across areas, about 22 KB of tools/list; an agent adds areas with platform_toolsets_enable.
 */
export const CORE_TOOLSET: readonly string[] = [
  'apps_create',
  'apps_list',
  'schema_apply',
  'auth_signup',
  'data_insert',
  'data_select',
  'storage_upload_inline',
  'functions_deploy',
  'functions_invoke',
  'functions_logs',
  'frontend_deploy_files',
  'frontend_deploy_get',
  'platform_guide',
  'platform_toolsets_enable',
];

/** The registry: every capability, served as a REST route (when it has one) and as an MCP tool. */
export const tools: readonly AnyTool[] = [
  appsList,
  appsCreate,
  appsGet,
  appsDelete,
  appsRestore,
  appsRegions,
  serviceKeysCreate,
  serviceKeysList,
  serviceKeysRevoke,
  publishableKeysCreate,
  publishableKeysList,
  publishableKeysRevoke,
  substrateKeysCreate,
  substrateKeysList,
  substrateKeysRevoke,
  ...identityTools,
  ...identityMailTools,
  ...oidcTools,
  ...schemaTools,
  ...authTools,
  ...authSettingsTools,
  ...gotrueTools,
  ...gotrueMailTools,
  suggestionsCreate,
  platformHealth,
  platformReady,
  platformGuide,
  platformToolsetsEnable,
  ...storageTools,
  ...realtimeTools,
  ...frontendTools,
  ...domainsTools,
  ...functionsTools,
  // Ahead of the data tools: /v1/{app_id}/{table}/{id} would read /rpc/{function} as table 'rpc'.
  ...rpcTools,
  ...dataTools,
  dataOpenapi,
  ...aiTools,
  ...ragTools,
  ...substrateTools,
  ...substrateMemoryTools,
  ...substrateEntityTools,
  ...substrateLinkTools,
  ...substrateOutboxTools,
  ...substrateRuleTools,
  ...platformBillingTools,
  ...monetizationTools,
  ...peopleTools,
  ...meetingsTools,
  ...integrationsTools,
  ...membersTools,
  ...platformKeysTools,
  auditList,
  ...templatesTools,
  ...branchesTools,
];
