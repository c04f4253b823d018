// RAG resources as the API returns them, the limits, and the refusals.
import { AppError, errors } from '../core/errors.ts';
import type { AppRecord } from '../apps/types.ts';

export type AccessMode = 'private' | 'shared' | 'custom';
export type DocumentStatus = 'pending' | 'processing' | 'ready' | 'failed';

/** Who asks: the app's keys (endUserId null) or one of its end users (their JWT, or a key with user_token). */
export interface RagCaller {
  app: AppRecord;
  endUserId: string | null;
}

export interface CollectionView {
  id: string;
  name: string;
  description: string | null;
  accessMode: AccessMode;
  chunkSize: number;
  chunkOverlap: number;
  embeddingModel: string;
  createdAt: string;
  updatedAt: string;
}

export interface CollectionDetails extends CollectionView {
  documentCount: number;
  chunkCount: number;
}

export interface DocumentView {
  id: string;
  collectionId: string;
  filename: string | null;
  status: DocumentStatus;
  chunkCount: number;
  metadata: Record<string, unknown>;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface RetrievedChunk {
  text: string;
  score: number;
  documentId: string;
  metadata: Record<string, unknown>;
}

export const RAG_LIMITS = {
  /** Characters of `text` in one ingest call (the body limit of the route, 4 MB, bounds it first). */
  maxTextChars: 3_000_000,
  /** Characters a file may yield once its text is extracted. */
  maxExtractedChars: 5_000_000,
  /** Chunks one document may have; more fails the document (use a larger chunkSize or split the file). */
  maxChunksPerDocument: 10_000,
  /** Texts per embeddings request during ingestion. */
  embedBatch: 96,
  topKMax: 100,
};

export const DEFAULT_EMBEDDING_MODEL = 'openai/text-embedding-3-small';
/** Synthesis model when neither the query nor the app's AI config names one. */
export const DEFAULT_SYNTHESIS_MODEL = 'openai/gpt-4o-mini';
/** The embedding models of the spec, by the part after the vendor; all are stored at 1536 dimensions. */
export const EMBEDDING_MODELS = ['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'] as const;

export const ragErrors = {
  collectionNotFound: (name: string) =>
    errors.notFound(`Collection '${name.slice(0, 100)}'`, 'List the collections with rag_collections_list (GET /v1/{app_id}/rag/collections).'),
  documentNotFound: (id: string) =>
    errors.notFound(`Document '${id.slice(0, 100)}'`, 'List the documents with rag_documents_list.'),
  duplicate: (name: string) =>
    errors.conflict(`A collection named '${name}' already exists in this app.`, 'Choose another name, or use the existing collection.'),
  privateCollection: () =>
    new AppError(403, 'FORBIDDEN', "This collection is private: only the app's keys may use it.", "Set accessMode 'shared' or 'custom' to let end users query it."),
  endUserReadOnly: () =>
    new AppError(403, 'FORBIDDEN', "End users may only query a 'shared' collection.", "Ingest with the app's key, or use accessMode 'custom' where end users add their own documents."),
  notOwner: () =>
    new AppError(403, 'FORBIDDEN', 'This document belongs to another end user or to the app.', 'An end user may delete only the documents they ingested.'),
  textTooLong: (chars: number) =>
    errors.validation(`'text' has ${chars} characters; at most ${RAG_LIMITS.maxTextChars} per ingest call.`, [
      { path: 'text', message: `at most ${RAG_LIMITS.maxTextChars} characters; split the text or upload it to storage` },
    ]),
};
