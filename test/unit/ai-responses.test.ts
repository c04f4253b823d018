// The Responses API translation (src/ai/responses.ts): requests to chat completions, completions and chunk streams back.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import { fromChatCompletion, responsesEvents, ResponsesStream, toChatRequest } from '../../src/ai/responses.ts';

function refusal(request: Record<string, unknown>): { status: number; param: unknown } {
  try {
    toChatRequest(request);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    return { status: e.status, param: (e.details as { path: string }[])[0]!.path };
  }
  throw new Error('not refused');
}

/** The events of a stream as { type, data }. */
function parse(events: string[]): { type: string; data: any }[] {
  return events.map((e) => {
    const [head, body] = e.split('\n');
    expect(e.endsWith('\n\n')).toBe(true);
    return { type: head!.slice('event: '.length), data: JSON.parse(body!.slice('data: '.length)) };
  });
}

describe('toChatRequest', () => {
  it('maps input, instructions, tools, tool_choice, limits and text.format', () => {
    const { chat, echo } = toChatRequest({
      model: 'openai/gpt-4o-mini',
      instructions: 'be brief',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'https://x/y.png', detail: 'low' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"a":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
      ],
      tools: [{ type: 'function', name: 'f', description: 'F', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'f' },
      max_output_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: 'u1',
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      reasoning: { effort: 'low' },
      store: true,
      metadata: { k: 'v' },
    });
    expect(chat).toEqual({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"a":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'one' },
        { role: 'assistant', content: 'done' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'F', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      max_tokens: 50,
      temperature: 0.5,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: 'u1',
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
    });
    expect(echo).toMatchObject({ model: 'openai/gpt-4o-mini', instructions: 'be brief', max_output_tokens: 50, metadata: { k: 'v' }, parallel_tool_calls: false });
    expect(toChatRequest({ input: 'hi', text: { format: { type: 'json_object' } }, stream: true }).chat).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_object' },
      stream: true,
    });
  });

  it('refuses what it cannot serve with 400 naming the param', () => {
    expect(refusal({ input: 'x', previous_response_id: 'resp_1' })).toEqual({ status: 400, param: 'previous_response_id' });
    expect(refusal({ input: 'x', conversation: 'conv_1' })).toEqual({ status: 400, param: 'conversation' });
    expect(refusal({ input: 'x', background: true })).toEqual({ status: 400, param: 'background' });
    expect(refusal({ input: 'x', prompt: { id: 'p' } })).toEqual({ status: 400, param: 'prompt' });
    expect(refusal({ input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] })).toEqual({ status: 400, param: 'tools[1].type' });
    expect(refusal({ input: [{ type: 'item_reference', id: 'x' }] })).toEqual({ status: 400, param: 'input[0].type' });
    expect(refusal({ input: [] })).toEqual({ status: 400, param: 'input' });
    expect(refusal({ input: 'x', frobnicate: 1 })).toEqual({ status: 400, param: 'frobnicate' });
    expect(refusal({ input: 'x', tool_choice: { type: 'web_search' } })).toEqual({ status: 400, param: 'tool_choice' });
  });
});

describe('fromChatCompletion', () => {
  const { echo } = toChatRequest({ model: 'openai/gpt-4o-mini', input: 'hi' });

  it('a text answer: one message item, usage in Responses terms', () => {
    const out = fromChatCompletion(
      {
        created: 1700000000,
        model: 'openai/gpt-4o-mini',
        choices: [{ finish_reason: 'stop', message: { content: 'echo: hi' } }],
        usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
      },
      echo,
    );
    expect(out).toMatchObject({
      object: 'response',
      created_at: 1700000000,
      status: 'completed',
      model: 'openai/gpt-4o-mini',
      incomplete_details: null,
      store: false,
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'echo: hi', annotations: [], logprobs: [] }] }],
      usage: { input_tokens: 4, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 6 },
    });
    expect(out.id).toMatch(/^resp_[0-9a-f]{48}$/);
  });

  it('tool calls become function_call items; length makes it incomplete', () => {
    const out = fromChatCompletion(
      { choices: [{ finish_reason: 'tool_calls', message: { content: null, tool_calls: [{ id: 'call_1', function: { name: 'f', arguments: '{"a":1}' } }] } }] },
      echo,
    );
    expect(out.output).toEqual([{ id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{"a":1}' }]);
    expect(fromChatCompletion({ choices: [{ finish_reason: 'length', message: { content: 'a' } }] }, echo)).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });
});

describe('ResponsesStream', () => {
  const { echo } = toChatRequest({ model: 'm/x', input: 'hi' });

  it('text deltas: the event sequence OpenAI sends, numbered', async () => {
    const chunks = [
      { model: 'm/x', choices: [{ delta: { role: 'assistant', content: '' } }] },
      { model: 'm/x', choices: [{ delta: { content: 'echo:' } }] },
      { model: 'm/x', choices: [{ delta: { content: ' hi' } }] },
      { model: 'm/x', choices: [{ delta: {}, finish_reason: 'stop' }] },
      { model: 'm/x', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } },
    ];
    async function* relay() {
      for (const c of chunks) yield `data: ${JSON.stringify(c)}\n\n`;
      yield 'data: [DONE]\n\n';
    }
    const events: string[] = [];
    for await (const e of responsesEvents(relay(), echo)) events.push(e);
    const parsed = parse(events);
    expect(parsed.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(parsed.map((e) => e.data.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(parsed.every((e) => e.data.type === e.type)).toBe(true);
    expect(parsed[6]!.data).toMatchObject({ output_index: 0, content_index: 0, text: 'echo: hi' });
    const done = parsed.at(-1)!.data.response;
    expect(done).toMatchObject({ status: 'completed', model: 'm/x', usage: { input_tokens: 4, output_tokens: 2, total_tokens: 6 } });
    expect(done.output).toEqual([parsed[8]!.data.item]);
    expect(parsed[4]!.data.item_id).toBe(done.output[0].id);
  });

  it('tool call deltas: added, argument deltas, done', () => {
    const stream = new ResponsesStream(echo);
    const events = parse([
      ...stream.chunk({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '' } }] } }] }),
      ...stream.chunk({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] } }] }),
      ...stream.chunk({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }] }),
      ...stream.finish(),
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[6]!.data.item).toMatchObject({ type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{"a":1}' });
  });

  it('a chat error event, or a stream cut short, ends with an error event', async () => {
    async function* broken() {
      yield `data: ${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })}\n\n`;
      yield `data: ${JSON.stringify({ error: { message: 'boom', type: 'api_error', code: 'upstream_error' } })}\n\n`;
    }
    const events: string[] = [];
    for await (const e of responsesEvents(broken(), echo)) events.push(e);
    expect(parse(events).at(-1)).toEqual({ type: 'error', data: { type: 'error', sequence_number: 5, code: 'upstream_error', message: 'boom', param: null } });
    async function* cut() {
      yield `data: ${JSON.stringify({ choices: [{ delta: { content: 'a' } }] })}\n\n`;
    }
    const more: string[] = [];
    for await (const e of responsesEvents(cut(), echo)) more.push(e);
    expect(parse(more).at(-1)!.type).toBe('error');
  });
});
