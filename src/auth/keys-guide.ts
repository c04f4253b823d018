// The keys area's hand-written guide (GET /llms.txt?area=keys); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const KEYS_GUIDE: AreaGuide = {
  summary:
    'Credentials: extra service keys of an app and substrate keys (an agent with its platform key rarely needs them); people\'s sign-in and roles.',
  reference: `
- Service key \`svc_sk_...\`: full access to one app (data as \`svc_service\`, bypassing row-level security); 403
  FORBIDDEN on any other app. Substrate key \`svc_sub_...\`: substrate routes only, never an app database; a
  person's own, minted signed in (a platform key gets 403 HUMAN_CONFIRMATION_REQUIRED).
- A new key is returned once (\`key\`) and stored hashed; lists show \`hint\` only. Revoking takes effect at once.
- Roles in an account, highest first: owner, admin, developer, viewer. Platform keys and people's sessions carry one;
  read-only tools need viewer, the rest developer unless a tool says more; below it: 403 FORBIDDEN_ROLE naming the role.
- People sign in over REST only (\`/dashboard/signup\`, \`/dashboard/signin\`): the session is the HttpOnly cookie
  \`svc_session\` (\`__Host-svc_session\` under https), accepted wherever a platform key is; a write with it from another origin is 403 CROSS_SITE_REQUEST.
`,
};
