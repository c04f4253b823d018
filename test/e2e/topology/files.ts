// Files on S3 through the topology: a presigned upload URL from either api process, the bytes PUT straight to the
// S3 server (which the faults stop for a few seconds), and afterwards every upload the bucket acknowledged is listed
// and reads back byte for byte through the platform.
import { expect } from 'vitest';
import type { Topology } from '../../helpers/topology.ts';
import { call, loop, NoAnswer, sleep, Tally } from './client.ts';
import type { TopologyApp } from './data.ts';

/** Between two uploads: each is read back at the end. */
const PACE_MS = 50;

export class FileUploads {
  readonly tally = new Tally();
  /** Acknowledged uploads: object id and the bytes the bucket took. */
  readonly #stored = new Map<string, string>();
  readonly #app: TopologyApp;

  constructor(app: TopologyApp) {
    this.#app = app;
  }

  async run(t: Topology, running: () => boolean): Promise<void> {
    await loop(running, 1, async (i) => {
      const content = `file ${i} of the topology test, ${Date.now()}\n`;
      let objectId = '';
      const stored = await this.tally.run(async () => {
        const up = await call(t.url, 'POST', `/storage/${this.#app.appId}/upload`, {
          key: this.#app.serviceKey,
          body: { filename: `f${i}.txt`, contentType: 'text/plain', sizeBytes: Buffer.byteLength(content) },
        });
        if (up.status !== 200) return up;
        objectId = up.json.objectId;
        return putToBucket(up.json.uploadUrl, content);
      });
      if (stored) this.#stored.set(objectId, content);
      await sleep(PACE_MS);
    });
  }

  /** Every acknowledged upload is listed as ready and reads back as sent. */
  async verify(t: Topology): Promise<{ files: number }> {
    const listed = await call(t.url, 'GET', `/storage/${this.#app.appId}/objects`, { key: this.#app.serviceKey });
    expect(listed.status).toBe(200);
    const ids = new Set((listed.json as Array<{ id: string }>).map((o) => o.id));
    for (const [id, content] of this.#stored) {
      expect(ids.has(id), `listed file ${id}`).toBe(true);
      const read = await call(t.url, 'GET', `/storage/${this.#app.appId}/read/${id}?encoding=utf8`, { key: this.#app.serviceKey });
      expect(read.status).toBe(200);
      expect(read.json.content).toBe(content);
    }
    return { files: this.#stored.size };
  }
}

/** The PUT of the bytes to the presigned URL; the S3 server's answer, or NoAnswer while it is down. */
async function putToBucket(url: string, content: string): Promise<{ status: number; json: undefined; text: string; headers: Record<string, string> }> {
  try {
    const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: content, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, json: undefined, text: await res.text(), headers: {} };
  } catch (err) {
    throw new NoAnswer(`S3: ${String(err)}`);
  }
}
