// OpenAI's Responses API (POST /responses) on top of the gateway's chat completions: a Responses request becomes a
// chat completion request, and the completion (or its stream of chunks) becomes a Responses object (or its stream of
// typed events). Pure translation: the gateway (AiGateway.responses) makes the call, so that credits, budgets and
// usage rows are exactly chat's. Nothing is stored: previous_response_id and conversations are refused.
import { randomBytes } from 'node:crypto';
import { errors, type AppError } from '../core/errors.ts';

type Json = Record<string, unknown>;

/** The request fields a response object repeats back (OpenAI's echo of the request's settings). */
export interface ResponsesEcho {
  model: string | undefined;
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Json;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  tool_choice: unknown;
  tools: unknown[];
  text: unknown;
  user: string | null;
  reasoning: { effort: unknown; summary: null };
}

/** Request fields read here; anything else is refused naming it (store and the like are accepted and have no effect). */
const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'max_output_tokens',
  'temperature',
  'top_p',
  'parallel_tool_calls',
  'user',
  'text',
  'reasoning',
  'metadata',
  'store',
  'stream',
  'stream_options',
  'include',
  'truncation',
  'service_tier',
  'safety_identifier',
  'prompt_cache_key',
  'previous_response_id',
  'conversation',
  'background',
  'prompt',
]);

const refuse = (param: string, message: string): AppError => errors.validation(`'${param}': ${message}`, [{ path: param, message }]);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A Responses request as a chat completion request, and what the answer echoes back. Throws a 400 naming the param. */
export function toChatRequest(request: Json): { chat: Json; echo: ResponsesEcho } {
  for (const key of Object.keys(request)) if (!KNOWN.has(key)) throw refuse(key, 'not supported by this gateway');
  if (request.previous_response_id != null) throw refuse('previous_response_id', 'not supported: responses are not stored; send the conversation in input');
  if (request.conversation != null) throw refuse('conversation', 'not supported: conversations are not stored; send the conversation in input');
  if (request.background === true) throw refuse('background', 'not supported: call without background and wait for the answer (or stream it)');
  if (request.prompt != null) throw refuse('prompt', 'not supported: stored prompts are not available; send instructions and input');

  const messages: Json[] = [];
  if (request.instructions != null) {
    if (typeof request.instructions !== 'string') throw refuse('instructions', 'must be a string');
    messages.push({ role: 'system', content: request.instructions });
  }
  messages.push(...inputMessages(request.input));

  const chat: Json = { messages };
  if (request.model !== undefined) chat.model = request.model;
  const tools = chatTools(request.tools);
  if (tools.length > 0) chat.tools = tools;
  if (request.tool_choice !== undefined) chat.tool_choice = chatToolChoice(request.tool_choice);
  if (request.max_output_tokens != null) {
    if (!Number.isSafeInteger(request.max_output_tokens) || (request.max_output_tokens as number) < 1) throw refuse('max_output_tokens', 'must be a positive integer');
    chat.max_tokens = request.max_output_tokens;
  }
  for (const field of ['temperature', 'top_p'] as const) {
    const v = request[field];
    if (v == null) continue;
    if (typeof v !== 'number') throw refuse(field, 'must be a number');
    chat[field] = v;
  }
  if (request.parallel_tool_calls != null) {
    if (typeof request.parallel_tool_calls !== 'boolean') throw refuse('parallel_tool_calls', 'must be a boolean');
    if (tools.length > 0) chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (request.user != null) {
    if (typeof request.user !== 'string') throw refuse('user', 'must be a string');
    chat.user = request.user;
  }
  const format = responseFormat(request.text);
  if (format) chat.response_format = format;
  const effort = isObject(request.reasoning) ? request.reasoning.effort : undefined;
  if (request.reasoning != null && !isObject(request.reasoning)) throw refuse('reasoning', 'must be an object');
  if (effort != null) chat.reasoning_effort = effort;
  if (request.stream != null && typeof request.stream !== 'boolean') throw refuse('stream', 'must be a boolean');
  if (request.stream === true) chat.stream = true;
  if (request.metadata != null && !isObject(request.metadata)) throw refuse('metadata', 'must be an object of strings');

  const echo: ResponsesEcho = {
    model: typeof request.model === 'string' ? request.model : undefined,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : null,
    metadata: isObject(request.metadata) ? request.metadata : {},
    parallel_tool_calls: request.parallel_tool_calls !== false,
    temperature: typeof request.temperature === 'number' ? request.temperature : null,
    top_p: typeof request.top_p === 'number' ? request.top_p : null,
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    text: isObject(request.text) ? request.text : { format: { type: 'text' } },
    user: typeof request.user === 'string' ? request.user : null,
    reasoning: { effort: effort ?? null, summary: null },
  };
  return { chat, echo };
}

function inputMessages(input: unknown): Json[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input) || input.length === 0) throw refuse('input', 'a string, or a non-empty array of input items');
  const messages: Json[] = [];
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw refuse(at, 'an input item is an object');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      messages.push(messageOf(item, at));
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
        throw refuse(at, 'a function_call item has string call_id, name and arguments');
      }
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      // Consecutive calls are one assistant turn that asked for several tools.
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls) && last.content === null) (last.tool_calls as unknown[]).push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw refuse(`${at}.call_id`, 'required: the call_id of the function_call answered');
      const output = typeof item.output === 'string' ? item.output : Array.isArray(item.output) ? textOfParts(item.output, `${at}.output`) : undefined;
      if (output === undefined) throw refuse(`${at}.output`, 'a string (or input_text parts)');
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: output });
    } else {
      throw refuse(`${at}.type`, `'${String(type).slice(0, 100)}' is not supported: use message, function_call or function_call_output items`);
    }
  });
  return messages;
}

function messageOf(item: Json, at: string): Json {
  const role = item.role;
  if (role !== 'user' && role !== 'system' && role !== 'developer' && role !== 'assistant') throw refuse(`${at}.role`, 'user, system, developer or assistant');
  if (typeof item.content === 'string') return { role, content: item.content };
  if (!Array.isArray(item.content)) throw refuse(`${at}.content`, 'a string or an array of content parts');
  // Chat takes parts only on user messages; the others get their text.
  if (role !== 'user') return { role, content: textOfParts(item.content, `${at}.content`) };
  const parts = item.content.map((part: unknown, j) => {
    const where = `${at}.content[${j}]`;
    if (!isObject(part)) throw refuse(where, 'a content part is an object');
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return { type: 'text', text: part.text };
    if (part.type === 'input_image' && typeof part.image_url === 'string') {
      return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
    }
    throw refuse(`${where}.type`, 'input_text, output_text or input_image with an image_url');
  });
  return { role, content: parts };
}

function textOfParts(parts: unknown[], at: string): string {
  return parts
    .map((part, j) => {
      if (isObject(part) && ['input_text', 'output_text', 'text'].includes(part.type as string) && typeof part.text === 'string') return part.text;
      if (isObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      throw refuse(`${at}[${j}].type`, 'only text parts are supported here');
    })
    .join('');
}

function chatTools(tools: unknown): Json[] {
  if (tools == null) return [];
  if (!Array.isArray(tools)) throw refuse('tools', 'an array of function tools');
  return tools.map((tool: unknown, i) => {
    if (!isObject(tool) || tool.type !== 'function') {
      const type = isObject(tool) ? String(tool.type) : typeof tool;
      throw refuse(`tools[${i}].type`, `'${type.slice(0, 100)}' tools are not supported by this gateway: only function tools`);
    }
    if (typeof tool.name !== 'string' || tool.name === '') throw refuse(`tools[${i}].name`, 'required');
    const fn: Json = { name: tool.name };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (tool.parameters != null) fn.parameters = tool.parameters;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  throw refuse('tool_choice', "'auto', 'none', 'required' or { type: 'function', name }");
}

function responseFormat(text: unknown): Json | undefined {
  if (text == null) return undefined;
  if (!isObject(text)) throw refuse('text', 'an object');
  const format = text.format;
  if (format == null) return undefined;
  if (!isObject(format)) throw refuse('text.format', 'an object');
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || !isObject(format.schema)) throw refuse('text.format', 'json_schema needs a name and a schema');
    const schema: Json = { name: format.name, schema: format.schema };
    if (typeof format.description === 'string') schema.description = format.description;
    if (typeof format.strict === 'boolean') schema.strict = format.strict;
    return { type: 'json_schema', json_schema: schema };
  }
  throw refuse('text.format.type', "'text', 'json_object' or 'json_schema'");
}

// ------------------------------------------------------------------------------------------------ answers

const newId = (prefix: string): string => `${prefix}_${randomBytes(24).toString('hex')}`;

interface ChatUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  total_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);

/** Chat's usage as the Responses API reports it. */
export function responsesUsage(usage: ChatUsage | null | undefined): Json | null {
  if (!usage) return null;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(usage.prompt_tokens_details?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: typeof usage.total_tokens === 'number' ? count(usage.total_tokens) : input + output,
  };
}

function statusOf(finishReason: unknown): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** A response object: the request's echo around the given state. */
function responseObject(id: string, createdAt: number, model: string, echo: ResponsesEcho, state: { status: string; incomplete_details: unknown; output: unknown[]; usage: Json | null }): Json {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: state.status,
    background: false,
    error: null,
    incomplete_details: state.incomplete_details,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    metadata: echo.metadata,
    model,
    output: state.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage: state.usage,
    user: echo.user,
  };
}

const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });
const messageItem = (id: string, status: string, content: unknown[]) => ({ id, type: 'message', status, role: 'assistant', content });
const callItem = (id: string, status: string, callId: string, name: string, args: string) => ({ id, type: 'function_call', status, call_id: callId, name, arguments: args });

interface ChatCompletion {
  created?: unknown;
  model?: unknown;
  choices?: { finish_reason?: unknown; message?: { content?: unknown; refusal?: unknown; tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] } }[];
  usage?: ChatUsage;
}

/** A non-streamed chat completion as a Responses object. */
export function fromChatCompletion(completion: ChatCompletion, echo: ResponsesEcho): Json {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const output: unknown[] = [];
  if (typeof message?.content === 'string' && message.content !== '') {
    output.push(messageItem(newId('msg'), 'completed', [textPart(message.content)]));
  } else if (typeof message?.refusal === 'string' && message.refusal !== '') {
    output.push(messageItem(newId('msg'), 'completed', [{ type: 'refusal', refusal: message.refusal }]));
  }
  for (const call of message?.tool_calls ?? []) {
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const args = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
    output.push(callItem(newId('fc'), 'completed', typeof call.id === 'string' ? call.id : newId('call'), name, args));
  }
  const createdAt = typeof completion.created === 'number' ? completion.created : Math.floor(Date.now() / 1000);
  const model = typeof completion.model === 'string' ? completion.model : (echo.model ?? '');
  return responseObject(newId('resp'), createdAt, model, echo, { ...statusOf(choice?.finish_reason), output, usage: responsesUsage(completion.usage) });
}

interface ChatChunk {
  model?: unknown;
  created?: unknown;
  usage?: ChatUsage | null;
  error?: { message?: unknown; code?: unknown; type?: unknown };
  choices?: {
    finish_reason?: unknown;
    delta?: { content?: unknown; tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] };
  }[];
}

interface OpenCall {
  outputIndex: number;
  itemId: string;
  callId: string;
  name: string;
  args: string;
}

/**
 * Turns a stream of chat completion chunks into the Responses API's typed events (`event: <type>` + `data: {...}`),
 * in the order OpenAI sends them: response.created and .in_progress, then per output item its added, deltas and
 * done events, then response.completed (or .incomplete) with the whole response and its usage.
 */
export class ResponsesStream {
  readonly #echo: ResponsesEcho;
  readonly #id = newId('resp');
  #createdAt = Math.floor(Date.now() / 1000);
  #model: string;
  #sequence = 0;
  #started = false;
  #finished = false;
  readonly #output: unknown[] = [];
  #text: { outputIndex: number; itemId: string; text: string } | undefined;
  readonly #calls = new Map<number, OpenCall>();
  #finishReason: unknown;
  #usage: ChatUsage | undefined;

  constructor(echo: ResponsesEcho) {
    this.#echo = echo;
    this.#model = echo.model ?? '';
  }

  /** The events for one chat chunk (parsed JSON of a `data:` line). */
  chunk(chunk: ChatChunk): string[] {
    if (chunk.error) return this.error(typeof chunk.error.message === 'string' ? chunk.error.message : 'The AI provider failed mid-stream.', typeof chunk.error.code === 'string' ? chunk.error.code : 'upstream_error');
    const out: string[] = [];
    if (typeof chunk.model === 'string' && chunk.model !== '' && !this.#started) this.#model = chunk.model;
    if (typeof chunk.created === 'number' && !this.#started) this.#createdAt = chunk.created;
    this.#start(out);
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const content = choice.delta?.content;
    if (typeof content === 'string' && content !== '') {
      if (!this.#text) {
        this.#closeCalls(out);
        this.#text = { outputIndex: this.#output.length, itemId: newId('msg'), text: '' };
        this.#output.push(null);
        const { outputIndex, itemId } = this.#text;
        this.#emit(out, 'response.output_item.added', { output_index: outputIndex, item: messageItem(itemId, 'in_progress', []) });
        this.#emit(out, 'response.content_part.added', { item_id: itemId, output_index: outputIndex, content_index: 0, part: textPart('') });
      }
      this.#text.text += content;
      this.#emit(out, 'response.output_text.delta', { item_id: this.#text.itemId, output_index: this.#text.outputIndex, content_index: 0, delta: content, logprobs: [] });
    }
    for (const delta of choice.delta?.tool_calls ?? []) {
      const index = typeof delta.index === 'number' ? delta.index : 0;
      let call = this.#calls.get(index);
      if (!call) {
        this.#closeText(out);
        call = {
          outputIndex: this.#output.length,
          itemId: newId('fc'),
          callId: typeof delta.id === 'string' ? delta.id : newId('call'),
          name: typeof delta.function?.name === 'string' ? delta.function.name : '',
          args: '',
        };
        this.#output.push(null);
        this.#calls.set(index, call);
        this.#emit(out, 'response.output_item.added', { output_index: call.outputIndex, item: callItem(call.itemId, 'in_progress', call.callId, call.name, '') });
      }
      const args = delta.function?.arguments;
      if (typeof args === 'string' && args !== '') {
        call.args += args;
        this.#emit(out, 'response.function_call_arguments.delta', { item_id: call.itemId, output_index: call.outputIndex, delta: args });
      }
    }
    if (choice.finish_reason != null) this.#finishReason = choice.finish_reason;
    return out;
  }

  /** The closing events once the chat stream ended ([DONE]): open items done, then response.completed or .incomplete. */
  finish(): string[] {
    if (this.#finished) return [];
    const out: string[] = [];
    this.#start(out);
    this.#closeText(out);
    this.#closeCalls(out);
    this.#finished = true;
    const state = statusOf(this.#finishReason);
    const response = this.#response({ ...state, usage: responsesUsage(this.#usage) });
    this.#emit(out, state.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
    return out;
  }

  /** An error event, which ends the stream (the openai SDK throws it). */
  error(message: string, code: string): string[] {
    if (this.#finished) return [];
    this.#finished = true;
    const out: string[] = [];
    this.#emit(out, 'error', { code, message, param: null });
    return out;
  }

  get finished(): boolean {
    return this.#finished;
  }

  #start(out: string[]): void {
    if (this.#started) return;
    this.#started = true;
    const response = this.#response({ status: 'in_progress', incomplete_details: null, usage: null });
    this.#emit(out, 'response.created', { response });
    this.#emit(out, 'response.in_progress', { response });
  }

  #closeText(out: string[]): void {
    const open = this.#text;
    if (!open) return;
    this.#text = undefined;
    const { itemId, outputIndex, text } = open;
    this.#emit(out, 'response.output_text.done', { item_id: itemId, output_index: outputIndex, content_index: 0, text, logprobs: [] });
    this.#emit(out, 'response.content_part.done', { item_id: itemId, output_index: outputIndex, content_index: 0, part: textPart(text) });
    const item = messageItem(itemId, 'completed', [textPart(text)]);
    this.#output[outputIndex] = item;
    this.#emit(out, 'response.output_item.done', { output_index: outputIndex, item });
  }

  #closeCalls(out: string[]): void {
    for (const call of this.#calls.values()) {
      if (this.#output[call.outputIndex] !== null) continue;
      this.#emit(out, 'response.function_call_arguments.done', { item_id: call.itemId, output_index: call.outputIndex, name: call.name, arguments: call.args });
      const item = callItem(call.itemId, 'completed', call.callId, call.name, call.args);
      this.#output[call.outputIndex] = item;
      this.#emit(out, 'response.output_item.done', { output_index: call.outputIndex, item });
    }
  }

  #response(state: { status: string; incomplete_details: unknown; usage: Json | null }): Json {
    return responseObject(this.#id, this.#createdAt, this.#model, this.#echo, { ...state, output: this.#output.filter((item) => item !== null) });
  }

  #emit(out: string[], type: string, fields: Json): void {
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#sequence++, ...fields })}\n\n`);
  }
}

/**
 * The Responses events of a chat completion's relayed stream (complete `data:` events, as the gateway's relay
 * yields them, usage chunk included): a chat error event becomes an `error` event; a stream that ends without
 * [DONE] or an error still ends with an error event.
 */
export async function* responsesEvents(chatEvents: AsyncIterable<Uint8Array | string>, echo: ResponsesEcho): AsyncGenerator<string> {
  const stream = new ResponsesStream(echo);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const piece of chatEvents) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      if (data === '[DONE]') {
        yield* stream.finish();
        continue;
      }
      let chunk: ChatChunk;
      try {
        chunk = JSON.parse(data) as ChatChunk;
      } catch {
        continue;
      }
      if (!stream.finished) yield* stream.chunk(chunk);
    }
  }
  if (!stream.finished) yield* stream.error('The AI provider ended the stream before it was complete. Retry with backoff.', 'upstream_error');
}
