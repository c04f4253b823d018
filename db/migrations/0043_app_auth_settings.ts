import { sql, type Kysely } from 'kysely';

/*
 * An app's end-user auth settings (issue 41): whether a sign-up must confirm its e-mail, whether sign-ups are open,
 * where the links mailed to end users may lead (site_url, redirect_urls), and the app's own SMTP server (sealed with
 * the master key; without one, the platform's SVC_SMTP_URL carries the mail). An app without a row has the defaults:
 * no confirmation, sign-ups open, which is how every app behaved before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table app_auth_settings (
      app_id text primary key references apps(id) on delete cascade,
      confirm_email boolean not null default false,
      allow_signup boolean not null default true,
      site_url text,
      redirect_urls text[] not null default '{}',
      mail_from text,
      smtp_url_sealed text,
      smtp_url_hint text,
      updated_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table app_auth_settings`.execute(db);
}
