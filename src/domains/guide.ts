// The domains area's hand-written guide (GET /llms.txt?area=domains); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';
import { CHALLENGE_LABEL, HOST_CACHE_TTL_MS, MAX_DOMAINS_PER_APP, VERIFICATION_PREFIX } from './types.ts';

export const DOMAINS_GUIDE: AreaGuide = {
  summary: "Serve an app's site on your own domain (pro plans), proven by a DNS TXT record.",
  reference: `
## Flow

1. \`domains_add { app_id, domain: "www.example.com" }\` (201) returns the domain, status \`pending\` and
   \`verification: { type: "TXT", name: "${CHALLENGE_LABEL}.www.example.com", value: "${VERIFICATION_PREFIX}<token>" }\`.
2. At the domain's DNS provider: publish that TXT record, and point the domain itself at the platform (a CNAME to its
   host, or the address of the operator's proxy).
3. \`domains_verify { app_id, domain }\` looks the TXT record up at once: status \`verified\`, and \`url\`
   (\`https://<domain>/\`) serves the app's live site. Until the record is visible it is 409 \`DOMAIN_NOT_VERIFIED\`
   with \`details.record\` (what to publish) and \`details.found\` (up to 5 TXT values DNS has there): DNS changes can
   take minutes, so call it again later.

A verified domain is served exactly like the app's subdomain: the live site at \`/\` and the app's short paths
(\`/data/{table}\`, \`/auth/login\`, \`/fn/{name}\`, ...). The platform speaks plain HTTP behind the operator's proxy:
TLS (a certificate for the domain) is the proxy's job. Deploy the site with frontend_deploy_files as usual.

## Rules and errors

- Plans: pro and enterprise. On free, \`domains_add\` and \`domains_verify\` are 403 \`PLAN_UPGRADE_REQUIRED\`
  (\`details: { feature: "custom_domains", plan, required_plan: "pro" }\`; an owner upgrades with billing_checkout);
  a verified domain of an account back on free stops serving.
- A domain is a lowercased host name of two or more labels (1-63 of a-z, 0-9, '-', not at either end), at most 253
  characters; not an IP address, not the platform's own host nor a name under its subdomain routing domain: else 400
  \`VALIDATION_FAILED\` naming \`domain\`. At most ${MAX_DOMAINS_PER_APP} per app (409 \`CONFLICT\`).
- One app holds a domain verified: adding or verifying one that another app verified is 409 \`CONFLICT\`; adding the
  same domain twice to an app is 409 too (verify it instead). Several apps may hold it pending, each with its own token.
- No answer from DNS is 503 \`SERVICE_UNAVAILABLE\` (retry later).
- \`domains_remove\` stops serving at once on the instance that answered it, within ${HOST_CACHE_TTL_MS / 1000} s on others.
`,
};
