/**
 * A fake OpenAI-compatible (OpenRouter-style) upstream on loopback, for the AI gateway's tests and benchmark.
 *
 * Real HTTP (node:http) rather than a mocked fetch, so the gateway's actual relay path through the official
 * `openai` SDK is exercised: headers, SSE framing, socket aborts and connection errors all happen for real.
 * Replies are deterministic so tests can assert exact bodies and token counts without a model.
 *
 * Base path `/api/v1` (as OpenRouter): POST /chat/completions (JSON or SSE with `stream: true`),
 * POST /embeddings, GET /models. Every request is recorded (path, Authorization as received, parsed body)
 * before it is answered, with an `outcome` that tells whether the response finished or the exchange was cut;
 * `record: false` keeps nothing (for the benchmark, whose hundreds of thousands of requests would otherwise
 * pile up in `requests`: about 0.5 KB of heap each, which also makes every major GC of the fake slower).
 *
 * Chat replies are `echo: <last user message>` with whitespace collapsed (so the streamed word deltas
 * concatenate to exactly the non-stream content), cut to `max_tokens` words (finish_reason 'length' when cut).
 * "Tokens" are whitespace-separated words: prompt = words of all message texts + 3 per message.
 *
 * Magic model names (chat and embeddings alike) to trigger the upstream faults the gateway must survive:
 *   fake/slow              streams with 200 ms between chunks; a non-stream answer comes after 1 s
 *   fake/error-429         429 { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }
 *   fake/error-400         400 { error: { message: 'Invalid parameter: messages', type: 'invalid_request_error', code: null, param: 'messages' } }
 *   fake/error-500         500 { error: { message: 'upstream exploded', type: 'server_error' } }
 *   fake/error-401         401 { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }
 *   fake/echo-key-401      401 whose message echoes the key it was sent, whole and masked as OpenAI masks it
 *   fake/echo-key-400      400 whose message and param echo the key it was sent
 *   fake/drop              destroys the socket without answering
 *   fake/hang              never answers, until the client gives up (or close())
 *   fake/drop-mid-stream   sends two SSE chunks, then destroys the socket (non-stream: half of the JSON body)
 *   fake/tool-call         with tools and no tool answer after the last user message: calls the first tool with
 *                          arguments {"text":"<last user message>"} (finish_reason 'tool_calls', call id call_fake_1;
 *                          streamed: the arguments in two pieces); once a tool message follows it, echoes that message
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export interface FakeRequest {
  /** Relative to the base path, e.g. '/chat/completions' (the full pathname if outside it). */
  path: string;
  /** Exactly as received, so tests can tell the platform key from a BYOK key. */
  authorization: string | undefined;
  /** Parsed JSON (unknown fields kept untouched); the raw text if it was not JSON; undefined if empty. */
  body: any;
  /** resolved when the exchange ended: 'completed' | 'aborted' (client closed before the response finished) */
  outcome: Promise<'completed' | 'aborted'>;
}

export interface FakeOpenAI {
  /** e.g. http://127.0.0.1:PORT/api/v1 , the baseURL */
  url: string;
  /** Every request received, unless started with `record: false` (then always empty). */
  requests: FakeRequest[];
  /** usage.cost reporting (OpenRouter style): USD per token; undefined = no cost field. Read per request, so tests may change it. */
  costPerToken: number | undefined;
  /** Holds every answer until this many requests have arrived, then answers them all (a barrier, so parallel calls all
   * reach the upstream before any is answered); cleared when it releases. */
  answerTogether(count: number): void;
  close(): Promise<void>;
  /** clears requests (in place, so a held reference stays live) and releases a barrier */
  reset(): void;
}

const BASE = '/api/v1';
const EMBEDDING_DIMS: [suffix: string, dims: number][] = [
  ['text-embedding-3-small', 1536],
  ['text-embedding-3-large', 3072],
  ['text-embedding-ada-002', 1536],
];
const MODELS = [
  'openai/gpt-4o-mini',
  'openai/gpt-4o',
  'openai/text-embedding-3-small',
  'openai/text-embedding-3-large',
  'openai/text-embedding-ada-002',
  'fake/slow',
  'fake/error-429',
  'fake/error-400',
  'fake/error-500',
  'fake/drop',
  'fake/hang',
  'fake/drop-mid-stream',
  'fake/tool-call',
];
const FAULTS: Record<string, [status: number, body: unknown]> = {
  'fake/error-429': [429, { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }],
  'fake/error-400': [400, { error: { message: 'Invalid parameter: messages', type: 'invalid_request_error', code: null, param: 'messages' } }],
  'fake/error-500': [500, { error: { message: 'upstream exploded', type: 'server_error' } }],
  'fake/error-401': [401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }],
};

export async function startFakeOpenAI(opts: { costPerToken?: number; streamChunkDelayMs?: number; record?: boolean } = {}): Promise<FakeOpenAI> {
  const requests: FakeRequest[] = [];
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake should fail the test loudly, not hang it.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake upstream bug: ${String(err)}`, type: 'server_error' } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  let barrier: { count: number; waiting: (() => void)[] } | undefined;

  const fake: FakeOpenAI = {
    url: `http://127.0.0.1:${port}${BASE}`,
    requests,
    costPerToken: opts.costPerToken,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // server.close() alone waits for hanging and keep-alive connections; tests must never wait on them.
        server.closeAllConnections();
      });
      return closing;
    },
    answerTogether(count) {
      barrier = { count, waiting: [] };
    },
    reset() {
      requests.length = 0;
      const held = barrier;
      barrier = undefined;
      for (const release of held?.waiting ?? []) release();
    },
  };

  function waitForTheOthers(): Promise<void> {
    if (!barrier) return Promise.resolve();
    const held = barrier;
    return new Promise<void>((resolve) => {
      held.waiting.push(resolve);
      if (held.waiting.length < held.count) return;
      barrier = undefined;
      for (const release of held.waiting) release();
    });
  }

  /** Usage with OpenRouter's `cost` only when configured, so tests cover both upstream kinds. */
  const withCost = <T extends { total_tokens: number }>(usage: T): T & { cost?: number } =>
    fake.costPerToken === undefined ? usage : { ...usage, cost: usage.total_tokens * fake.costPerToken };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Listen before reading the body: a client may give up at any point, and its outcome must still be known.
    const gone = new AbortController();
    let finished = false;
    res.on('finish', () => (finished = true));
    const outcome = new Promise<'completed' | 'aborted'>((resolve) =>
      res.on('close', () => {
        gone.abort(); // stops pending delays, so nothing writes to a dead socket
        resolve(finished ? 'completed' : 'aborted');
      }),
    );

    let raw: string;
    try {
      raw = await readBody(req);
    } catch {
      return; // client went away mid-body; nothing to record
    }
    const pathname = new URL(req.url ?? '/', 'http://fake').pathname;
    const path = pathname.startsWith(`${BASE}/`) ? pathname.slice(BASE.length) : pathname;
    let body: any;
    let malformed = false;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
        malformed = true;
      }
    }
    if (opts.record !== false) requests.push({ path, authorization: req.headers.authorization, body, outcome });
    await waitForTheOthers();

    if (!/^Bearer\s+\S/i.test(req.headers.authorization ?? '')) {
      return sendJson(res, 401, { error: { message: 'Missing API key', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    const route = `${req.method} ${path}`;
    if (route === 'GET /models') {
      return sendJson(res, 200, { object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: id.split('/')[0] })) });
    }
    if (route !== 'POST /chat/completions' && route !== 'POST /embeddings') {
      return sendJson(res, 404, { error: { message: `Invalid URL (${req.method} ${pathname})`, type: 'invalid_request_error', code: null } });
    }
    if (malformed || typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendJson(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', code: null } });
    }
    if (typeof body.model !== 'string') return invalidParam(res, 'model');

    const model: string = body.model;
    const fault = FAULTS[model];
    if (fault) return sendJson(res, fault[0], fault[1]);
    if (model.startsWith('fake/echo-key-')) return echoKey(res, model.endsWith('401') ? 401 : 400, req.headers.authorization!.replace(/^Bearer\s+/i, ''));
    if (model === 'fake/drop') return void res.destroy();
    if (model === 'fake/hang') return; // `outcome` resolves when the client or close() ends the socket

    if (path === '/embeddings') return embeddings(res, body, gone.signal);
    return chat(res, body, gone.signal);
  }

  async function chat(res: ServerResponse, body: any, signal: AbortSignal): Promise<void> {
    if (!Array.isArray(body.messages)) return invalidParam(res, 'messages');
    const messages: any[] = body.messages;
    const model: string = body.model;
    const lastUserAt = messages.findLastIndex((m) => m?.role === 'user');
    const lastUser = messages[lastUserAt];
    const toolAnswer = model === 'fake/tool-call' ? messages.slice(lastUserAt + 1).findLast((m) => m?.role === 'tool') : undefined;
    const tool = Array.isArray(body.tools) ? body.tools[0]?.function : undefined;
    if (model === 'fake/tool-call' && !toolAnswer && typeof tool?.name === 'string') return toolCall(res, body, tool.name, messageText(lastUser?.content));
    const full = ['echo:', ...words(messageText((toolAnswer ?? lastUser)?.content))];
    const max = body.max_tokens ?? body.max_completion_tokens;
    const reply = Number.isInteger(max) && max >= 0 ? full.slice(0, max) : full;
    const finishReason = reply.length < full.length ? 'length' : 'stop';
    const promptTokens = messages.reduce<number>((n, m) => n + words(messageText(m?.content)).length + 3, 0);
    const usage = withCost({ prompt_tokens: promptTokens, completion_tokens: reply.length, total_tokens: promptTokens + reply.length });
    const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);

    if (body.stream !== true) {
      if (model === 'fake/slow' && !(await sleep(1000, signal))) return;
      const completion = {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: reply.join(' '), refusal: null }, logprobs: null, finish_reason: finishReason }],
        usage,
      };
      return model === 'fake/drop-mid-stream' ? sendHalfThenDrop(res, completion) : sendJson(res, 200, completion);
    }

    // OpenAI's wire format: with include_usage every chunk carries `usage: null` and one extra chunk with
    // `choices: []` carries the totals, just before [DONE].
    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = chunkMaker(id, created, model, includeUsage);
    const events: string[] = [
      chunk({ role: 'assistant', content: '', refusal: null }, null),
      ...reply.map((w, i) => chunk({ content: i === 0 ? w : ` ${w}` }, null)),
      chunk({}, finishReason),
      ...(includeUsage ? [{ id, object: 'chat.completion.chunk', created, model, choices: [], usage }] : []),
    ].map((c) => `data: ${JSON.stringify(c)}\n\n`);
    events.push('data: [DONE]\n\n');

    const gap = model === 'fake/slow' ? 200 : (opts.streamChunkDelayMs ?? 0);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders(); // the client sees the stream open before the first delay
    for (const [i, event] of events.entries()) {
      if (i > 0 && gap > 0 && !(await sleep(gap, signal))) return;
      if (signal.aborted) return;
      if (model === 'fake/drop-mid-stream' && i === 2) return void res.destroy();
      if (i === events.length - 1) res.end(event);
      else await write(res, event); // each chunk reaches the socket before the next delay
    }
  }

  /** fake/tool-call's answer: a call of the first tool, as chat completions send it (whole, or in chunks). */
  function toolCall(res: ServerResponse, body: any, name: string, text: string): void {
    const args = JSON.stringify({ text });
    const messages: any[] = body.messages;
    const promptTokens = messages.reduce<number>((n, m) => n + words(messageText(m?.content)).length + 3, 0);
    const usage = withCost({ prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 });
    const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);
    const model: string = body.model;
    if (body.stream !== true) {
      const call = { id: 'call_fake_1', type: 'function', function: { name, arguments: args } };
      const message = { role: 'assistant', content: null, tool_calls: [call], refusal: null };
      return sendJson(res, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }], usage });
    }
    const includeUsage = body.stream_options?.include_usage === true;
    const chunk = chunkMaker(id, created, model, includeUsage);
    const half = Math.floor(args.length / 2);
    const events = [
      chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_fake_1', type: 'function', function: { name, arguments: '' } }] }, null),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }, null),
      chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }, null),
      chunk({}, 'tool_calls'),
      ...(includeUsage ? [{ id, object: 'chat.completion.chunk', created, model, choices: [], usage }] : []),
    ].map((c) => `data: ${JSON.stringify(c)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.end(`${events.join('')}data: [DONE]\n\n`);
  }

  async function embeddings(res: ServerResponse, body: any, signal: AbortSignal): Promise<void> {
    const inputs = embeddingInputs(body.input);
    if (!inputs) return invalidParam(res, 'input');
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') return invalidParam(res, 'encoding_format');
    const model: string = body.model;
    const dims = body.dimensions ?? EMBEDDING_DIMS.find(([suffix]) => model.endsWith(suffix))?.[1] ?? 8;
    if (!Number.isInteger(dims) || dims < 1) return invalidParam(res, 'dimensions');
    if (model === 'fake/slow' && !(await sleep(1000, signal))) return;

    const tokens = inputs.reduce((n, input) => n + input.tokens, 0);
    const response = {
      object: 'list',
      data: inputs.map((input, index) => {
        const v = unitVector(input.text, dims);
        return { object: 'embedding', index, embedding: format === 'float' ? v : float32Base64(v) };
      }),
      model,
      usage: withCost({ prompt_tokens: tokens, total_tokens: tokens }),
    };
    return model === 'fake/drop-mid-stream' ? sendHalfThenDrop(res, response) : sendJson(res, 200, response);
  }

  return fake;
}

/** A chat.completion.chunk of one completion; with include_usage every chunk carries `usage: null`. */
function chunkMaker(id: string, created: number, model: string, includeUsage: boolean) {
  return (delta: object, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
}

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** String contents as is; for content-part arrays only the text parts count (images etc. are free here). */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p) => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join(' ');
}

/** OpenAI accepts a string, strings, one token array or token arrays; token arrays hash by their ids. */
function embeddingInputs(input: unknown): { text: string; tokens: number }[] | undefined {
  const isTokens = (x: unknown): x is number[] => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t));
  if (typeof input === 'string') return [{ text: input, tokens: words(input).length }];
  if (isTokens(input)) return [{ text: `tokens:${input.join(',')}`, tokens: input.length }];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  const out: { text: string; tokens: number }[] = [];
  for (const item of input) {
    if (typeof item === 'string') out.push({ text: item, tokens: words(item).length });
    else if (isTokens(item)) out.push({ text: `tokens:${item.join(',')}`, tokens: item.length });
    else return undefined;
  }
  return out;
}

/**
 * Deterministic unit vector of a text: the normalised sum of its words' vectors (lower-cased runs of letters and
 * digits), so texts that share words are near in cosine similarity, as with a real embedding model, and the same
 * text always gives the same vector. A word's vector is SHAKE256 output read as uint32s: because an
 * extendable-output hash's shorter output is a prefix of its longer one, a `dimensions`-reduced vector is the
 * renormalised prefix of the full one, as with OpenAI's text-embedding-3 models. Values are float32 so the float
 * and base64 encodings of one input decode to identical numbers.
 */
function unitVector(text: string, dims: number): number[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [text];
  const sum = new Float64Array(dims);
  for (const word of words) {
    const v = wordVector(word, dims);
    for (let i = 0; i < dims; i++) sum[i]! += v[i]!;
  }
  const norm = Math.hypot(...sum) || 1;
  return Array.from(sum, (x) => Math.fround(x / norm));
}

/** Word vectors, kept: ingestion tests and the benchmark embed the same words over and over. */
const wordVectors = new Map<string, Float64Array>();

function wordVector(word: string, dims: number): Float64Array {
  const key = `${dims}:${word}`;
  let v = wordVectors.get(key);
  if (!v) {
    const bytes = createHash('shake256', { outputLength: dims * 4 }).update(word).digest();
    v = Float64Array.from({ length: dims }, (_, i) => bytes.readUInt32LE(i * 4) / 2 ** 31 - 1);
    if (wordVectors.size > 100_000) wordVectors.clear();
    wordVectors.set(key, v);
  }
  return v;
}

/** What OpenAI sends for encoding_format 'base64': little-endian float32 bytes. */
function float32Base64(v: number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => buf.writeFloatLE(x, i * 4));
  return buf.toString('base64');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A provider that quotes the key it refused, as OpenAI does ("sk-proj-ab****wxyz"), and once more whole. */
function echoKey(res: ServerResponse, status: number, key: string): void {
  const masked = `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`;
  const message = `Incorrect API key provided: ${masked}. You sent "${key}".`;
  sendJson(res, status, { error: { message, type: 'invalid_request_error', code: 'invalid_api_key', param: status === 400 ? key : null } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function invalidParam(res: ServerResponse, param: string): void {
  sendJson(res, 400, { error: { message: `Invalid parameter: ${param}`, type: 'invalid_request_error', code: null, param } });
}

/** A truncated body: the client got a 200 and a promised length, then the connection died. */
async function sendHalfThenDrop(res: ServerResponse, body: unknown): Promise<void> {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  await write(res, text.slice(0, Math.floor(text.length / 2)));
  res.destroy();
}

/** Resolves once the data reached the socket, so a following destroy() cannot discard it. */
function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => res.write(data, () => resolve()));
}

/** false when the exchange ended during the wait (the caller then writes nothing more). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return delay(ms, undefined, { signal }).then(
    () => true,
    () => false,
  );
}
