import { describe, expect, it } from 'vitest';
import { deriveSubdomain, randomId } from '../../src/apps/service.ts';
import { AppIdSchema } from '../../src/apps/types.ts';

describe('app identifiers', () => {
  it('app ids are 16 lowercase alphanumerics and valid database-name suffixes', () => {
    const ids = new Set(Array.from({ length: 500 }, () => randomId(16)));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(AppIdSchema.safeParse(id).success).toBe(true);
  });

  it.each([
    ['My CRM', /^my-crm-[a-z0-9]{6}$/],
    ['  Ünïcödé & Co!! ', /^unicode-co-[a-z0-9]{6}$/],
    ['!!!', /^app-[a-z0-9]{6}$/],
    ['x'.repeat(200), /^x{40}-[a-z0-9]{6}$/],
  ])('subdomain of %j is a DNS label', (name, pattern) => {
    const sub = deriveSubdomain(name);
    expect(sub).toMatch(pattern);
    expect(sub.length).toBeLessThanOrEqual(63);
  });
});
