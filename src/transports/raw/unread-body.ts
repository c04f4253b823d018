import type { Request, Response } from 'express';

/** How much of a refused upload is still read (and discarded) so the client gets to read the answer. */
const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
const DISCARD_TIMEOUT_MS = 5000;

/**
 * An upload refused before its body was read to the end: most HTTP clients read the answer only after they
 * finish sending, and a socket closed under them surfaces as EPIPE instead of the 4xx. So discard what is
 * still coming (bounded in bytes and time; nothing is stored), then answer with Connection: close.
 */
export async function settleUnreadBody(req: Request, res: Response): Promise<void> {
  if (req.complete) return;
  res.setHeader('Connection', 'close');
  await new Promise<void>((resolve) => {
    let discarded = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_LIMIT_BYTES) done();
    };
    const timer = setTimeout(done, DISCARD_TIMEOUT_MS);
    req.on('data', onData);
    // A body parser that gave up paused the stream; nothing flows to the listener until it is resumed.
    req.resume();
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    req.resume();
  });
}
