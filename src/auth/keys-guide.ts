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
- Publishable key \`svc_pub_...\`: an app's key for browsers and public clients (supabase-js's key), not a secret;
  every app gets one with \`apps_create\` (\`publishable_key\`). It acts as an anonymous caller (\`svc_anon\`: public
  tables) on its own app only (403 elsewhere, 401 on platform routes); with an end user's token in \`Authorization\`
  beside it, the request is that user's. Sent as \`Authorization: Bearer\` or, without Authorization, as \`apikey\`
  (which also takes the app's service key). \`publishable_keys_list\` shows the keys themselves; create, then revoke to rotate.
- Roles in an account, highest first: owner, admin, developer, viewer. Platform keys and people's sessions carry one;
  read-only tools need viewer, the rest developer unless a tool says more; below it: 403 FORBIDDEN_ROLE naming the role.
- People sign in over REST only (\`/dashboard/signup\`, \`/dashboard/signin\`): the session is the HttpOnly cookie
  \`svc_session\` (\`__Host-svc_session\` under https), accepted wherever a platform key is; a write with it from another origin is 403 CROSS_SITE_REQUEST.
`,
};
