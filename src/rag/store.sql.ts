// The RAG tables of an app database (schema svc_rag: the data API reads only `public`, so it never exposes them) are
// made by the app-database migration db/app-migrations/0002_rag.sql; a change to them is a new migration there.

/**
 * Every collection embeds at this size (text-embedding-3-large is asked for it with `dimensions`). The column
 * svc_rag.chunks.embedding is vector(1536) in 0002_rag.sql: changing this needs a migration of the column too.
 */
export const RAG_DIMENSIONS = 1536;
