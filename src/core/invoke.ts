import { ZodError } from 'zod';
import type { Logger } from 'pino';
import { AppError, errors, fromZod } from './errors.ts';
import { mapPgError } from './pg-errors.ts';
import { unknownKeysMessage } from './strict.ts';
import { requiredRole, type AnyTool, type ToolAudit, type ToolContext } from './define.ts';
import { roleAtLeast, type Caller } from './caller.ts';

/**
 * How an app-scoped call is admitted, installed by the composition root (apps and billing know how): the pipeline
 * stays one legible sequence without core knowing either area.
 */
export interface AppAdmission<A> {
  /** The app named by the input, bound to the caller (a key reaches only its own app or account), or an AppError. */
  resolve(appId: string, caller: Caller): Promise<A>;
  /**
   * Refuses the call when the app may not serve this tool with this input now (paused, its account's billing status);
   * counts activity.
   */
  admit(app: A, tool: AnyTool, input: Record<string, unknown>, caller: Caller): Promise<void>;
}

/** One successful call of a tool that declares `audit`, as the audit log receives it. */
export interface AuditedCall {
  action: string;
  resourceType: string;
  resourceId: string;
  details: Record<string, unknown>;
  caller: Caller;
  clientId: string;
}

/** Writes audited calls to the account's audit log; installed by the composition root (core knows no area). */
export interface CallAuditor {
  recordCall(call: AuditedCall): Promise<void>;
}

export interface InvokeBase<S = unknown, A = unknown> {
  services: S;
  admission: AppAdmission<A>;
  audit: CallAuditor;
  caller: Caller;
  requestId: string;
  clientId: string;
  log: Logger;
  signal?: AbortSignal | undefined;
  canStream?: boolean | undefined;
  sendToPage?: ToolContext['sendToPage'];
  pageAnswer?: ToolContext['pageAnswer'];
  session?: ToolContext['session'];
  toolsets?: ToolContext['toolsets'];
}

/**
 * The one pipeline both transports call: parse input, authorize, handle, shape output, map errors.
 * It always resolves to the tool's output or throws an AppError, which names the tool's area.
 */
export async function invoke<S, A>(tool: AnyTool, rawInput: unknown, base: InvokeBase<S, A>): Promise<unknown> {
  try {
    authorizeKind(tool, base.caller);
    authorizeRole(tool, base.caller);
    screenInput(rawInput);
    const parsed = tool.input.safeParse(rawInput ?? {}, { error: unknownKeysMessage });
    if (!parsed.success) throw fromZod(parsed.error);
    const input = parsed.data as Record<string, unknown>;
    const app = tool.appScoped ? await base.admission.resolve(String(input.app_id), base.caller) : undefined;
    // The app's state decides before anything runs; what passes is activity.
    if (app !== undefined) await base.admission.admit(app, tool, input, base.caller);
    const result = await tool.handler(input, toolContext(base, app));
    const output = tool.output.parse(result);
    if (tool.audit) await recordAudited(tool.audit, input, output, base);
    return output;
  } catch (err) {
    // The tool's area names the guide section the error links to (documentation_url).
    throw asCaller(toAppError(err, base.log, tool.name), base.caller).inArea(tool.area);
  }
}

/**
 * The handler's context: the base without the pipeline's own parts (admission, audit), and the app. The log is read
 * from the base when the handler uses it, not copied: REST's is the request's child logger, made on first use (pino's
 * child, 0.8-1.4 % of a data read's CPU), which a call that does not log then never makes.
 */
function toolContext<S, A>(base: InvokeBase<S, A>, app: A | undefined): ToolContext<S, A> {
  return {
    services: base.services,
    caller: base.caller,
    requestId: base.requestId,
    clientId: base.clientId,
    get log() {
      return base.log;
    },
    app,
    signal: base.signal,
    canStream: base.canStream,
    sendToPage: base.sendToPage,
    pageAnswer: base.pageAnswer,
    session: base.session,
    toolsets: base.toolsets,
  };
}

/**
 * A privilege or row-level-security refusal (42501) of an anonymous caller is 401, as PostgREST answers it: signing in
 * may change the answer; a signed-in caller's stays 403.
 */
function asCaller(err: AppError, caller: Caller): AppError {
  if (err.postgrest?.code !== '42501' || caller.kind !== 'none') return err;
  const refused = new AppError(401, 'AUTH_REQUIRED', err.message, "Sign in: send the end user's access token as Authorization: Bearer, or a key from a server.");
  refused.postgrest = err.postgrest;
  return refused;
}

/**
 * The audit entry of a call that succeeded. The change is made by now, so a failure here (the descriptor's functions
 * included) is logged, never turned into the caller's error: a retry would make the change twice.
 */
async function recordAudited(audit: ToolAudit, input: unknown, output: unknown, base: Pick<InvokeBase, 'audit' | 'caller' | 'clientId' | 'log'>): Promise<void> {
  try {
    if (audit.when && !audit.when(input, output, base.caller)) return;
    await base.audit.recordCall({
      action: audit.action,
      resourceType: audit.resource,
      resourceId: audit.id(input, output),
      details: audit.details?.(input, output) ?? {},
      caller: base.caller,
      clientId: base.clientId,
    });
  } catch (err) {
    base.log.error({ err, action: audit.action }, 'audit entry not recorded');
  }
}

function authorizeKind(tool: AnyTool, caller: Caller): void {
  if (tool.auth.includes(caller.kind)) return;
  if (caller.kind === 'none') throw errors.authRequired();
  throw errors.wrongCredential(tool.auth.filter((k) => k !== 'none'));
}

/** A platform caller acts with its role in the account: a key's, or the person's behind a session or OAuth token. */
function authorizeRole(tool: AnyTool, caller: Caller): void {
  if (caller.kind !== 'platform') return;
  const required = requiredRole(tool);
  if (!roleAtLeast(caller.role, required)) throw errors.roleTooLow(required, caller.role);
}

/** Deeper input than any tool needs; far below where recursive code (JSON.stringify, Postgres' jsonb parser) overflows. */
export const MAX_INPUT_DEPTH = 100;

interface InputNode {
  value: unknown;
  key: string;
  parent: InputNode | undefined;
  depth: number;
}

/**
 * Four things no tool can take, refused before parsing with the field named:
 * - NUL characters: Postgres refuses them in text, jsonb, identifiers and uuids alike (an anonymous "invalid byte
 *   sequence" at best), and so do process environments;
 * - lone surrogates: not text in any encoding (UTF-8 writers replace them silently, URL encoders throw);
 * - numbers out of range for JSON (1e400 parses as Infinity, which JSON.stringify would turn into null: a value
 *   silently stored as NULL);
 * - nesting beyond MAX_INPUT_DEPTH, which would overflow the stack of whatever recursive code the value reaches.
 * Iterative, as the JSON parsers in front of it accept any depth.
 */
export function screenInput(input: unknown): void {
  const pending: InputNode[] = [{ value: input, key: '', parent: undefined, depth: 0 }];
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (typeof node.value === 'string') {
      if (node.value.includes('\0')) throw invalidAt(node, 'text may not contain NUL (\\u0000) characters');
      if (!node.value.isWellFormed()) throw invalidAt(node, 'text must be well-formed Unicode (a lone surrogate \\ud800-\\udfff is not)');
    } else if (typeof node.value === 'number') {
      if (!Number.isFinite(node.value)) throw invalidAt(node, 'numbers must be finite (1e400 is out of range)');
    } else if (typeof node.value === 'object' && node.value !== null) {
      if (node.depth >= MAX_INPUT_DEPTH) throw invalidAt(node, `values may nest at most ${MAX_INPUT_DEPTH} levels deep`);
      for (const [key, value] of Object.entries(node.value)) {
        const child = { value, key, parent: node, depth: node.depth + 1 };
        if (key.includes('\0')) throw invalidAt(child, 'names may not contain NUL (\\u0000) characters');
        if (!key.isWellFormed()) throw invalidAt(child, 'names must be well-formed Unicode (a lone surrogate \\ud800-\\udfff is not)');
        pending.push(child);
      }
    }
  }
}

/** Whether a value nests objects or arrays deeper than `limit` (iterative: the value may be any depth). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let node = pending.pop(); node; node = pending.pop()) {
    if (typeof node.value !== 'object' || node.value === null) continue;
    if (node.depth >= limit) return true;
    for (const child of Object.values(node.value)) pending.push({ value: child, depth: node.depth + 1 });
  }
  return false;
}

function invalidAt(node: InputNode, message: string): AppError {
  const keys: string[] = [];
  for (let at: InputNode | undefined = node; at?.parent; at = at.parent) keys.push(at.key);
  const path = keys.reverse().join('.');
  return errors.validation(`Invalid '${path || 'input'}': ${message}.`, [{ path, message }]);
}

export function toAppError(err: unknown, log: Logger, where: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) {
    // An output that fails its own schema is our bug, not the caller's.
    log.error({ err, tool: where }, 'tool output failed its schema');
    return errors.internal();
  }
  const mapped = mapPgError(err);
  if (mapped) return mapped;
  log.error({ err, tool: where }, 'unhandled error');
  return errors.internal();
}
