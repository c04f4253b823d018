// Node's request and response in front of the SDK's web-standard MCP handlers (a session's transport, the 2026-07-28
// handler), in place of @modelcontextprotocol/node's toNodeHandler on the common path. It differs in two ways that
// cost a call less: a body /mcp already parsed is handed over as parsed (toNodeHandler serializes it again into the
// Request, which the SDK then never reads), and an SSE answer's events go out in as few socket writes as they arrive
// (toNodeHandler writes each event on its own: the opening priming event alone was one write more per call).
import type { ServerResponse } from 'node:http';
import { toNodeHandler, type FetchLikeMcpHandler, type NodeIncomingMessageLike, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import type { AuthInfo } from '@modelcontextprotocol/server';

/**
 * How long an SSE answer's first event may wait (at most) to go out with the next one. The first is the priming event
 * (an event id and `retry`, written before the call runs): a call that answers within this goes out in one write; a
 * longer one's client gets the priming event by then, from which on a dropped stream can be resumed.
 */
const FIRST_EVENT_HOLD_MS = 100;

/** The Node face of a web-standard MCP handler; a POST whose body was not parsed (not JSON) goes to toNodeHandler. */
export function nodeMcpHandler(handler: FetchLikeMcpHandler): NodeMcpRequestHandler {
  const unparsed = toNodeHandler(handler);
  return async (req, res, parsedBody) => {
    if (parsedBody === undefined && req.method === 'POST') return unparsed(req, res);
    const out = res as unknown as ServerResponse;
    const abort = new AbortController();
    let finished = false;
    out.on('close', () => {
      if (!finished) abort.abort();
    });
    const auth = (req as { auth?: AuthInfo }).auth;
    const response = await handler.fetch(webRequest(req, abort.signal), { ...(auth ? { authInfo: auth } : {}), ...(parsedBody !== undefined ? { parsedBody } : {}) });
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) headers[name] = value;
    out.writeHead(response.status, headers);
    try {
      if (response.body === null) return void out.end();
      // One write with its Content-Length rather than a chunk and the end of the chunks.
      if (!headers['content-type']?.startsWith('text/event-stream')) return void out.end(new Uint8Array(await response.arrayBuffer()));
      await writeEvents(out, response.body, abort.signal);
    } finally {
      finished = true;
    }
  };
}

/**
 * The headers the SDK's handlers read (accept and content type, the session, the revision, the resumed event, the
 * 2026-07-28 standard headers, Mcp-*): the credential was resolved already and reaches them as authInfo.
 */
const SDK_HEADERS = new Set(['accept', 'content-type', 'last-event-id']);

/** The Request the SDK reads: method, URL and its headers; a parsed body travels beside it, so none is attached. */
function webRequest(req: NodeIncomingMessageLike, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const name in req.headers) {
    if (!SDK_HEADERS.has(name) && !name.startsWith('mcp-')) continue;
    const value = req.headers[name];
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const host = typeof req.headers.host === 'string' ? req.headers.host : 'localhost';
  return new Request(`http://${host}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, signal });
}

/**
 * SSE answers whose first event is held, flushed together by one timer at most FIRST_EVENT_HOLD_MS later (a timer per
 * answer cost each call more than the held write saved).
 */
const held = new Set<() => void>();
let holdTimer: NodeJS.Timeout | undefined;

function hold(flush: () => void): void {
  held.add(flush);
  holdTimer ??= setTimeout(() => {
    holdTimer = undefined;
    for (const f of held) f();
    held.clear();
  }, FIRST_EVENT_HOLD_MS).unref();
}

/**
 * Writes an SSE answer as its events arrive, then ends it, with the socket corked (the response's own cork splits a
 * chunk into a write per piece): the first event is held (FIRST_EVENT_HOLD_MS) for the next, later events go out
 * together once the events of the same turn of the event loop are in, and the end goes out with whatever is held.
 * Stops when the client goes, honoring backpressure.
 */
async function writeEvents(out: ServerResponse, body: ReadableStream<Uint8Array>, gone: AbortSignal): Promise<void> {
  const socket = out.socket;
  const reader = body.getReader();
  let corked = false;
  let flushQueued = false;
  const flush = () => {
    flushQueued = false;
    held.delete(flush);
    if (corked) {
      corked = false;
      socket?.uncork();
    }
  };
  const stop = () => void reader.cancel().catch(() => undefined);
  gone.addEventListener('abort', stop, { once: true });
  try {
    for (let first = true; ; first = false) {
      const { done, value } = await reader.read();
      if (done || gone.aborted) break;
      if (!corked && socket) {
        corked = true;
        socket.cork();
      }
      const more = out.write(value);
      if (first) hold(flush);
      else if (!flushQueued) {
        flushQueued = true;
        setImmediate(flush);
      }
      if (!more) {
        flush();
        await drained(out, gone);
      }
    }
  } catch {
    // The stream failed or was cancelled: the answer ends with what was written.
  } finally {
    gone.removeEventListener('abort', stop);
    reader.releaseLock();
    out.end();
    flush();
  }
}

/** Settles when the response drains, or the client is gone. */
function drained(out: ServerResponse, gone: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    out.once('drain', done);
    gone.addEventListener('abort', done, { once: true });
  });
}
