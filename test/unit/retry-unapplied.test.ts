// A write is tried again only when it certainly left nothing written (a SQLSTATE Postgres answered with, or no
// connection at all); a connection lost mid-statement may have committed and is never retried.
import { describe, expect, it } from 'vitest';
import { certainlyUnapplied, retryUnapplied } from '../../src/core/retry-unapplied.ts';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

describe('retryUnapplied', () => {
  it.each([
    [pgError('40001'), true],
    [pgError('40P01'), true],
    [pgError('53300'), true],
    [pgError('57P01'), true],
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), false],
    [new Error('Connection terminated unexpectedly'), false],
    [pgError('23505'), false],
    [pgError('42P01'), false],
    [undefined, false],
  ])('%s: retried %s', (err, expected) => {
    expect(certainlyUnapplied(err)).toBe(expected);
  });

  it('retries a refused write until it goes through, and gives up after the last delay', async () => {
    let calls = 0;
    expect(await retryUnapplied(async () => (++calls < 3 ? Promise.reject(pgError('40001')) : 'written'), [1, 1, 1])).toBe('written');
    expect(calls).toBe(3);
    calls = 0;
    const refused = async () => {
      calls++;
      throw pgError('53300');
    };
    await expect(retryUnapplied(refused, [1, 1])).rejects.toMatchObject({ code: '53300' });
    expect(calls).toBe(3);
  });

  it('never retries a failure that may have committed', async () => {
    let calls = 0;
    const lost = async () => {
      calls++;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    };
    await expect(retryUnapplied(lost, [1, 1])).rejects.toThrow('ECONNRESET');
    expect(calls).toBe(1);
  });
});
