// The progress notices of a long tool call, on fake timers (the e2e test sees only a call's start and end).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ServerNotification } from '@modelcontextprotocol/server';
import { observeToolCall } from '../../src/transports/mcp-utilities.ts';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** The parts of a request's context that observeToolCall uses, recording what it sends. */
function fakeExtra(progressToken?: string) {
  const sent: ServerNotification[] = [];
  const mcpReq = { _meta: progressToken === undefined ? undefined : { progressToken }, notify: async (n: ServerNotification) => void sent.push(n) };
  const extra = { mcpReq };
  return { sent, extra: extra as unknown as Parameters<typeof observeToolCall>[1] };
}

describe('observeToolCall', () => {
  it('sends progress at the start, every 2 s while the call runs and at the end, then the info message', async () => {
    const { sent, extra } = fakeExtra('t1');
    const call = observeToolCall({ level: 'info' }, extra, 'functions_deploy', () => new Promise((r) => setTimeout(() => r('done'), 4_500)));
    await vi.advanceTimersByTimeAsync(4_500);
    expect(await call).toBe('done');
    expect(sent.map((n) => n.params)).toEqual([
      { progressToken: 't1', progress: 0, message: 'functions_deploy started' },
      { progressToken: 't1', progress: 1, message: 'functions_deploy running' },
      { progressToken: 't1', progress: 2, message: 'functions_deploy running' },
      { progressToken: 't1', progress: 3, total: 3, message: 'functions_deploy succeeded' },
      { level: 'info', logger: 'svc-platform', data: { event: 'tool_call_finished', tool: 'functions_deploy', status: 'succeeded', duration_ms: 4_500 } },
    ]);
  });

  it('sends no progress without a token, and rethrows a refusal after its warning', async () => {
    const { sent, extra } = fakeExtra();
    const refusal = Object.assign(new Error('no'), { code: 'FORBIDDEN' });
    await expect(observeToolCall({ level: 'warning' }, extra, 'apps_get', () => Promise.reject(refusal))).rejects.toBe(refusal);
    expect(sent).toEqual([
      { method: 'notifications/message', params: { level: 'warning', logger: 'svc-platform', data: { event: 'tool_call_finished', tool: 'apps_get', status: 'refused', code: 'FORBIDDEN', duration_ms: 0 } } },
    ]);
  });
});
