// The thread that plans schema applies (plan-worker.ts starts it): a plan parses declared SQL with Postgres's grammar,
// which a hostile definition can make cost tens of milliseconds, so it runs here and never holds the api's event loop.
// One request at a time; an AppError travels back as its fields, anything else as a message.
import { parentPort } from 'node:worker_threads';
import { AppError } from '../core/errors.ts';
import type { Catalog, TableInfo } from './catalog.ts';
import { normalizeDefinition, type ChannelRule, type SchemaDefinitionInput } from './definition.ts';
import { planSchema } from './plan.ts';
import type { FunctionRecord } from './functions.ts';
import { loadSqlParser } from './sql/parser.ts';

export interface PlanRequest {
  id: number;
  schema: SchemaDefinitionInput;
  catalog: TableInfo[];
  canonical: Array<[string, string | null]>;
  channels: ChannelRule[];
  functions: FunctionRecord[];
}

export type PlanReply =
  | { id: number; ok: true; statements: string[] }
  | { id: number; ok: false; error: { status: number; code: string; message: string; remediation: string; details: unknown } }
  | { id: number; ok: false; crash: string };

async function plan(request: PlanRequest): Promise<PlanReply> {
  try {
    await loadSqlParser();
    const catalog: Catalog = new Map(request.catalog.map((t) => [t.name, t]));
    const statements = planSchema(normalizeDefinition(request.schema), catalog, new Map(request.canonical), request.channels, request.functions);
    return { id: request.id, ok: true, statements };
  } catch (err) {
    if (err instanceof AppError) return { id: request.id, ok: false, error: { status: err.status, code: err.code, message: err.message, remediation: err.remediation, details: err.details } };
    return { id: request.id, ok: false, crash: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}

parentPort?.on('message', (request: PlanRequest) => {
  void plan(request).then((reply) => parentPort!.postMessage(reply));
});
