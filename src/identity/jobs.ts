// The identity area's jobs: the e-mails a person is sent (address verification, password reset, sign-up), the audit
// log's retention, and the pruning of OAuth clients that registered and went unused.
import { z } from 'zod';
import { defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import { PURGE_AUDIT_SQL } from './audit.ts';
import type { OAuthGrants } from './oauth.ts';
import type { IdentityService } from './service.ts';

/**
 * Mails one person a fresh link, queued with the sign-up or request that asks for it. The token is made here rather
 * than at the request so that no job payload ever holds it. A few attempts only: a person still waiting for the mail
 * asks again, and each attempt's link works anyway.
 */
export const identityMail = defineJob({
  name: 'identity_mail',
  payload: z.object({ person_id: z.string().uuid(), purpose: z.enum(['verify_email', 'reset_password', 'signup_taken']) }),
  maxAttempts: 5,
  handler: async ({ person_id, purpose }, { deps }: JobContext<{ identity: IdentityService }>) => {
    await deps.identity.mail.deliver(person_id, purpose);
  },
});

/** Mails the link that finishes an open sign-up, queued with it; the token is made here, as identity_mail's are. */
export const identitySignupMail = defineJob({
  name: 'identity_signup_mail',
  payload: z.object({ signup_id: z.string().uuid() }),
  maxAttempts: 5,
  handler: async ({ signup_id }, { deps }: JobContext<{ identity: IdentityService }>) => {
    await deps.identity.mail.deliverSignupLink(signup_id);
  },
});

/**
 * Cron: deletes audit log entries older than SVC_AUDIT_RETENTION_DAYS. Daily, since the retention is counted in days;
 * a missed run only leaves a day's entries a day longer.
 */
export const auditPurge = defineCron({
  name: 'audit_purge',
  cron: '29 4 * * *',
  handler: async (_payload, { deps, query, logger }: JobContext<{ config: { auditRetentionDays: number } }>) => {
    const { rowCount } = await query(PURGE_AUDIT_SQL, [deps.config.auditRetentionDays]);
    if (rowCount) logger.info(`deleted ${rowCount} audit log entries older than ${deps.config.auditRetentionDays} days`);
  },
});

/**
 * Cron: drops open sign-ups whose link expired a day ago or more (an address and a password hash nobody confirmed).
 * New sign-ups drop expired ones too, but a quiet platform would otherwise keep them; the day lets a late click still
 * hear that its link expired rather than that it was never mailed.
 */
export const signupRequestsPrune = defineCron({
  name: 'signup_requests_prune',
  cron: '51 * * * *',
  handler: async (_payload, { query, logger }: JobContext<unknown>) => {
    const { rowCount } = await query(`delete from signup_requests where expires_at < now() - interval '1 day'`);
    if (rowCount) logger.info(`deleted ${rowCount} expired sign-up requests`);
  },
});

/**
 * Cron: drops expired OAuth codes and consent pages, tokens a month past their expiry, and the clients that got no
 * token within a day of registering or have had none for a month (OAuthGrants.prune). Hourly, so that registrations
 * nobody completes go soon after their day; a missed run leaves them an hour longer.
 */
export const oauthPrune = defineCron({
  name: 'oauth_prune',
  cron: '47 * * * *',
  handler: async (_payload, { deps, logger }: JobContext<{ oauth: OAuthGrants }>) => {
    const { clients } = await deps.oauth.prune();
    if (clients) logger.info(`pruned ${clients} unused OAuth clients`);
  },
});
