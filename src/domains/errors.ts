// The errors of custom domains: the plan that lacks them, a TXT record not (yet) in DNS, and DNS out of reach.
import { AppError } from '../core/errors.ts';
import type { DomainView } from './types.ts';

/** TXT values named in DOMAIN_NOT_VERIFIED, and how much of each. */
const FOUND_MAX = 5;
const FOUND_MAX_LENGTH = 100;
/** DNS lookups fail for passing reasons (a server timing out); retrying at once rarely helps. */
const DNS_RETRY_AFTER_SECONDS = 30;

export const domainErrors = {
  planUpgradeRequired: (plan: string) =>
    new AppError(
      403,
      'PLAN_UPGRADE_REQUIRED',
      `Custom domains are a feature of the pro and enterprise plans; this account is on ${plan}.`,
      'An owner of the account upgrades with billing_checkout { "planId": "pro" } (POST /dashboard/billing/checkout); then add the domain again.',
      { feature: 'custom_domains', plan, required_plan: 'pro' },
    ),
  notVerified: (record: DomainView['verification'], found: readonly string[]) =>
    new AppError(
      409,
      'DOMAIN_NOT_VERIFIED',
      `DNS has no TXT record ${record.name} holding ${record.value}.`,
      'Add the TXT record (details.record) at the DNS provider of the domain; DNS changes can take minutes to appear; then call domains_verify again.',
      { record, found: found.slice(0, FOUND_MAX).map((v) => (v.length > FOUND_MAX_LENGTH ? `${v.slice(0, FOUND_MAX_LENGTH)}…` : v)) },
    ),
  dnsUnavailable: (name: string, code: string) =>
    new AppError(
      503,
      'SERVICE_UNAVAILABLE',
      `The DNS lookup of ${name} got no answer (${code}).`,
      `Retry in ${DNS_RETRY_AFTER_SECONDS} s; if it persists, the operator should check the platform's DNS servers (SVC_DNS_SERVERS).`,
      { retry_after_seconds: DNS_RETRY_AFTER_SECONDS },
    ),
};
