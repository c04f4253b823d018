// The outbox area's hand-written guide (GET /llms.txt?area=outbox); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const OUTBOX_GUIDE: AreaGuide = {
  summary: 'Webhooks that receive the substrate actions of a capability as they execute, signed, retried and listable, with redelivery of dead ones.',
  reference: `
substrate_outbox_target_set { capability, webhook_url, signing_secret (>= 8), source_app_id? }: every executed action
of the capability (from that app only, with source_app_id) is POSTed as JSON { delivery_id, action_id, capability,
payload, result, proposer_kind, source_app_id, source_rule_id, created_at } with X-Svc-Signature: sha256=<hex
HMAC-SHA256 of the raw body with the secret>, X-Svc-Timestamp and X-Svc-Delivery. Non-2xx or network errors are
retried with backoff up to the operator's attempt limit (default 8), then the delivery is dead:
substrate_outbox_deliveries_list (status, limit) shows it, substrate_outbox_redeliver sends it again. URLs resolving to
private or loopback addresses are refused (400 OUTBOUND_ADDRESS_REFUSED) unless the operator allows them.
`,
};
