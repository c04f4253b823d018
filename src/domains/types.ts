import { z } from 'zod';
import { MAX_DOMAIN_LENGTH } from './names.ts';

export const DOMAIN_STATUSES = ['pending', 'verified'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** Where the proof of control is published: `_svc-challenge.<domain>`, a TXT record holding `svc-verification=<token>`. */
export const CHALLENGE_LABEL = '_svc-challenge';
export const VERIFICATION_PREFIX = 'svc-verification=';
/** Custom domains one app may hold, pending and verified together. */
export const MAX_DOMAINS_PER_APP = 20;
/** How long a process trusts what it read about a Host (which app serves it, or none). */
export const HOST_CACHE_TTL_MS = 30_000;

export const DomainNameSchema = z
  .string()
  .min(1, 'domain must not be empty')
  .max(MAX_DOMAIN_LENGTH + 10, `a domain is at most ${MAX_DOMAIN_LENGTH} characters`)
  .describe('A host name you control, e.g. www.example.com (lowercased)');

export const DomainSchema = z.object({
  domain: z.string(),
  app_id: z.string(),
  status: z.enum(DOMAIN_STATUSES).describe('pending until domains_verify finds the TXT record; verified: the site is served at url'),
  verification: z
    .object({ type: z.literal('TXT'), name: z.string(), value: z.string() })
    .describe('The DNS record that proves control: publish a TXT record at name holding value'),
  url: z.string().describe('Where the site is served once verified (TLS by the operator\'s proxy)'),
  verified_at: z.string().nullable(),
  created_at: z.string(),
});
export type DomainView = z.infer<typeof DomainSchema>;
