// A small round-robin load balancer for tests of several api processes: each HTTP request and each websocket upgrade
// goes to the next backend in turn. Like nginx's `proxy_next_upstream error`, a request whose backend refuses the
// connection (nothing was sent, so nothing can have happened) is tried on the next backend; any other failure of a
// backend is a 502 to the client, who cannot know whether the request took effect. The client's address is appended
// to X-Forwarded-For (the platform runs with SVC_TRUST_PROXY=1 behind it).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests and upgrades answered by each backend (by its index in the list). */
  served: number[];
  /** Requests sent on to the next backend because one refused the connection. */
  retried: number;
  /** Requests whose backend failed after they were sent: answered 502, or cut mid-answer. */
  failed: number;
  close(): Promise<void>;
}

/** A backend silent this long fails its request (502). */
const UPSTREAM_TIMEOUT_MS = 60_000;

/** Backend ports on 127.0.0.1; the proxy listens on a free loopback port. */
export async function startRoundRobinProxy(ports: readonly number[]): Promise<RoundRobinProxy> {
  const served = ports.map(() => 0);
  const state = { next: 0, retried: 0, failed: 0 };
  const pick = (): number => {
    const i = state.next;
    state.next = (state.next + 1) % ports.length;
    return i;
  };

  const server = http.createServer(async (req, res) => {
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return void res.destroy(); // the client went away mid-body
    }
    const forward = (i: number, attempt: number): void => {
      const upstream = http.request(
        { host: '127.0.0.1', port: ports[i], method: req.method, path: req.url, headers: forwardedHeaders(req), agent: false },
        (answer) => {
          served[i]!++;
          res.writeHead(answer.statusCode!, answer.statusMessage, answer.rawHeaders);
          answer.pipe(res);
          // The backend died mid-answer: the client sees its connection cut, as behind any balancer.
          answer.once('error', () => {
            state.failed++;
            res.destroy();
          });
        },
      );
      upstream.setTimeout(UPSTREAM_TIMEOUT_MS, () => upstream.destroy(new Error('upstream timed out')));
      upstream.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED' && attempt < ports.length) {
          state.retried++;
          return forward((i + 1) % ports.length, attempt + 1);
        }
        state.failed++;
        if (res.headersSent) return void res.destroy();
        res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      });
      // A client that goes away takes its upstream request with it (a streaming answer would otherwise run on).
      res.once('close', () => upstream.destroy());
      upstream.end(body);
    };
    forward(pick(), 1);
  });

  server.on('upgrade', (req, client, head) => {
    const connectTo = (i: number, attempt: number): void => {
      const upstream = net.connect(ports[i]!, '127.0.0.1');
      upstream.once('connect', () => {
        served[i]!++;
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headerLines(forwardedHeaders(req))}\r\n`);
        if (head.length) upstream.write(head);
        upstream.pipe(client).pipe(upstream);
      });
      upstream.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED' && attempt < ports.length) return connectTo((i + 1) % ports.length, attempt + 1);
        client.destroy();
      });
      client.once('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    };
    connectTo(pick(), 1);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    get retried() {
      return state.retried;
    },
    get failed() {
      return state.failed;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The request's headers with the client's address appended to X-Forwarded-For, as a load balancer does. */
function forwardedHeaders(req: http.IncomingMessage): http.OutgoingHttpHeaders {
  const before = req.headers['x-forwarded-for'];
  const client = req.socket.remoteAddress ?? '';
  return { ...req.headers, 'x-forwarded-for': before ? `${before}, ${client}` : client };
}

function headerLines(headers: http.OutgoingHttpHeaders): string {
  let out = '';
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) out += `${name}: ${v}\r\n`;
  }
  return out;
}
