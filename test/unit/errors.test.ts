import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, envelope, fromZod } from '../../src/core/errors.ts';
import { errorWire } from '../../src/core/error-shapes.ts';
import { isDatabaseOutage, mapPgError } from '../../src/core/pg-errors.ts';

describe('errors', () => {
  it('names the first failing field', () => {
    const r = z.object({ name: z.string().min(1) }).safeParse({ name: '' });
    const err = fromZod(r.error!);
    expect(err.status).toBe(400);
    expect(envelope(err, 'https://svc.example')).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: "Invalid 'name': Too small: expected string to have >=1 characters.",
        remediation: 'Fix the named field and send the request again.',
        documentation_url: 'https://svc.example/llms.txt',
        details: [{ path: 'name', message: 'Too small: expected string to have >=1 characters' }],
      },
    });
  });

  it('links the guide section of the area the error is named in, in the envelope\'s key order', () => {
    const err = new AppError(409, 'CONFLICT', 'Taken.', 'Pick another.', { field: 'name' });
    expect(Object.keys(envelope(err, 'https://svc.example').error)).toEqual(['code', 'message', 'remediation', 'documentation_url', 'details']);
    // The first area named stays: invoke() names the tool's, an outer catch cannot rename it.
    expect(err.inArea('data').inArea('functions').inArea(undefined).area).toBe('data');
    expect(envelope(err, 'https://svc.example').error.documentation_url).toBe('https://svc.example/llms.txt?area=data');
    expect(errorWire(err, 'https://svc.example', 'postgrest').body).toMatchObject({ code: 'CONFLICT', error: { documentation_url: 'https://svc.example/llms.txt?area=data' } });
    expect(JSON.stringify(errorWire(err, 'https://svc.example', 'openai').body)).not.toContain('documentation_url');
  });

  it('maps Postgres codes in one place', () => {
    expect(mapPgError({ code: '23505', detail: 'Key (email)=(a) already exists.' })).toMatchObject({ status: 409, code: 'CONFLICT', message: 'Key (email)=(a) already exists.' });
    expect(mapPgError({ code: '23503' })).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(mapPgError({ code: '22P02', message: 'invalid input syntax for type uuid: "x"' })).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(mapPgError({ code: '57014' })).toMatchObject({ status: 504, code: 'STATEMENT_TIMEOUT' });
    expect(mapPgError({ code: 'XX000' })).toBeUndefined();
    expect(mapPgError(new Error('plain'))).toBeUndefined();
  });

  it('tells a database outage (which an unawaited call may meet without ending the process) from any other error', () => {
    for (const outage of [{ code: '57P01' }, { code: '08006' }, { code: 'ECONNRESET' }, new Error('Connection terminated unexpectedly')]) {
      expect(isDatabaseOutage(outage)).toBe(true);
    }
    for (const other of [{ code: '23505' }, { code: '57014' }, new Error('plain'), undefined, 'text']) expect(isDatabaseOutage(other)).toBe(false);
  });
});
