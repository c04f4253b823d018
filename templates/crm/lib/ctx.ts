// The function context as the CRM uses it (the platform's functions guide: GET /llms.txt?area=functions). Types only:
// every function is bundled with these files at install, so the CRM's code is checked by tsc -p templates/crm.

/** What ctx.data and ctx.asApp.data resolve to; nothing throws for an API error. */
export interface DataResult<T = any> {
  data: T | null;
  error: { code: string; message: string; remediation: string } | null;
  status: number;
  count: number | null;
}

export interface Table {
  select<T = any>(columns?: string, options?: { query?: string; count?: boolean; prefer?: string }): Promise<DataResult<T[]>>;
  insert<T = any>(rows: unknown, options?: { query?: string; prefer?: string }): Promise<DataResult<T[]>>;
  update<T = any>(patch: unknown, query: string, options?: { query?: string; prefer?: string }): Promise<DataResult<T[]>>;
  delete<T = any>(query: string, options?: { query?: string; prefer?: string }): Promise<DataResult<T[]>>;
}

export interface DataClient {
  from(table: string): Table;
}

type Input = Record<string, unknown>;

/** A connected account of an end user (integrations_connections_list). */
export interface IntegrationConnection {
  id: string;
  toolkit: string;
  userId: string;
  status: 'active' | 'toolkit_disabled';
  createdAt: string;
}

export interface AppClients {
  data: DataClient;
  /** The caller's connected accounts; through ctx.asApp every end user's (or { userId }'s). */
  integrations: { connections(opts?: { userId?: string }): Promise<{ connections: IntegrationConnection[] }> };
  ai: { chat(body: Input): Promise<any>; embed(body: Input): Promise<any> };
  rag: {
    query(collection: string, body: Input): Promise<any>;
    ingest(collection: string, body: Input): Promise<any>;
    collections(): Promise<any>;
    document(collection: string, documentId: string): Promise<any>;
    deleteDocument(collection: string, documentId: string): Promise<any>;
  };
  storage: {
    upload(body: Input): Promise<any>;
    read(objectId: string, opts?: Input): Promise<any>;
    list(opts?: Input): Promise<any>;
    signedUrl(objectId: string): Promise<any>;
    delete(objectId: string): Promise<any>;
  };
}

export interface Substrate {
  propose(capability: string, payload: Input, opts?: { idempotency_key?: string; require_approval?: boolean }): Promise<{ action_id: string; verdict: any; requires_approval: boolean; result?: any; replay?: true }>;
  getEntity(entityId: string): Promise<any>;
  findEntities(query?: { type?: string; q?: string; limit?: number }): Promise<any>;
  searchMemory(query: string, opts?: { kinds?: string[]; limit?: number }): Promise<any>;
  patchEntity(entityId: string, attrsPatch: Input): Promise<any>;
  mergeEntities(loserId: string, winnerId: string, reason: string): Promise<any>;
  deleteEntity(entityId: string, reason: string): Promise<any>;
  wsTicket(): Promise<{ ticket: string; expires_in: number }>;
  /** This app's own proposals in the linked user's ledger, newest first: { actions: [...], next_before }. */
  actions(query?: { status?: 'proposed' | 'executed' | 'rejected' | 'all'; capability?: string; limit?: number; before?: string }): Promise<any>;
  /** One of this app's proposals. */
  action(actionId: string): Promise<any>;
  /** The calling end user decides on one of this app's proposals (the link must allow end users to decide). */
  approve(actionId: string): Promise<any>;
  reject(actionId: string, reason?: string): Promise<any>;
}

export interface Ctx extends AppClients {
  env: Record<string, string | undefined> & { SVC_APP_ID: string; SVC_API_URL: string };
  appId: string;
  user: { id: string; claims: Record<string, any> } | null;
  token: string | null;
  /** The same clients as the app itself, whoever called (every row of the app, like its service key). */
  asApp: AppClients;
  billing: { subscription(): Promise<any>; plan(): Promise<string | null> };
  integrations: {
    execute(toolName: string, params?: Input, options?: { userId?: string }): Promise<{ successful: boolean; data: any }>;
    connections(opts?: { userId?: string }): Promise<{ connections: IntegrationConnection[] }>;
  };
  people: {
    searchPerson(body: Input): Promise<any>;
    searchCompany(body: Input): Promise<any>;
    profile(body: Input): Promise<any>;
    queueEmail(body: Input): Promise<any>;
    emailLookup(lookupId: string): Promise<any>;
  };
  meetings: {
    spawn(body: Input): Promise<any>;
    get(botId: string): Promise<any>;
    /** A done bot's transcript: { bot_id, segments: [{ speaker, text, start, end }], text }; 409 TRANSCRIPT_NOT_READY before. */
    transcript(botId: string): Promise<{ bot_id: string; segments: Array<{ speaker: string; text: string; start: number | null; end: number | null }>; text: string }>;
    list(opts?: Input): Promise<any>;
    leave(botId: string): Promise<any>;
  };
  substrate?: Substrate;
}

export type Handler = (request: Request, ctx: Ctx) => Promise<Response>;
