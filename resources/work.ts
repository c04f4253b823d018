import type { TemplateContext } from './templates.ts';

/**
 * Long-running work as resources a client polls (or, in a 2025-11-25 session, subscribes to): a clone, a frontend
 * deployment, a RAG document's ingestion. Each is read through the tool that reads its row, so it authorizes as that
 * tool does. Clients that declared the tasks extension get the same work as tasks (src/transports/mcp-tasks.ts).
 */
export interface WorkResourceTemplate {
  /** RFC 6570 level-1 template; each variable stands for one path segment. */
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: 'application/json';
  /** The tool that reads the work, and its arguments from the URI's variables. */
  tool: string;
  args(vars: Readonly<Record<string, string>>): Record<string, string>;
}

export const workTemplates: readonly WorkResourceTemplate[] = [
  {
    uriTemplate: 'svc://clones/{clone_id}',
    name: 'Clone progress',
    description: "A clone's status (queued, the step running, ready or failed) and todo, as templates_clone_get returns it.",
    mimeType: 'application/json',
    tool: 'templates_clone_get',
    args: ({ clone_id }) => ({ clone_id: clone_id! }),
  },
  {
    uriTemplate: 'svc://apps/{app_id}/deployments/{deployment_id}',
    name: 'Frontend deployment',
    description: 'A frontend deployment: WAITING, UPLOADING, BUILDING, then READY, ERROR or CANCELED, as frontend_deploy_get returns it.',
    mimeType: 'application/json',
    tool: 'frontend_deploy_get',
    args: ({ app_id, deployment_id }) => ({ app_id: app_id!, id: deployment_id! }),
  },
  {
    uriTemplate: 'svc://apps/{app_id}/rag/{collection}/documents/{document_id}',
    name: 'RAG document',
    description: "A document's ingestion: pending, processing, then ready or failed (errorMessage), as rag_documents_get returns it.",
    mimeType: 'application/json',
    tool: 'rag_documents_get',
    args: ({ app_id, collection, document_id }) => ({ app_id: app_id!, name: collection!, document_id: document_id! }),
  },
];

/** The work template a URI names, with its variables (each one non-empty path segment), or undefined. */
export function matchWork(uri: string): { template: WorkResourceTemplate; vars: Record<string, string> } | undefined {
  for (const template of workTemplates) {
    const names: string[] = [];
    const pattern = template.uriTemplate
      .split(/\{(\w+)\}/)
      .map((part, i) => (i % 2 ? (names.push(part), '([^/]+)') : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    const found = new RegExp(`^${pattern}$`).exec(uri);
    if (!found) continue;
    try {
      return { template, vars: Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1]!)])) };
    } catch {
      return undefined; // a malformed %-escape names nothing
    }
  }
  return undefined;
}

/** The work a URI names, as its tool reads it (the tool's AppError when it refuses), as JSON. */
export async function readWork(match: NonNullable<ReturnType<typeof matchWork>>, ctx: Pick<TemplateContext, 'call'>): Promise<string> {
  return JSON.stringify(await ctx.call(match.template.tool, match.template.args(match.vars)), null, 2);
}
