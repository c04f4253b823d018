// The RAG tables of an app database (schema svc_rag: the data API reads only `public`, so it never exposes them).

/** Every collection embeds at this size (text-embedding-3-large is asked for it with `dimensions`). */
export const RAG_DIMENSIONS = 1536;

/**
 * Idempotent, so it serves apps created before RAG existed too; run under a transaction-scoped advisory lock,
 * since concurrent CREATE ... IF NOT EXISTS can still collide in the catalog.
 */
export const RAG_SCHEMA_SQL = `
select pg_advisory_xact_lock(hashtext('svc_rag schema'));
create schema if not exists svc_rag;
revoke all on schema svc_rag from public;
create table if not exists svc_rag.collections (
  id uuid primary key default gen_random_uuid(),
  name text not null unique,
  description text,
  access_mode text not null default 'private' check (access_mode in ('private', 'shared', 'custom')),
  chunk_size integer not null check (chunk_size between 32 and 8000),
  chunk_overlap integer not null check (chunk_overlap >= 0),
  embedding_model text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create table if not exists svc_rag.documents (
  id uuid primary key default gen_random_uuid(),
  collection_id uuid not null references svc_rag.collections(id) on delete cascade,
  filename text,
  status text not null default 'pending' check (status in ('pending', 'processing', 'ready', 'failed')),
  chunk_count integer not null default 0,
  metadata jsonb not null default '{}',
  error_message text,
  owner_user_id uuid,
  source_text text,
  storage_object_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists documents_collection_idx on svc_rag.documents (collection_id, created_at);
create table if not exists svc_rag.chunks (
  document_id uuid not null references svc_rag.documents(id) on delete cascade,
  chunk_index integer not null,
  collection_id uuid not null,
  text text not null,
  metadata jsonb not null default '{}',
  embedding vector(${RAG_DIMENSIONS}) not null,
  primary key (document_id, chunk_index)
);
create index if not exists chunks_embedding_idx on svc_rag.chunks using hnsw (embedding vector_cosine_ops);
create index if not exists chunks_metadata_idx on svc_rag.chunks using gin (metadata jsonb_path_ops);
create index if not exists chunks_collection_idx on svc_rag.chunks (collection_id);
`;
