-- App-database migration 2: the RAG store (schema svc_rag: the data API reads only `public`, so it never exposes it).
-- Until versioned migrations RAG created these tables on first use, so an app database of the previous release may
-- already have them: every statement is idempotent, which brings both states to the same one.
-- vector(1536) is RAG_DIMENSIONS (src/rag/store.sql.ts); a later change of it is a new migration, never an edit here.

-- Processes of the previous release may still create this schema lazily during a rolling upgrade, under this same
-- transaction-scoped lock; taking it too keeps the two from colliding in the catalog.
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
  embedding vector(1536) not null,
  primary key (document_id, chunk_index)
);
create index if not exists chunks_embedding_idx on svc_rag.chunks using hnsw (embedding vector_cosine_ops);
create index if not exists chunks_metadata_idx on svc_rag.chunks using gin (metadata jsonb_path_ops);
create index if not exists chunks_collection_idx on svc_rag.chunks (collection_id);
