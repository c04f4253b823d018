// The rag_ingest job: a pending document's text (given, or extracted from a stored file), chunked by tokens (both
// off the event loop, within time and memory limits: document-process.ts), embedded in batches through the AI
// gateway (billed to the app), and its chunks written in one transaction.
import type { Logger } from 'pino';
import { AppError } from '../core/errors.ts';
import type { AppsService } from '../apps/service.ts';
import type { AiGateway } from '../ai/gateway.ts';
import type { StorageService } from '../storage/service.ts';
import { documentChunks, type DocumentSource } from './document-process.ts';
import { RagExtractError } from './extract.ts';
import { dimensionsFor, toVectorLiteral, type RagService } from './service.ts';
import { RAG_LIMITS } from './types.ts';

export interface IngestDeps {
  rag: RagService;
  apps: AppsService;
  ai: AiGateway;
  storage: StorageService;
  /** The largest stored file ingestion reads (the storage per-file limit). */
  maxFileBytes: number;
  log: Logger;
  /** Wall-clock limit of a document's extraction and chunking; default DOCUMENT_TIMEOUT_MS (tests set a small one). */
  documentTimeoutMs?: number | undefined;
}

interface Work {
  id: string;
  status: string;
  source_text: string | null;
  storage_object_id: string | null;
  owner_user_id: string | null;
  metadata: Record<string, unknown>;
  chunk_size: number;
  chunk_overlap: number;
  embedding_model: string;
}

/**
 * Chunks written per statement. Each vector goes as text, 1,536 numbers formatted on the event loop (~0.7 ms a
 * chunk): 32 a statement hold the loop ~25 ms at a time (200 held it ~170 ms).
 */
const ROWS_PER_INSERT = 32;

/** A failure that retrying cannot fix: the document is marked failed with this message at once. */
class Unprocessable extends Error {}

/**
 * Processes one document; safe to run twice (a document already ready or failed is left alone, and the chunks are
 * replaced, not added, in the transaction that marks it ready). Transient failures throw so graphile-worker retries;
 * on the last attempt, or for failures no retry can fix, the document becomes `failed` with an errorMessage.
 */
export async function ingestDocument(deps: IngestDeps, appId: string, documentId: string, attempt: { number: number; max: number }): Promise<void> {
  const app = await deps.apps.getForJob(appId);
  if (!app) return;
  const db = deps.rag.db(appId);
  const { rows } = await db.query<Work>(
    `update svc_rag.documents d set status = 'processing', updated_at = now()
     from svc_rag.collections c
     where d.id = $1 and c.id = d.collection_id and d.status in ('pending', 'processing')
     returning d.id, d.status, d.source_text, d.storage_object_id, d.owner_user_id, d.metadata, c.chunk_size, c.chunk_overlap, c.embedding_model`,
    [documentId],
  );
  const work = rows[0];
  // Deleted meanwhile, or already done by an earlier run.
  if (!work) return;
  try {
    const limits = {
      chunkSize: work.chunk_size,
      chunkOverlap: work.chunk_overlap,
      maxChunks: RAG_LIMITS.maxChunksPerDocument,
      maxChars: RAG_LIMITS.maxExtractedChars,
      maxBytes: deps.maxFileBytes,
    };
    // A warm chunking process serves only documents of the same owner: the app's own, or one end user's.
    const principal = `${appId}/${work.owner_user_id ?? 'app'}`;
    const chunks = await documentChunks(await documentSource(deps, appId, work), limits, { timeoutMs: deps.documentTimeoutMs, principal });
    const who = { app, endUserId: work.owner_user_id };
    const vectors: number[][] = [];
    for (let i = 0; i < chunks.length; i += RAG_LIMITS.embedBatch) {
      const batch = chunks.slice(i, i + RAG_LIMITS.embedBatch).map((c) => c.text);
      vectors.push(...(await deps.ai.embedTexts(who, work.embedding_model, batch, dimensionsFor(work.embedding_model))));
    }
    await writeChunks(deps, appId, work, chunks.map((c, i) => ({ text: c.text, vector: vectors[i]! })));
  } catch (err) {
    const final = err instanceof Unprocessable || err instanceof RagExtractError || (err instanceof AppError && !retryable(err));
    if (!final && attempt.number < attempt.max) throw err;
    const message = err instanceof Error ? failureMessage(err) : String(err);
    await db.query(`update svc_rag.documents set status = 'failed', error_message = $2, updated_at = now() where id = $1 and status = 'processing'`, [documentId, message]);
    deps.log.info({ app_id: appId, document_id: documentId, reason: message }, 'RAG document failed');
  }
}

async function documentSource(deps: IngestDeps, appId: string, work: Work): Promise<DocumentSource> {
  if (work.source_text !== null) return { text: work.source_text };
  const owner = work.owner_user_id ? { kind: 'user' as const, userId: work.owner_user_id } : { kind: 'service' as const };
  try {
    const { object, bytes } = await deps.storage.read(appId, owner, work.storage_object_id!, deps.maxFileBytes);
    return { file: { bytes, contentType: object.content_type, filename: object.filename } };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) throw new Unprocessable(`The stored file could not be read: ${err.message}`);
    throw err;
  }
}

async function writeChunks(deps: IngestDeps, appId: string, work: Work, chunks: readonly { text: string; vector: number[] }[]): Promise<void> {
  await deps.rag.db(appId).transaction(async (client) => {
    const { rowCount } = await client.query(`select 1 from svc_rag.documents where id = $1 and status = 'processing' for update`, [work.id]);
    // Deleted, or finished by a concurrent run, meanwhile: nothing to write.
    if (rowCount === 0) return;
    await client.query(`delete from svc_rag.chunks where document_id = $1`, [work.id]);
    const metadata = JSON.stringify(work.metadata);
    for (let i = 0; i < chunks.length; i += ROWS_PER_INSERT) {
      const part = chunks.slice(i, i + ROWS_PER_INSERT);
      await client.query(
        `insert into svc_rag.chunks (document_id, chunk_index, collection_id, text, metadata, embedding)
         select $1, idx, d.collection_id, t, $2::jsonb, v::vector
         from unnest($3::int[], $4::text[], $5::text[]) as u(idx, t, v), svc_rag.documents d where d.id = $1`,
        [work.id, metadata, part.map((_, j) => i + j), part.map((c) => c.text), part.map((c) => toVectorLiteral(c.vector))],
      );
    }
    // The text stays with its document: a template's clone ingests it again (src/templates/steps.ts).
    await client.query(
      `update svc_rag.documents set status = 'ready', chunk_count = $2, error_message = null, updated_at = now() where id = $1`,
      [work.id, chunks.length],
    );
  });
}

/**
 * Upstream hiccups, rate limits and lost connections are worth another attempt; refusals (credits, model rules,
 * a refused own key, no provider configured) are not.
 */
function retryable(err: AppError): boolean {
  if (err.status === 429 || err.status === 408) return true;
  return err.status >= 500 && err.code !== 'PROVIDER_UNAVAILABLE' && err.code !== 'BYOK_KEY_REJECTED';
}

function failureMessage(err: Error): string {
  if (err instanceof AppError) return `${err.message} ${err.remediation}`.trim();
  return err.message.slice(0, 1000);
}
