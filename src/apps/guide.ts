// The apps area's hand-written guide (GET /llms.txt?area=apps); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const APPS_GUIDE: AreaGuide = {
  summary: 'Create, list, read and delete apps; each app has its own Postgres database and a service key shown once.',
  reference: `
- \`apps_create\` (POST /init) returns \`app_id\`, \`name\`, \`subdomain\`, \`url\`, \`created_at\`, \`service_key\`
  \`{ id, name, hint, created_at, key }\` and \`publishable_key\`: the service key is shown once and stored hashed;
  keep it server side. The publishable key is for browsers (anonymous on this app; see keys). A lost key
  cannot be recovered: create another (service_keys_create, toolset \`keys\`) and revoke the old one.
- Each app database has the extensions vector and pgcrypto, the roles \`svc_anon\`, \`svc_user\`, \`svc_service\` and
  \`current_user_id()\`. With subdomain routing on, the app's host is \`{subdomain}.{base_domain}\` and app-scoped tools
  also answer on the short paths shown as "app host".
- Regions: \`apps_create { name, region }\` places the app's database on that region's Postgres cluster (\`apps_regions\`
  lists them; an unknown one is a 400 naming the valid ones). An app stays in its region; the operator names regions
  with SVC_DEFAULT_REGION and SVC_REGIONS.
- \`apps_delete\` drops the database, the files, sites and functions, and revokes every key of the app; it cannot be undone.
`,
};
