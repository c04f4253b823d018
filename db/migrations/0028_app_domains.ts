import { sql, type Kysely } from 'kysely';

/**
 * Custom domains of apps' sites (src/domains/), pro and enterprise plans. An app claims a domain (pending) and proves
 * control of it with a DNS TXT record carrying `token`; the domain is then verified and serves the app's site. Several
 * apps may claim one domain while it is pending, each with its own token; at most one holds it verified (the partial
 * unique index, which is also the serving lookup's index).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table app_domains (
      app_id text not null references apps(id) on delete cascade,
      domain text not null check (char_length(domain) between 1 and 253),
      status text not null default 'pending' check (status in ('pending', 'verified')),
      token text not null,
      created_at timestamptz not null default now(),
      verified_at timestamptz,
      primary key (app_id, domain)
    );
    create unique index app_domains_verified_idx on app_domains (domain) where status = 'verified';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table app_domains`.execute(db);
}
