-- App-database migration 6: what supabase-js's auth (GoTrue's protocol, served at /v1/{app_id}/auth/v1) keeps of an
-- end user beside the platform's fields: the metadata a sign-up's `data` and updateUser set (user_metadata, in the
-- access token too) and when the user last changed.
alter table svc_auth.users add column if not exists raw_user_meta_data jsonb not null default '{}'::jsonb;
alter table svc_auth.users add column if not exists updated_at timestamptz;
