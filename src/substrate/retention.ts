// How long the substrate keeps its delivery and firing records (the daily substrate_prune job).

/** Outbox deliveries that ended (delivered or dead) are kept this long for listing and redelivery. */
export const DELIVERY_RETENTION_DAYS = 90;
/** Rule firings that found nothing to act on (one per schedule slot) are kept this long; the others as long as their rule. */
export const EMPTY_FIRING_RETENTION_DAYS = 7;

export const PRUNE_SUBSTRATE_SQL = `
delete from substrate_outbox_deliveries
  where status in ('delivered', 'dead') and updated_at < now() - interval '${DELIVERY_RETENTION_DAYS} days';
delete from substrate_attention_rule_firings
  where bindings_count = 0 and proposals = '[]'::jsonb and skip_reason is null and created_at < now() - interval '${EMPTY_FIRING_RETENTION_DAYS} days';`;
