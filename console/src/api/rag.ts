// An app's RAG collections, their documents and the query playground (/v1/{app_id}/rag/collections/...).
import { call, ensureOk, seg } from '../api.ts';

export type AccessMode = 'private' | 'shared' | 'custom';
export const ACCESS_MODES: readonly AccessMode[] = ['private', 'shared', 'custom'];

export interface Collection {
  id: string;
  name: string;
  description: string | null;
  accessMode: AccessMode;
  chunkSize: number;
  chunkOverlap: number;
  embeddingModel: string;
  createdAt: string;
}

export interface RagDocument {
  id: string;
  filename: string | null;
  status: 'pending' | 'processing' | 'ready' | 'failed';
  chunkCount: number;
  errorMessage: string | null;
  createdAt: string;
}

export interface QueryInput {
  query: string;
  topK: number;
  threshold?: number;
  synthesize: boolean;
}

export interface QueryAnswer {
  chunks: Array<{ text: string; score: number; documentId: string; metadata: Record<string, unknown> }>;
  answer?: string;
  model?: string;
}

/** A page of documents; `next` is the cursor of the following page (null: the last). */
export interface DocumentPage {
  documents: RagDocument[];
  next: string | null;
}

export const DOCUMENTS_PAGE = 50;

const base = (appId: string) => `/v1/${seg(appId)}/rag/collections`;

/**
 * REST lists documents as a bare array with the next page's cursor in X-Next-Before, a header call() does not
 * return: this one read keeps it.
 */
async function documentPage(appId: string, name: string, before?: string): Promise<DocumentPage> {
  const q = new URLSearchParams({ limit: String(DOCUMENTS_PAGE), ...(before ? { before } : {}) });
  const res = await fetch(`${base(appId)}/${seg(name)}/documents?${q}`, { credentials: 'same-origin' });
  await ensureOk(res);
  return { documents: (await res.json()) as RagDocument[], next: res.headers.get('x-next-before') };
}

export const rag = {
  collections: (appId: string) => call<Collection[]>('GET', base(appId)),
  create: (appId: string, input: { name: string; description?: string; accessMode: AccessMode }) => call<Collection>('POST', base(appId), input),
  remove: (appId: string, name: string) => call('DELETE', `${base(appId)}/${seg(name)}`),
  documents: documentPage,
  ingest: (appId: string, name: string, input: { text: string; filename?: string }) =>
    call<{ documentId: string; status: 'pending' }>('POST', `${base(appId)}/${seg(name)}/ingest`, input),
  removeDocument: (appId: string, name: string, id: string) => call('DELETE', `${base(appId)}/${seg(name)}/documents/${seg(id)}`),
  query: (appId: string, name: string, input: QueryInput) => call<QueryAnswer>('POST', `${base(appId)}/${seg(name)}/query`, input),
};
