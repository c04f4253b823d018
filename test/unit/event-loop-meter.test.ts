// The meter the hostile-input tests rely on: it sees a synchronous block of the process's own work, and not a wait.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { withEventLoopDelay } from '../helpers/event-loop.ts';

/** Keeps the thread busy until it has used `ms` of CPU (on a loaded machine, that takes longer). */
function busy(ms: number): number {
  const cpu = () => {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  };
  const end = cpu() + ms;
  let n = 0;
  while (cpu() < end) n++;
  return n;
}

describe('event-loop meter', () => {
  it('sees 300 ms of synchronous work as a hold of about 300 ms, also when it starts at once', async () => {
    expect((await withEventLoopDelay(() => busy(300))).maxDelayMs).toBeGreaterThan(250);
    expect((await withEventLoopDelay(async () => busy(300))).maxDelayMs).toBeGreaterThan(250);
  });

  it('does not count waiting: 300 ms of timers and I/O hold nothing', async () => {
    const { maxDelayMs } = await withEventLoopDelay(() => sleep(300));
    expect(maxDelayMs).toBeLessThan(50);
  });
});
