// The second limit of scenario `functions`: the least a sandboxed relay can do. Raw node:http in front of the
// platform's own runner processes, started exactly as the platform starts them (src/functions/instance.ts: the same
// Deno flags and network deny list, memory limit, CPU watchdog, stdio framing), PROCESSES x CONCURRENCY requests in
// flight, a FIFO queue behind them. None of the platform's logic: no app or function lookup, no credential check,
// no billing gate or meters, no invocation log, no request id or CORS; the ratio against it is their price.
// Env: CODE (the function's module), DATABASE_URL (its hosts join the deny list, as for the platform),
// PROCESSES (default 2), CONCURRENCY (default 16). Prints `ready <port>`.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Instance, type ResponseSink } from '../src/functions/instance.ts';
import { buildDenyList, resolveDenoBinary } from '../src/functions/sandbox.ts';

const PROCESSES = Number(process.env.PROCESSES || 2);
const CONCURRENCY = Number(process.env.CONCURRENCY || 16);
const code = process.env.CODE;
if (!code) throw new Error('CODE is required');

const sandbox = {
  deno: resolveDenoBinary(undefined),
  denoDir: mkdtempSync(path.join(tmpdir(), 'svc-relay-deno-')),
  denyNet: await buildDenyList({ databaseUrls: [process.env.DATABASE_URL ?? ''], allowPrivateNet: false, extra: [] }),
};
const spec = { key: 'relay:1', functionId: 'relay', appId: 'relay', name: 'hello', code, env: {}, memoryLimitMb: 128, platformOrigins: [], allowPrivateNet: false };
const options = { sandbox, rssHeadroomMb: 64, concurrency: CONCURRENCY, cpuCores: 2, cpuGraceMs: 2000, onStopped: () => {}, log: pino({ level: 'silent' }) };
const instances = await Promise.all(
  Array.from({ length: PROCESSES }, async () => {
    const instance = new Instance(spec, options);
    await instance.start(15_000);
    return instance;
  }),
);
const queue: Array<() => void> = [];

/** The least loaded process with a free slot, its slot taken; or undefined when every slot is taken. */
function freeInstance(): Instance | undefined {
  let best: Instance | undefined;
  for (const i of instances) if (i.load < CONCURRENCY && (!best || i.load < best.load)) best = i;
  return best?.reserve() ? best : undefined;
}

/** Collects the response; it is sent whole once the runner ends it (hello world is one chunk). */
class Collect implements ResponseSink {
  status = 200;
  headers: Array<[string, string]> = [];
  chunks: Buffer[] = [];
  head(status: number, headers: Array<[string, string]>): void {
    this.status = status;
    this.headers = headers;
  }
  chunk(data: Buffer): boolean {
    this.chunks.push(data);
    return true;
  }
  end(): void {}
}

async function relay(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let instance = freeInstance();
  while (!instance) {
    await new Promise<void>((resolve) => queue.push(resolve));
    instance = freeInstance();
  }
  const headers: Array<[string, string]> = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  const sink = new Collect();
  try {
    const outcome = await instance.run({ method: req.method!, url: `http://127.0.0.1${req.url}`, headers, body: null, user: null, token: null, substrate: false, timeoutMs: 30_000 }, sink);
    const body = Buffer.concat(sink.chunks);
    res.writeHead(outcome.failure ? 500 : sink.status, [...sink.headers.flat(), 'content-length', String(body.length)]);
    res.end(body);
  } finally {
    queue.shift()?.();
  }
}

const server = createServer((req, res) => {
  relay(req, res).catch(() => res.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(`ready ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => {
  for (const i of instances) i.kill('evicted');
  server.close(() => process.exit(0));
});
