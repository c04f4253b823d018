// A realtime socket as a test drives it by hand: Phoenix v2 frames ([join_ref, ref, topic, event, payload]) over `ws`,
// for what supabase-js cannot be made to do (hostile frames, a connection that drops without a close frame).
import WebSocket from 'ws';

/** Items as they arrive, and promises for the ones to come. */
export class Inbox<T> {
  readonly items: T[] = [];
  #waiters: Array<{ test: (item: T) => boolean; resolve: (item: T) => void }> = [];

  push = (item: T): void => {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => (w.test(item) ? (w.resolve(item), false) : true));
  };

  /** The first item (arrived or to come) that passes `test`. */
  find(test: (item: T) => boolean = () => true): Promise<T> {
    const found = this.items.find(test);
    return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }
}

export class RawSocket {
  readonly ws: WebSocket;
  readonly frames = new Inbox<unknown[]>();
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.frames.push(JSON.parse(data.toString()));
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Opens `url`; a refused upgrade rejects with its status and JSON body. */
  static open(url: string): Promise<RawSocket> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RawSocket(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(Object.assign(new Error('refused'), { status: res.statusCode, body: JSON.parse(body) })));
      });
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** The reply to the push with this ref. */
  reply(ref: string): Promise<unknown[]> {
    return this.frames.find((f) => f[1] === ref && f[3] === 'phx_reply');
  }

  /** Sends a push and waits for its reply's payload. */
  async ask(joinRef: string | null, ref: string, topic: string, event: string, payload: unknown): Promise<unknown> {
    this.send([joinRef, ref, topic, event, payload]);
    return (await this.reply(ref))[4];
  }

  /** Ends the connection as a network failure would: no close frame, the TCP connection gone. */
  drop(): void {
    (this.ws as unknown as { _socket: { destroy(): void } })._socket.destroy();
  }
}
