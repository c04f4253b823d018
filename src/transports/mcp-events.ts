// The SSE events of one 2025-11-25 MCP session, kept so that a client whose stream dropped can resume it with
// Last-Event-ID (the transport sends every SSE stream a priming event id and a `retry` first). Kept in the memory of
// the process that holds the stream, bounded per session: resuming works on that process (as the session's open
// streams and elicitations do; see mcp-sessions.ts); a resume that reaches another process, or comes after the events
// were dropped, gets a stream without them (what a request answered there is lost, as without resumption).
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/** Events a session keeps for replay, newest last; older ones are dropped. */
const MAX_EVENTS = 100;
/** Memory a session's kept messages may hold (heldBytes): a large tool result must not pin megabytes per session. */
const MAX_BYTES = 256 * 1024;

interface StoredEvent {
  id: string;
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/** Bytes a value holds as JS strings and slots (two per UTF-16 unit, 16 per value): a bound without serializing it. */
function heldBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (typeof value !== 'object' || value === null) return 16;
  let bytes = 16;
  if (Array.isArray(value)) for (const item of value) bytes += heldBytes(item);
  else for (const key in value) bytes += 2 * key.length + heldBytes((value as Record<string, unknown>)[key]);
  return bytes;
}

/** One session's replayable SSE events (an EventStore of the SDK's transport). */
export class SessionEvents implements EventStore {
  readonly #events: StoredEvent[] = [];
  #bytes = 0;
  #next = 0;

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // Ids carry their stream, so a resume names the stream it continues even after its events were dropped.
    const id = `${streamId}_${(this.#next++).toString(36)}`;
    const bytes = heldBytes(message);
    // The priming event ({}) carries no message: there is nothing to replay for it.
    if (Object.keys(message).length > 0 && bytes <= MAX_BYTES) {
      this.#events.push({ id, streamId, message, bytes });
      this.#bytes += bytes;
      while (this.#events.length > MAX_EVENTS || this.#bytes > MAX_BYTES) this.#bytes -= this.#events.shift()!.bytes;
    }
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const cut = eventId.lastIndexOf('_');
    return cut > 0 ? eventId.slice(0, cut) : undefined;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const streamId = await this.getStreamIdForEventId(lastEventId);
    if (streamId === undefined) throw new Error('Unknown event id.');
    const at = this.#events.findIndex((e) => e.id === lastEventId);
    // The priming event holds no message, so it is never stored: a resume after it replays the whole stream.
    const after = at >= 0 ? this.#events.slice(at + 1) : this.#events;
    for (const event of after) if (event.streamId === streamId) await send(event.id, event.message);
    return streamId;
  }
}
