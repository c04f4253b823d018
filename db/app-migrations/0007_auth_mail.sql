-- App-database migration 7: the end-user flows that go through e-mail (supabase-js's auth: confirmation of a sign-up,
-- one-time codes and magic links, password recovery, e-mail change) and PKCE's authorization codes.
-- A user made by a one-time code has no password until it sets one.
alter table svc_auth.users alter column password_hash drop not null;
alter table svc_auth.users add column if not exists email_confirmed_at timestamptz;
alter table svc_auth.users add column if not exists new_email text;
-- Users before this migration signed up without confirmation: their addresses count as confirmed.
update svc_auth.users set email_confirmed_at = created_at where email_confirmed_at is null;

-- What a mail carried: the link's token and the code, both hashed; a code is void after 5 wrong tries.
create table if not exists svc_auth.one_time_tokens (
  id bigint generated always as identity primary key,
  user_id uuid not null references svc_auth.users(id) on delete cascade,
  kind text not null check (kind in ('confirmation', 'magiclink', 'recovery', 'email_change')),
  token_hash text not null unique,
  otp_hash text not null,
  attempts int not null default 0,
  email text not null,
  redirect_to text,
  code_challenge text,
  code_challenge_method text check (code_challenge_method in ('s256', 'plain')),
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index if not exists one_time_tokens_user_idx on svc_auth.one_time_tokens (user_id, kind);

-- PKCE: the code a verified link hands to the page, exchanged once with the verifier for a session.
create table if not exists svc_auth.flow_states (
  auth_code_hash text primary key,
  user_id uuid not null references svc_auth.users(id) on delete cascade,
  code_challenge text not null,
  code_challenge_method text not null check (code_challenge_method in ('s256', 'plain')),
  authentication_method text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
