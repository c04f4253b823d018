import type { ColumnType, Generated } from 'kysely';

type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface ControlDatabase {
  accounts: { id: Generated<string>; name: string; created_at: CreatedAt };
  platform_keys: { id: Generated<string>; account_id: string; key_hash: string; hint: string; name: string; created_at: CreatedAt };
  apps: {
    id: string;
    account_id: string;
    name: string;
    subdomain: string;
    db_name: string;
    status: 'provisioning' | 'ready';
    created_at: CreatedAt;
    last_request_at: Generated<Date>;
    paused_at: Date | null;
  };
  app_signing_keys: {
    app_id: string;
    kid: string;
    alg: string;
    public_jwk: ColumnType<Record<string, unknown>, string, string>;
    private_key_sealed: string;
    created_at: CreatedAt;
  };
  service_keys: { id: Generated<string>; app_id: string; key_hash: string; hint: string; name: string; created_at: CreatedAt };
  substrate_keys: { id: Generated<string>; account_id: string; key_hash: string; hint: string; name: string; created_at: CreatedAt };
  suggestions: {
    id: Generated<string>;
    account_id: string | null;
    category: string;
    description: string;
    severity: string | null;
    affected_tool: string | null;
    proposed_solution: string | null;
    source: string | null;
    created_at: CreatedAt;
  };
}
