// Relays an upstream's server-sent events to the client event by event, reading the usage they report on the way.

/** What the relay learned from the events it passed through. */
export interface RelayState {
  usage: Record<string, unknown> | undefined;
  /** Characters of assistant content relayed: the basis of an estimate when no usage report arrives. */
  contentChars: number;
  done: boolean;
}

/**
 * Yields each complete event (`...\n\n`) of the upstream body as soon as it is complete. A usage-only chunk
 * (`choices: []`, asked for by the gateway with stream_options.include_usage) is passed on only when the client
 * asked for it itself.
 */
export async function* relayEvents(body: AsyncIterable<Uint8Array>, forwardUsageChunk: boolean, state: RelayState): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    if (buffer.includes('\r')) buffer = buffer.replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      if (inspect(event, state) || forwardUsageChunk) yield event;
      end = buffer.indexOf('\n\n');
    }
  }
  if (buffer.trim()) yield `${buffer}\n\n`;
}

/** Reads one event into the state; false for a usage-only chunk (which the client did not ask for). */
function inspect(event: string, state: RelayState): boolean {
  const data = event
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  if (data === '[DONE]') {
    state.done = true;
    return true;
  }
  let chunk: { usage?: unknown; choices?: { delta?: { content?: unknown } }[] };
  try {
    chunk = JSON.parse(data) as typeof chunk;
  } catch {
    return true;
  }
  const content = chunk.choices?.[0]?.delta?.content;
  if (typeof content === 'string') state.contentChars += content.length;
  if (!chunk.usage || typeof chunk.usage !== 'object') return true;
  state.usage = chunk.usage as Record<string, unknown>;
  return !(Array.isArray(chunk.choices) && chunk.choices.length === 0);
}
