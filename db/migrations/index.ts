import type { Migration } from 'kysely/migration';
import * as core from './0001_core.ts';
import * as rateLimits from './0002_rate_limits.ts';
import * as storage from './0003_storage.ts';
import * as frontend from './0004_frontend.ts';
import * as functions from './0005_functions.ts';
import * as workerHeartbeats from './0006_worker_heartbeats.ts';
import * as aiCredits from './0007_ai_credits.ts';
import * as substrate from './0008_substrate.ts';
import * as substrateEntities from './0009_substrate_entities.ts';
import * as substrateArtifacts from './0010_substrate_artifacts.ts';
import * as substrateAppLinks from './0011_substrate_app_links.ts';
import * as substrateOutbox from './0012_substrate_outbox.ts';
import * as substrateStream from './0013_substrate_stream.ts';
import * as substrateRules from './0014_substrate_rules.ts';
import * as billing from './0015_billing.ts';
import * as monetization from './0016_monetization.ts';
import * as people from './0017_people.ts';
import * as meetings from './0018_meetings.ts';
import * as integrations from './0019_integrations.ts';
import * as billingOverage from './0020_billing_overage.ts';
import * as meetingsAppDelete from './0021_meetings_app_delete.ts';
import * as wsTicketCredential from './0022_ws_ticket_credential.ts';
import * as creditShortfall from './0023_credit_shortfall.ts';
import * as persons from './0024_persons.ts';
import * as oauth from './0025_oauth.ts';
import * as oidc from './0026_oidc.ts';
import * as creditOverage from './0027_credit_overage.ts';
import * as appDomains from './0028_app_domains.ts';
import * as templates from './0029_templates.ts';
import * as crmSubstrate from './0030_crm_substrate.ts';
import * as appOrdersIndex from './0031_app_orders_index.ts';
import * as functionMetrics from './0032_function_metrics.ts';
import * as substrateStreamUser from './0033_substrate_stream_user.ts';
import * as mcpSessions from './0034_mcp_sessions.ts';
import * as signupRequests from './0035_signup_requests.ts';
import * as credentialPersons from './0036_credential_persons.ts';
import * as templateSeedSnapshots from './0037_template_seed_snapshots.ts';
import * as functionLogBytes from './0038_function_log_bytes.ts';
import * as oauthAudience from './0039_oauth_audience.ts';
import * as mcpSubscriptions from './0040_mcp_subscriptions.ts';
import * as publishableKeys from './0041_publishable_keys.ts';
import * as storageBuckets from './0042_storage_buckets.ts';
import * as appAuthSettings from './0043_app_auth_settings.ts';
import * as realtimeMessages from './0044_realtime_messages.ts';
import * as realtimeStored from './0045_realtime_stored.ts';
import * as branches from './0046_branches.ts';
import * as keyNotices from './0047_key_notices.ts';
import * as aiChargedInAdvance from './0048_ai_charged_in_advance.ts';
import * as aiCallWriteCosts from './0049_ai_call_write_costs.ts';

/** Control-plane migrations in order; kysely applies the ones not yet recorded. */
export const migrations: Record<string, Migration> = {
  '0001_core': core,
  '0002_rate_limits': rateLimits,
  '0003_storage': storage,
  '0004_frontend': frontend,
  '0005_functions': functions,
  '0006_worker_heartbeats': workerHeartbeats,
  '0007_ai_credits': aiCredits,
  '0008_substrate': substrate,
  '0009_substrate_entities': substrateEntities,
  '0010_substrate_artifacts': substrateArtifacts,
  '0011_substrate_app_links': substrateAppLinks,
  '0012_substrate_outbox': substrateOutbox,
  '0013_substrate_stream': substrateStream,
  '0014_substrate_rules': substrateRules,
  '0015_billing': billing,
  '0016_monetization': monetization,
  '0017_people': people,
  '0018_meetings': meetings,
  '0019_integrations': integrations,
  '0020_billing_overage': billingOverage,
  '0021_meetings_app_delete': meetingsAppDelete,
  '0022_ws_ticket_credential': wsTicketCredential,
  '0023_credit_shortfall': creditShortfall,
  '0024_persons': persons,
  '0025_oauth': oauth,
  '0026_oidc': oidc,
  '0027_credit_overage': creditOverage,
  '0028_app_domains': appDomains,
  '0029_templates': templates,
  '0030_crm_substrate': crmSubstrate,
  '0031_app_orders_index': appOrdersIndex,
  '0032_function_metrics': functionMetrics,
  '0033_substrate_stream_user': substrateStreamUser,
  '0034_mcp_sessions': mcpSessions,
  '0035_signup_requests': signupRequests,
  '0036_credential_persons': credentialPersons,
  '0037_template_seed_snapshots': templateSeedSnapshots,
  '0038_function_log_bytes': functionLogBytes,
  '0039_oauth_audience': oauthAudience,
  '0040_mcp_subscriptions': mcpSubscriptions,
  '0041_publishable_keys': publishableKeys,
  '0042_storage_buckets': storageBuckets,
  '0043_app_auth_settings': appAuthSettings,
  '0044_realtime_messages': realtimeMessages,
  '0045_realtime_stored': realtimeStored,
  '0046_branches': branches,
  '0047_key_notices': keyNotices,
  '0048_ai_charged_in_advance': aiChargedInAdvance,
  '0049_ai_call_write_costs': aiCallWriteCosts,
};
