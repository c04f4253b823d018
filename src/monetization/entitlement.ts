// Placeholder until the entitlement side lands (it owns this file): whenever an end user's subscription row changes,
// a job recomputes what that user is entitled to. Enqueued in the transaction of the change (the outbox), with a
// job_key per app and user so a burst of events becomes one sync.
import { sql, type Kysely } from 'kysely';

export async function enqueueEntitlementSync(tx: Kysely<any>, appId: string, userId: string): Promise<void> {
  await sql`select graphile_worker.add_job('billing_entitlement_sync', json_build_object('app_id', ${appId}::text, 'user_id', ${userId}::text),
    job_key := ${`entitlement:${appId}:${userId}`}::text)`.execute(tx);
}
