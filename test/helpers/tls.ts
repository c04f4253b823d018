// An https server on loopback for what the platform fetches over https (OAuth clients' metadata documents): a
// certificate for 127.0.0.1 and localhost made with openssl for the test run, which a spawned platform trusts through
// NODE_EXTRA_CA_CERTS, and a server answering each path as the test sets it, counting requests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

export interface HttpsHost {
  /** https://127.0.0.1:<port> */
  origin: string;
  /** The environment a spawned platform needs to trust this host's certificate. */
  trustEnv: Record<string, string>;
  /** Sets what a path answers (200 with the body unless the answer says otherwise). */
  serve(pathname: string, answer: Answer): void;
  /** How many requests a path has had. */
  hits(pathname: string): number;
  close(): Promise<void>;
}

export async function startHttpsHost(): Promise<HttpsHost> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-tls-'));
  const [keyFile, certFile] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  const answers = new Map<string, Answer>();
  const counts = new Map<string, number>();
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const pathname = new URL(req.url!, 'https://host').pathname;
    counts.set(pathname, (counts.get(pathname) ?? 0) + 1);
    const answer = answers.get(pathname) ?? { status: 404, body: 'not found' };
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    trustEnv: { NODE_EXTRA_CA_CERTS: certFile },
    serve: (pathname, answer) => void answers.set(pathname, answer),
    hits: (pathname) => counts.get(pathname) ?? 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
