// RAG collections, documents and retrieval, in each app's own database (schema svc_rag). Ingestion itself runs
// in the rag_ingest job (src/rag/ingest.ts); this module creates the documents and enqueues it.
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AppDatabases, AppSql } from '../apps/app-databases.ts';
import type { AppRecord } from '../apps/types.ts';
import type { AppsService } from '../apps/service.ts';
import { ingestDocument } from './ingest.ts';
import type { AiGateway } from '../ai/gateway.ts';
import type { AiSettingsStore } from '../ai/settings.ts';
import type { StorageService } from '../storage/service.ts';
import { errors } from '../core/errors.ts';
import { RAG_DIMENSIONS } from './store.sql.ts';
import {
  DEFAULT_EMBEDDING_MODEL,
  DEFAULT_SYNTHESIS_MODEL,
  RAG_LIMITS,
  ragErrors,
  type AccessMode,
  type CollectionDetails,
  type CollectionView,
  type DocumentView,
  type RagCaller,
  type RetrievedChunk,
} from './types.ts';
import { synthesisMessages, NO_ANSWER } from './synthesis.ts';
import { enqueue } from '../core/jobs.ts';
import { ragIngest } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';

/** A document still pending this long after creation has lost its job (see #repair). */
const PENDING_REPAIR_MS = 2 * 60_000;

export interface CollectionInput {
  name: string;
  description?: string | undefined;
  accessMode: AccessMode;
  chunkSize: number;
  chunkOverlap: number;
  embeddingModel?: string | undefined;
}

export interface IngestInput {
  text?: string | undefined;
  storage_object_id?: string | undefined;
  filename?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface QueryInput {
  query: string;
  topK: number;
  threshold?: number | undefined;
  filter?: Record<string, unknown> | undefined;
  synthesize: boolean;
  model?: string | undefined;
}

/** Collections a process keeps for query() (see RagService.query). */
const KNOWN_COLLECTIONS = 1_000;

interface CollectionRow {
  id: string;
  name: string;
  description: string | null;
  access_mode: AccessMode;
  chunk_size: number;
  chunk_overlap: number;
  embedding_model: string;
  created_at: Date;
  updated_at: Date;
}

interface DocumentRow {
  id: string;
  collection_id: string;
  filename: string | null;
  status: DocumentView['status'];
  chunk_count: number;
  metadata: Record<string, unknown>;
  error_message: string | null;
  owner_user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const DOC_COLUMNS = 'id, collection_id, filename, status, chunk_count, metadata, error_message, owner_user_id, created_at, updated_at';

export interface RagDeps {
  control: Kysely<ControlDatabase>;
  apps: AppsService;
  databases: AppDatabases;
  ai: AiGateway;
  aiSettings: AiSettingsStore;
  storage: StorageService;
  maxFileBytes: number;
  log: Logger;
}

export class RagService {
  readonly #d: RagDeps;
  /** Collections query() read, by app and name: used again once checked in the query's transaction (see query()). */
  readonly #known = new Map<string, CollectionRow>();

  constructor(deps: RagDeps) {
    this.#d = deps;
  }

  /** The app's database; svc_rag is there, made by app migration 0002 before its first statement in this process. */
  db(appId: string): AppSql {
    return this.#d.databases.sql(appId);
  }

  // ---- collections ------------------------------------------------------------------------------------

  async createCollection(app: AppRecord, input: CollectionInput): Promise<CollectionView> {
    if (input.chunkOverlap >= input.chunkSize) {
      throw errors.validation(`'chunkOverlap' (${input.chunkOverlap}) must be smaller than 'chunkSize' (${input.chunkSize}).`, [
        { path: 'chunkOverlap', message: 'must be smaller than chunkSize' },
      ]);
    }
    const db = this.db(app.id);
    const { rows } = await db.query<CollectionRow>(
      `insert into svc_rag.collections (name, description, access_mode, chunk_size, chunk_overlap, embedding_model)
       values ($1, $2, $3, $4, $5, $6) on conflict (name) do nothing returning *`,
      [input.name, input.description ?? null, input.accessMode, input.chunkSize, input.chunkOverlap, input.embeddingModel ?? DEFAULT_EMBEDDING_MODEL],
    );
    if (!rows[0]) throw ragErrors.duplicate(input.name);
    return collectionView(rows[0]);
  }

  /** The app's collections; an end user sees those open to end users (shared and custom). */
  async listCollections(who: RagCaller): Promise<CollectionView[]> {
    const db = this.db(who.app.id);
    const { rows } = await db.query<CollectionRow>(
      `select * from svc_rag.collections where $1::boolean or access_mode <> 'private' order by created_at, name`,
      [who.endUserId === null],
    );
    return rows.map(collectionView);
  }

  async getCollection(who: RagCaller, name: string): Promise<CollectionDetails> {
    const collection = await this.#collection(who, name);
    const db = this.db(who.app.id);
    const { rows } = await db.query<{ documents: string; chunks: string }>(
      `select count(*)::text as documents, coalesce(sum(chunk_count), 0)::text as chunks from svc_rag.documents where collection_id = $1 and ${visibleTo('$2')}`,
      [collection.id, ownerFilter(who, collection)],
    );
    return { ...collectionView(collection), documentCount: Number(rows[0]!.documents), chunkCount: Number(rows[0]!.chunks) };
  }

  /** Deletes the collection with its documents and chunks (cascade), and cancels their pending ingestion jobs. */
  async deleteCollection(app: AppRecord, name: string): Promise<void> {
    const db = this.db(app.id);
    const found = await db.query<{ id: string }>(`select id from svc_rag.collections where name = $1`, [name]);
    if (!found.rows[0]) throw ragErrors.collectionNotFound(name);
    const id = found.rows[0].id;
    const busy = await db.query<{ id: string }>(`select id from svc_rag.documents where collection_id = $1 and status in ('pending', 'processing')`, [id]);
    await db.query(`delete from svc_rag.collections where id = $1`, [id]);
    // A job that still runs finds its document gone and ends (src/rag/ingest.ts).
    for (const row of busy.rows) await this.#cancelJob(app.id, row.id);
  }

  // ---- documents --------------------------------------------------------------------------------------

  /**
   * Creates the document (pending) and its ingestion job. The two live in different databases: the document is
   * committed first and the job added after; if adding the job fails the document is removed again, and a
   * document whose job was lost to a crash in between is re-enqueued when it is read (#repair).
   */
  async ingest(who: RagCaller, name: string, input: IngestInput): Promise<{ documentId: string; status: 'pending'; message: string }> {
    const collection = await this.#collection(who, name);
    if (who.endUserId !== null && collection.access_mode !== 'custom') throw ragErrors.endUserReadOnly();
    let filename = input.filename ?? null;
    if (input.text !== undefined) {
      if (input.text.length > RAG_LIMITS.maxTextChars) throw ragErrors.textTooLong(input.text.length);
      if (input.text.trim() === '') throw errors.validation("'text' is empty.", [{ path: 'text', message: 'must contain text' }]);
    } else {
      // The caller must be able to see the file now; the job reads it later with the same visibility.
      const owner = who.endUserId ? { kind: 'user' as const, userId: who.endUserId } : { kind: 'service' as const };
      const ticket = await this.#d.storage.download(who.app.id, owner, input.storage_object_id!);
      filename ??= ticket.filename;
    }
    const db = this.db(who.app.id);
    const { rows } = await db.query<{ id: string }>(
      `insert into svc_rag.documents (collection_id, filename, metadata, owner_user_id, source_text, storage_object_id)
       values ($1, $2, $3, $4, $5, $6) returning id`,
      [collection.id, filename, JSON.stringify(input.metadata ?? {}), who.endUserId, input.text ?? null, input.storage_object_id ?? null],
    );
    const documentId = rows[0]!.id;
    try {
      await this.#enqueue(who.app.id, documentId);
    } catch (err) {
      await db.query(`delete from svc_rag.documents where id = $1`, [documentId]).catch(() => undefined);
      throw err;
    }
    return { documentId, status: 'pending', message: `Ingestion started; poll rag_documents_get (GET .../documents/${documentId}) until status is ready or failed.` };
  }

  /**
   * Oldest first by `(created_at, id)`, after the `before` cursor (the platform's paging names: the previous page's
   * next_before, null on the last page). The cursor is the last row's `<created_at to the microsecond>~<id>`.
   */
  async listDocuments(who: RagCaller, name: string, page: { before?: string | undefined; limit: number }): Promise<{ documents: DocumentView[]; next_before: string | null }> {
    const collection = await this.#collection(who, name);
    const db = this.db(who.app.id);
    const cursor = page.before === undefined ? null : parseDocumentCursor(page.before);
    const { rows } = await db.query<DocumentRow & { cursor_ts: string }>(
      `select ${DOC_COLUMNS}, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from svc_rag.documents
       where collection_id = $1 and ${visibleTo('$2')} and ($3::timestamptz is null or (created_at, id) > ($3::timestamptz, $4::uuid))
       order by created_at, id limit $5`,
      [collection.id, ownerFilter(who, collection), cursor?.ts ?? null, cursor?.id ?? null, page.limit + 1],
    );
    const shown = rows.slice(0, page.limit);
    await this.#repair(who.app.id, shown);
    const last = shown.at(-1);
    return { documents: shown.map(documentView), next_before: rows.length > page.limit && last ? `${last.cursor_ts}~${last.id}` : null };
  }

  async getDocument(who: RagCaller, name: string, documentId: string): Promise<DocumentView> {
    const collection = await this.#collection(who, name);
    const row = await this.#document(who, collection, documentId);
    await this.#repair(who.app.id, [row]);
    return documentView(row);
  }

  async deleteDocument(who: RagCaller, name: string, documentId: string): Promise<void> {
    const collection = await this.#collection(who, name);
    if (who.endUserId !== null && collection.access_mode !== 'custom') throw ragErrors.endUserReadOnly();
    const row = await this.#document(who, collection, documentId);
    if (who.endUserId !== null && row.owner_user_id !== who.endUserId) throw ragErrors.notOwner();
    const db = this.db(who.app.id);
    await db.query(`delete from svc_rag.documents where id = $1`, [documentId]);
    if (row.status === 'pending' || row.status === 'processing') await this.#cancelJob(who.app.id, documentId);
  }

  /** The rag_ingest job's work for one document (src/rag/ingest.ts). */
  process(appId: string, documentId: string, attempt: { number: number; max: number }): Promise<void> {
    return ingestDocument({ ...this.#d, rag: this }, appId, documentId, attempt);
  }

  // ---- query ------------------------------------------------------------------------------------------

  /**
   * The topK chunks nearest to the query (cosine similarity, at least `threshold`), among the ready documents the
   * caller may see whose chunk metadata contains `filter`; with `synthesize`, an answer written from them only.
   * The collection is the one this process last read under that name, if any (no connection of the app's pool taken
   * for it: under load, that checkout waited behind the app's vector queries), checked in the query's own transaction:
   * a collection changed or gone since is read again and the query run afresh.
   */
  async query(who: RagCaller, name: string, input: QueryInput): Promise<{ chunks: RetrievedChunk[]; answer?: string; model?: string }> {
    const key = `${who.app.id}/${name}`;
    const known = this.#known.get(key);
    const collection = known ? checkedAccess(who, known) : await this.#collection(who, name);
    const [vector] = await this.#d.ai.embedTexts(who, collection.embedding_model, [input.query], dimensionsFor(collection.embedding_model));
    // Filters apply after the index scan: let it keep scanning until topK rows pass them (pgvector >= 0.8). Sent with
    // BEGIN and COMMIT, in one round trip, with the check of a collection known from before.
    const settings = `set local hnsw.iterative_scan = relaxed_order; set local hnsw.ef_search = ${Math.max(40, input.topK * 2)}`;
    const unchanged = known ? `; ${unchangedSql(known)}` : '';
    const { setup, result } = await this.db(who.app.id).statementInOneTrip<{ text: string; score: number; document_id: string; metadata: Record<string, unknown> }>(
      settings + unchanged,
      `select text, score, document_id, metadata from (
         select c.text, 1 - (c.embedding <=> $1::vector) as score, c.document_id, c.metadata, c.embedding <=> $1::vector as distance
         from svc_rag.chunks c join svc_rag.documents d on d.id = c.document_id
         where c.collection_id = $2 and d.status = 'ready' and ${visibleTo('$3', 'd.')} and c.metadata @> $4::jsonb
           and 1 - (c.embedding <=> $1::vector) >= $5
         order by c.embedding <=> $1::vector
         limit $6
       ) nearest order by distance`,
      [toVectorLiteral(vector!), collection.id, ownerFilter(who, collection), JSON.stringify(input.filter ?? {}), input.threshold ?? -1, input.topK],
    );
    if (known && setup.at(-1)?.rows[0]?.unchanged !== true) {
      this.#known.delete(key);
      return this.query(who, name, input);
    }
    this.#remember(key, collection);
    const chunks = result.rows.map((r) => ({ text: r.text, score: Number(r.score), documentId: r.document_id, metadata: r.metadata }));
    if (!input.synthesize) return { chunks };
    const model = input.model ?? (await this.#d.aiSettings.settings(who.app.id)).defaultModel ?? DEFAULT_SYNTHESIS_MODEL;
    if (chunks.length === 0) return { chunks, answer: NO_ANSWER, model };
    const answer = await this.#d.ai.completeText(who, model, synthesisMessages(input.query, chunks));
    return { chunks, answer: answer.content, model: answer.model || model };
  }

  // ---- internals --------------------------------------------------------------------------------------

  async #collection(who: RagCaller, name: string): Promise<CollectionRow> {
    const db = this.db(who.app.id);
    const { rows } = await db.query<CollectionRow>(`select * from svc_rag.collections where name = $1`, [name]);
    const row = rows[0];
    if (!row) throw ragErrors.collectionNotFound(name);
    return checkedAccess(who, row);
  }

  /** Keeps a collection query() read, for its next queries in this process (at most KNOWN_COLLECTIONS, the oldest dropped). */
  #remember(key: string, row: CollectionRow): void {
    this.#known.delete(key);
    if (this.#known.size >= KNOWN_COLLECTIONS) this.#known.delete(this.#known.keys().next().value!);
    this.#known.set(key, row);
  }

  async #document(who: RagCaller, collection: CollectionRow, documentId: string): Promise<DocumentRow> {
    const db = this.db(who.app.id);
    const { rows } = await db.query<DocumentRow>(
      `select ${DOC_COLUMNS} from svc_rag.documents where id = $1 and collection_id = $2 and ${visibleTo('$3')}`,
      [documentId, collection.id, ownerFilter(who, collection)],
    );
    if (!rows[0]) throw ragErrors.documentNotFound(documentId);
    return rows[0];
  }

  #enqueue(appId: string, documentId: string): Promise<unknown> {
    // job_key: one job per document, however often it is enqueued (ingest, then a repair).
    return enqueue(this.#d.control, ragIngest, { app_id: appId, document_id: documentId }, { jobKey: `rag:${documentId}` });
  }

  async #cancelJob(appId: string, documentId: string): Promise<void> {
    await sql`select graphile_worker.remove_job(${`rag:${documentId}`}::text)`.execute(this.#d.control).catch((err: unknown) =>
      this.#d.log.warn({ err, app_id: appId, document_id: documentId }, 'could not remove a RAG ingestion job'),
    );
  }

  /** Documents pending for minutes have lost their job (a crash between the document and its job): enqueue again. */
  async #repair(appId: string, rows: readonly DocumentRow[]): Promise<void> {
    const stale = rows.filter((r) => r.status === 'pending' && Date.now() - r.created_at.getTime() > PENDING_REPAIR_MS);
    for (const row of stale) await this.#enqueue(appId, row.id);
  }
}

/**
 * Which documents a caller sees: the app's keys all (the parameter is null); an end user of a `custom`
 * collection those without an owner and their own; of a `shared` collection all.
 */
/** A documents cursor: the last listed row's `<created_at, ISO to the microsecond>~<id>`. */
function parseDocumentCursor(before: string): { ts: string; id: string } {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)~([0-9a-f-]{36})$/.exec(before);
  if (!match || Number.isNaN(Date.parse(match[1]!))) {
    throw errors.validation("'before' must be the next_before of a previous page.", [{ path: 'before', message: 'not a cursor' }]);
  }
  return { ts: match[1]!, id: match[2]! };
}

function visibleTo(param: string, prefix = ''): string {
  return `(${param}::uuid is null or ${prefix}owner_user_id is null or ${prefix}owner_user_id = ${param}::uuid)`;
}

function ownerFilter(who: RagCaller, collection: CollectionRow): string | null {
  return who.endUserId !== null && collection.access_mode === 'custom' ? who.endUserId : null;
}

/** text-embedding-3-large is asked for the 1536 dimensions every collection stores; the others have them. */
export function dimensionsFor(model: string): number | undefined {
  return model.endsWith('/text-embedding-3-large') ? RAG_DIMENSIONS : undefined;
}

/** An end user may not query a private collection. */
function checkedAccess(who: RagCaller, row: CollectionRow): CollectionRow {
  if (who.endUserId !== null && row.access_mode === 'private') throw ragErrors.privateCollection();
  return row;
}

/** A select answering `unchanged`: whether the collection still is as `row` (its id, name, access and model). */
function unchangedSql(row: CollectionRow): string {
  const [id, name, access, model] = [row.id, row.name, row.access_mode, row.embedding_model].map((v) => pg.escapeLiteral(v));
  return `select exists (select 1 from svc_rag.collections where id = ${id} and name = ${name} and access_mode = ${access} and embedding_model = ${model}) as unchanged`;
}

export function toVectorLiteral(v: readonly number[]): string {
  return `[${v.join(',')}]`;
}

function collectionView(r: CollectionRow): CollectionView {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    accessMode: r.access_mode,
    chunkSize: r.chunk_size,
    chunkOverlap: r.chunk_overlap,
    embeddingModel: r.embedding_model,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function documentView(r: DocumentRow): DocumentView {
  return {
    id: r.id,
    collectionId: r.collection_id,
    filename: r.filename,
    status: r.status,
    chunkCount: r.chunk_count,
    metadata: r.metadata,
    errorMessage: r.error_message,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}
