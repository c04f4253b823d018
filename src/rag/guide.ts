// The rag area's hand-written guide (GET /llms.txt?area=rag); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const RAG_GUIDE: AreaGuide = {
  summary:
    "Retrieval over an app's documents: collections, asynchronous ingestion of texts and files (chunked, embedded via the AI gateway), similarity queries with filters and cited answers.",
  reference: `
## Flow

\`rag_collections_create\` -> \`rag_ingest\` (text, or \`storage_object_id\` of a stored file) answers 202 with a
\`documentId\` -> poll \`rag_documents_get\` until \`status\` is \`ready\` (\`chunkCount\` set) or \`failed\`
(\`errorMessage\` says why) -> \`rag_query\` (\`synthesize: true\` for an answer that cites the chunks as [1], [2]).

## Access

- \`private\` (default): only the app's keys. \`shared\`: end users (their JWT, or a key with user_token) may list,
  read and query every document, but not ingest or delete. \`custom\`: end users ingest documents they own, and see
  (list, read, query) only the documents without an owner (ingested with a key) and their own; they delete only
  their own. Creating and deleting collections needs a key. Another app's credentials get 403.

## Ingestion

- Files: text, Markdown, HTML (visible text), PDF, DOCX and JSON; anything else fails the document with a message.
- Chunks of \`chunkSize\` tokens (cl100k, default 512) overlapping by \`chunkOverlap\` (default 64), cut at paragraph,
  then sentence, then word boundaries. \`metadata\` (at most 8 KB as JSON) is stored with every chunk.
- Embeddings go through the AI gateway in batches, billed like ai_embed (the app's own key when it has one), with
  the collection's \`embeddingModel\` (default openai/text-embedding-3-small; every collection stores 1536 dimensions).
- Limits: \`text\` up to 3,000,000 characters per call; a file's extracted text up to 5,000,000 characters (and the
  storage per-file limit); at most 10,000 chunks per document. Over them the call is 400 or the document fails.
- A failing upstream is retried (5 attempts); a refusal (credits, allowedModels) fails the document at once.

## Query

\`query\`, \`topK\` (1-100, default 5), \`threshold\` (minimum cosine similarity 0-1), \`filter\` (metadata
key-values every chunk must contain), \`synthesize\`, \`model\` (default the app's defaultModel, else
openai/gpt-4o-mini). Only ready documents are searched. With no chunk passing, the answer says it does not know and
no model is called. An answer spends AI credits: a platform caller needs role developer for \`synthesize\`.

\`rag_documents_list\` pages oldest first: \`limit\` (default 1000), then \`before\` = the last page's \`next_before\`
(REST: the \`X-Next-Before\` header; absent on the last page).

## Errors

400 VALIDATION_FAILED (names the field), 403 FORBIDDEN (private collection, end user writing a shared one, another
user's document), 404 RESOURCE_NOT_FOUND (collection, document or stored file), 409 CONFLICT (duplicate collection
name); the AI gateway's 402, 429 and 502 apply to queries.
`,
};
