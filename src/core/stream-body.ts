/**
 * A success body sent as it is produced (server-sent events from the AI gateway): a tool returns one instead of an
 * output object and the REST transport writes each chunk as soon as it arrives, with backpressure. Only transports
 * that can stream (ctx.canStream) may be given one.
 */
export class StreamBody {
  readonly chunks: AsyncIterable<Uint8Array | string>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(chunks: AsyncIterable<Uint8Array | string>, headers: Record<string, string>) {
    this.chunks = chunks;
    this.headers = headers;
  }
}
