import type { Request, Response, Router } from 'express';
import { envelope, errors, type AppError } from '../core/errors.ts';
import { invoke, toAppError } from '../core/invoke.ts';
import type { AnyTool, HttpBinding } from '../core/define.ts';
import type { Services } from '../core/services.ts';
import { resolveCaller } from './credentials.ts';

/** Set by the subdomain middleware when the Host header names an app. */
export interface SubdomainLocals {
  subdomainAppId?: string;
}

const toExpressPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ':$1');

/** Registers every descriptor that has an HTTP binding; the handler only maps the wire to invoke() and back. */
export function mountRestTools(router: Router, tools: readonly AnyTool[], services: Services): void {
  for (const tool of tools) {
    if (!tool.http) continue;
    const http = tool.http;
    const method = http.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](toExpressPath(http.path), (req, res) => serve(tool, http, req, res, services, undefined));
    if (http.subdomainPath) {
      router[method](toExpressPath(http.subdomainPath), (req, res, next) => {
        const appId = (res.locals as SubdomainLocals).subdomainAppId;
        if (!appId) return next();
        return serve(tool, http, req, res, services, appId);
      });
    }
  }
}

async function serve(
  tool: AnyTool,
  http: HttpBinding<unknown>,
  req: Request,
  res: Response,
  services: Services,
  subdomainAppId: string | undefined,
): Promise<void> {
  try {
    const body: unknown = req.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw errors.validation('The request body must be a JSON object.');
    }
    const input = {
      ...(req.query as Record<string, unknown>),
      ...(body as Record<string, unknown> | undefined),
      ...req.params,
      ...(subdomainAppId ? { app_id: subdomainAppId } : {}),
    };
    const caller = await resolveCaller(req.headers.authorization, services);
    const output = await invoke(tool, input, { services, caller, requestId: String(req.id), log: req.log });
    const status = http.status ?? 200;
    if (status === 204) {
      res.status(204).end();
      return;
    }
    const wire = http.body ? http.body(output) : output;
    if (http.contentType) res.status(status).type(http.contentType).send(wire);
    else res.status(status).json(wire);
  } catch (err) {
    sendError(res, toAppError(err, req.log, tool.name));
  }
}

export function sendError(res: Response, err: AppError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(err.status).json(envelope(err));
}
