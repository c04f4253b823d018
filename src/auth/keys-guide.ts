// The keys area's hand-written guide (GET /llms.txt?area=keys); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const KEYS_GUIDE: AreaGuide = {
  summary:
    'Extra service keys of an app (full access to that one app, e.g. for a server of your own) and substrate keys; an agent with its platform key and user_token rarely needs them.',
  reference: `
- Service key \`svc_sk_...\`: full access to one app (data as \`svc_service\`, bypassing row-level security); 403
  FORBIDDEN on any other app. Substrate key \`svc_sub_...\`: substrate routes only, never an app database.
- A new key is returned once (\`key\`) and stored hashed; lists show \`hint\` only. Revoking takes effect at once.
`,
};
