// Custom domains of an app's site (pro and enterprise plans): add, verify by DNS TXT record, list, remove.
import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { DomainNameSchema, DomainSchema } from '../../src/domains/types.ts';
import { guideRef } from '../shared.ts';

type Uses = 'domains';
const defineTool = toolsUsing<Uses>();

const BASE = '/v1/{app_id}/domains';
const input = z.object({ app_id: AppIdSchema, domain: DomainNameSchema });
const audit = (action: string) => ({ action: `domain.${action}`, resource: 'domain', id: (i: { domain: string }) => i.domain.toLowerCase() });

export const domainsAdd = defineTool({
  name: 'domains_add',
  title: 'Add a custom domain',
  description:
    "Serve the app's site on a domain you control (pro and enterprise plans; free: 403 PLAN_UPGRADE_REQUIRED). Returns status pending " +
    'and `verification`, the TXT record to publish. Next: publish it, point the domain at the platform, then domains_verify. ' +
    `DNS and TLS: ${guideRef('domains')}.`,
  input,
  output: DomainSchema,
  // A domain changes where the app answers on the web: the account's admins decide.
  role: 'admin',
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: BASE, status: 201 },
  annotations: { destructiveHint: false, idempotentHint: false },
  audit: audit('add'),
  handler: async (input, ctx) => ctx.services.domains.add(ctx.app!, input.domain),
});

export const domainsList = defineTool({
  name: 'domains_list',
  title: 'List custom domains',
  description: "The app's custom domains: status (pending or verified), the TXT record each needs and the url serving the site once verified.",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ domains: z.array(DomainSchema) }),
  auth: ['platform'],
  appScoped: true,
  http: { method: 'GET', path: BASE },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ domains: await ctx.services.domains.list(ctx.app!.id) }),
});

export const domainsVerify = defineTool({
  name: 'domains_verify',
  title: 'Verify a custom domain',
  description:
    "Look the domain's TXT record up now: status verified, and `url` serves the site. Record missing or wrong: 409 DOMAIN_NOT_VERIFIED " +
    '(details.found: what DNS has); DNS changes can take minutes, so call it again later.',
  input,
  output: DomainSchema,
  role: 'admin',
  auth: ['platform'],
  appScoped: true,
  // Checking a domain's DNS again changes nothing but its verified state.
  governed: false,
  http: { method: 'POST', path: `${BASE}/{domain}/verify` },
  annotations: { idempotentHint: true, openWorldHint: true },
  audit: { ...audit('verify'), details: (_input, out) => ({ status: out.status }) },
  handler: async (input, ctx) => ctx.services.domains.verify(ctx.app!, input.domain),
});

export const domainsRemove = defineTool({
  name: 'domains_remove',
  title: 'Remove a custom domain',
  description: 'Remove a custom domain from the app: its host stops serving the app. Returns { deleted: true, domain }.',
  input,
  output: z.object({ deleted: z.literal(true), domain: z.string() }),
  role: 'admin',
  auth: ['platform'],
  appScoped: true,
  http: { method: 'DELETE', path: `${BASE}/{domain}` },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: audit('remove'),
  handler: async (input, ctx) => ctx.services.domains.remove(ctx.app!.id, input.domain),
});

/** Registered before the data tools: DELETE /v1/{app_id}/{table}/{id} would otherwise take DELETE .../domains/{domain}. */
export const domainsTools: readonly AnyTool[] = [domainsAdd, domainsList, domainsVerify, domainsRemove];
