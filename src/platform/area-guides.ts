// The hand-written part of each area's section of the guide (GET /llms.txt?area=<area>): what the area is for (also
// its line in the index of /llms.txt) and the reference detail that tool descriptions leave out (formats, limits,
// errors, rules). src/platform/docs.ts renders it above the area's generated tool reference. Each area's guide lives
// beside its code; this list only assembles them, in the order of the areas in /llms.txt. An area registered in
// tools/index.ts without an entry here still gets its index line and section, from its tools' titles.
import { AI_GUIDE } from '../ai/guide.ts';
import { APPS_GUIDE } from '../apps/guide.ts';
import { AUTH_GUIDE } from '../auth/guide.ts';
import { KEYS_GUIDE } from '../auth/keys-guide.ts';
import { BILLING_GUIDE } from '../billing/guide.ts';
import { DATA_GUIDE } from '../data/guide.ts';
import { DOMAINS_GUIDE } from '../domains/guide.ts';
import { FRONTEND_GUIDE } from '../frontend/guide.ts';
import { FUNCTIONS_GUIDE } from '../functions/guide.ts';
import { INTEGRATIONS_GUIDE } from '../integrations/guide.ts';
import { MEETINGS_GUIDE } from '../meetings/guide.ts';
import { MEMBERS_GUIDE } from '../identity/members-guide.ts';
import { PEOPLE_GUIDE } from '../people/guide.ts';
import { RAG_GUIDE } from '../rag/guide.ts';
import { REALTIME_GUIDE } from '../realtime/guide.ts';
import { SCHEMA_GUIDE } from '../schema/guide.ts';
import { STORAGE_GUIDE } from '../storage/guide.ts';
import { SUBSTRATE_GUIDE } from '../substrate/guide.ts';
import { MEMORY_GUIDE } from '../substrate/memory-guide.ts';
import { OUTBOX_GUIDE } from '../substrate/outbox-guide.ts';
import { RULES_GUIDE } from '../substrate/rules-guide.ts';
import { TEMPLATES_GUIDE } from '../templates/guide.ts';
import { BRANCHES_GUIDE } from '../branches/guide.ts';
import { PLATFORM_GUIDE } from './guide.ts';
import type { AreaGuide } from './area-guide.ts';

export const AREA_GUIDES: Readonly<Record<string, AreaGuide>> = {
  apps: APPS_GUIDE,
  keys: KEYS_GUIDE,
  schema: SCHEMA_GUIDE,
  auth: AUTH_GUIDE,
  platform: PLATFORM_GUIDE,
  storage: STORAGE_GUIDE,
  realtime: REALTIME_GUIDE,
  frontend: FRONTEND_GUIDE,
  domains: DOMAINS_GUIDE,
  functions: FUNCTIONS_GUIDE,
  data: DATA_GUIDE,
  ai: AI_GUIDE,
  rag: RAG_GUIDE,
  substrate: SUBSTRATE_GUIDE,
  memory: MEMORY_GUIDE,
  outbox: OUTBOX_GUIDE,
  billing: BILLING_GUIDE,
  meetings: MEETINGS_GUIDE,
  people: PEOPLE_GUIDE,
  integrations: INTEGRATIONS_GUIDE,
  rules: RULES_GUIDE,
  members: MEMBERS_GUIDE,
  templates: TEMPLATES_GUIDE,
  branches: BRANCHES_GUIDE,
};
