// The auth area's jobs: end users' e-mails (supabase-js's auth flows) and the rate-limit windows' cleanup.
import { z } from 'zod';
import { defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import type { EndUserMails } from './mail-flows.ts';
import { PURGE_RATE_LIMITS_SQL } from './rate-limit.ts';

const AuthUserMailPayloadSchema = z.object({
  app_id: z.string(),
  user_id: z.string().uuid(),
  kind: z.enum(['confirmation', 'magiclink', 'recovery', 'email_change']),
  /** Where the mail goes: the user's address, or the new one of an e-mail change. */
  email: z.string(),
  redirect_to: z.string().nullable(),
  code_challenge: z.string().nullable(),
  code_challenge_method: z.enum(['s256', 'plain']).nullable(),
});
export type AuthUserMailPayload = z.infer<typeof AuthUserMailPayloadSchema>;

/**
 * Mails an end user a link and a code, queued by the route that asks for it. The token is made here, not at the
 * request, so that no payload holds it; a retry mails a new one, and each mailed token works until it expires.
 */
export const authUserMail = defineJob({
  name: 'auth_user_mail',
  payload: AuthUserMailPayloadSchema,
  maxAttempts: 5,
  handler: async (payload, { deps }: JobContext<{ endUserMails: EndUserMails }>) => {
    await deps.endUserMails.deliver(payload);
  },
});

/**
 * Cron: drops rate-limit windows that can no longer count. graphile-worker runs on the control pool, so
 * its own query helper reaches the rate_limits table; deleting twice is harmless.
 */
export const rateLimitsPurge = defineCron({
  name: 'rate_limits_purge',
  cron: '*/5 * * * *',
  handler: async (_payload, { query, logger }) => {
    const { rowCount } = await query(PURGE_RATE_LIMITS_SQL);
    if (rowCount) logger.debug(`purged ${rowCount} old rate-limit windows`);
  },
});
