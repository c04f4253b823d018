import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { envelope, fromZod } from '../../src/core/errors.ts';
import { mapPgError } from '../../src/core/pg-errors.ts';

describe('errors', () => {
  it('names the first failing field', () => {
    const r = z.object({ name: z.string().min(1) }).safeParse({ name: '' });
    const err = fromZod(r.error!);
    expect(err.status).toBe(400);
    expect(envelope(err)).toEqual({
      error: {
        code: 'VALIDATION_FAILED',
        message: "Invalid 'name': Too small: expected string to have >=1 characters.",
        remediation: 'Fix the named field and send the request again.',
        details: [{ path: 'name', message: 'Too small: expected string to have >=1 characters' }],
      },
    });
  });

  it('maps Postgres codes in one place', () => {
    expect(mapPgError({ code: '23505', detail: 'Key (email)=(a) already exists.' })).toMatchObject({ status: 409, code: 'CONFLICT', message: 'Key (email)=(a) already exists.' });
    expect(mapPgError({ code: '23503' })).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(mapPgError({ code: '22P02', message: 'invalid input syntax for type uuid: "x"' })).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    expect(mapPgError({ code: '57014' })).toMatchObject({ status: 504, code: 'STATEMENT_TIMEOUT' });
    expect(mapPgError({ code: 'XX000' })).toBeUndefined();
    expect(mapPgError(new Error('plain'))).toBeUndefined();
  });
});
