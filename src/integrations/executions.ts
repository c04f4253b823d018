// Running an enabled toolkit's tool for an end user through their connected account, and the log of every run
// (integration_executions), which the app's keys list.
import type { AppRecord } from '../apps/types.ts';
import { AppError } from '../core/errors.ts';
import { vendorUserId, type Connections } from './connections.ts';
import type { ToolCatalog } from './tool-catalog.ts';
import type { Toolkits } from './toolkits.ts';
import { integrationErrors, iso, type ExecutionView, type IntegrationsDeps, type ToolView } from './types.ts';
import { askVendor, executionFault } from './vendor.ts';

export interface ExecutionFilter {
  userId?: string | undefined;
  /** Only executions older than this one (an id from a previous page). */
  before?: string | undefined;
  limit: number;
}

/** What one run records: the tool, and the toolkit once known. */
interface Attempt {
  appId: string;
  userId: string;
  toolName: string;
  toolkit: string | null;
  started: number;
}

/** How much of a failure's message the log keeps. */
const ERROR_CHARS = 1000;

export class Executions {
  readonly #d: IntegrationsDeps;
  readonly #toolkits: Toolkits;
  readonly #connections: Connections;
  readonly #catalog: ToolCatalog;

  constructor(deps: IntegrationsDeps, parts: { toolkits: Toolkits; connections: Connections; catalog: ToolCatalog }) {
    this.#d = deps;
    this.#toolkits = parts.toolkits;
    this.#connections = parts.connections;
    this.#catalog = parts.catalog;
  }

  /**
   * Runs the tool for the user: its toolkit must be enabled and connected by them. Every attempt is logged, refused
   * or not. A tool that ran and failed is 422, the vendor unreachable 502 (both INTEGRATIONS_EXECUTION_FAILED).
   */
  async execute(app: AppRecord, userId: string, toolName: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<{ successful: true; data: unknown }> {
    const attempt: Attempt = { appId: app.id, userId, toolName, toolkit: null, started: performance.now() };
    try {
      attempt.toolkit = await this.#catalog.toolkitOf(toolName);
      await this.#toolkits.requireEnabled(app.id, attempt.toolkit);
      const connection = await this.#connections.activeFor(app.id, userId, attempt.toolkit);
      const result = await this.#d.vendor.executeTool(
        toolName,
        { userId: vendorUserId(app.id, userId), connectedAccountId: connection.vendor_account_id, arguments: params },
        signal,
      );
      if (!result.successful) throw integrationErrors.toolFailed(result.error ?? 'the vendor gave no reason');
      await this.#record(attempt, null);
      return { successful: true, data: result.data };
    } catch (err) {
      const fault = executionFault(err);
      await this.#record(attempt, fault);
      throw fault;
    }
  }

  /** The tools of the app's enabled toolkits (or of one), each marked `connected` when the call names an end user. */
  async tools(app: AppRecord, userId: string | null, toolkit: string | undefined): Promise<ToolView[]> {
    const enabled = toolkit === undefined ? await this.#toolkits.list(app.id) : [await this.#toolkits.requireEnabled(app.id, toolkit)];
    const connected = userId === null ? null : await this.#connections.connectedToolkits(app.id, userId);
    const lists = await askVendor(() => Promise.all(enabled.map((t) => this.#catalog.tools(t.toolkit))));
    return enabled.flatMap((t, i) =>
      lists[i]!.map((tool) => ({
        name: tool.slug,
        toolkit: t.toolkit,
        title: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        ...(connected ? { connected: connected.has(t.toolkit) } : {}),
      })),
    );
  }

  /** Newest first. */
  async list(appId: string, filter: ExecutionFilter): Promise<ExecutionView[]> {
    let query = this.#d.db.selectFrom('integration_executions').selectAll().where('app_id', '=', appId);
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    if (filter.before !== undefined) query = query.where('id', '<', filter.before);
    const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map((r) => ({
      id: String(r.id),
      userId: r.user_id,
      toolName: r.tool,
      toolkit: r.toolkit,
      successful: r.success,
      durationMs: r.duration_ms,
      error: r.error,
      createdAt: iso(r.created_at),
    }));
  }

  /**
   * A lost log row must not turn a tool that ran (a mail sent) into an error the caller would retry: a failure to
   * record is logged, not thrown.
   */
  async #record(attempt: Attempt, fault: unknown): Promise<void> {
    try {
      await this.#d.db
        .insertInto('integration_executions')
        .values({
          app_id: attempt.appId,
          user_id: attempt.userId,
          tool: attempt.toolName,
          toolkit: attempt.toolkit,
          success: fault === null,
          duration_ms: Math.round(performance.now() - attempt.started),
          error: fault === null ? null : describeFault(fault),
        })
        .execute();
    } catch (err) {
      this.#d.log.error({ err, app_id: attempt.appId, tool: attempt.toolName }, 'recording an integration execution failed');
    }
  }
}

function describeFault(fault: unknown): string {
  return (fault instanceof AppError ? `${fault.code}: ${fault.message}` : 'internal error').slice(0, ERROR_CHARS);
}
