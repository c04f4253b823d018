import { sql, type Kysely } from 'kysely';

/**
 * Regions, templates and clones (src/templates/).
 * - apps.region: the region whose cluster holds the app's database (SVC_DEFAULT_REGION, SVC_REGIONS); null for apps
 *   made before regions, which are in the default region.
 * - apps.status 'cloning': the app a clone is building, invisible to callers like 'provisioning' but not reaped by
 *   age (a clone may wait on a retry); deleting its clone removes it.
 * - templates: apps published as templates, by their owner or shipped in the repository (slug, shipped_version).
 *   `options` says how a clone treats what is not copied as is: each function variable (copy, secret the new owner
 *   supplies, generated per clone), the tables whose rows are seed data, the collections whose documents are copied,
 *   whether the clone links the substrate.
 * - template_clones: one clone job; `status` is the step running (or queued, ready, failed); `source` is the
 *   template as it was when the clone was asked for (what the clone copies, pinned), `progress` what steps made.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table apps add column region text;
    alter table apps drop constraint apps_status_check;
    alter table apps add constraint apps_status_check check (status in ('provisioning', 'cloning', 'ready'));

    create table templates (
      app_id text primary key references apps(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      slug text unique,
      shipped_version text,
      title text not null check (char_length(title) between 1 and 200),
      description text not null default '',
      visibility text not null check (visibility in ('account', 'public')),
      options jsonb not null default '{}',
      published_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index templates_account_idx on templates (account_id);
    create index templates_public_idx on templates (visibility) where visibility = 'public';

    create table template_clones (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      template_app_id text not null,
      template_version text not null,
      app_id text not null unique references apps(id) on delete cascade,
      name text not null,
      region text not null,
      status text not null default 'queued'
        check (status in ('queued', 'database', 'schema', 'functions', 'site', 'ai_rag', 'integrations', 'billing', 'seed', 'ready', 'failed')),
      failed_step text,
      error text,
      attempts integer not null default 0,
      source jsonb not null,
      progress jsonb not null default '{}',
      todo jsonb not null default '[]',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      finished_at timestamptz
    );
    create index template_clones_account_idx on template_clones (account_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table template_clones;
    drop table templates;
    delete from apps where status = 'cloning';
    alter table apps drop constraint apps_status_check;
    alter table apps add constraint apps_status_check check (status in ('provisioning', 'ready'));
    alter table apps drop column region;
  `.execute(db);
}
