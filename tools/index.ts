import type { AnyTool } from '../src/core/define.ts';
import { appsCreate, appsDelete, appsGet, appsList } from './apps/apps.ts';
import { serviceKeysCreate, serviceKeysList, serviceKeysRevoke, substrateKeysCreate, substrateKeysList, substrateKeysRevoke } from './keys/keys.ts';
import { schemaTools } from './schema/schema.ts';
import { authTools } from './auth/auth.ts';
import { dataTools } from './data/data.ts';
import { frontendTools } from './frontend/frontend.ts';
import { storageTools } from './storage/storage.ts';
import { functionsTools } from './functions/functions.ts';
import { platformGuide, platformHealth, platformReady, suggestionsCreate } from './platform/platform.ts';

/** The registry: every capability, served as a REST route (when it has one) and as an MCP tool. */
export const tools: readonly AnyTool[] = [
  appsList,
  appsCreate,
  appsGet,
  appsDelete,
  serviceKeysCreate,
  serviceKeysList,
  serviceKeysRevoke,
  substrateKeysCreate,
  substrateKeysList,
  substrateKeysRevoke,
  ...schemaTools,
  ...authTools,
  suggestionsCreate,
  platformHealth,
  platformReady,
  platformGuide,
  ...storageTools,
  ...frontendTools,
  ...functionsTools,
  ...dataTools,
];
