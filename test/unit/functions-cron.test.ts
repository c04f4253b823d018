import { describe, expect, it } from 'vitest';
import { CronError, cronMatches, cronNext, cronSlots, parseCron } from '../../src/core/cron.ts';

const at = (iso: string) => new Date(iso);
const sorted = (s: ReadonlySet<number>) => [...s].sort((a, b) => a - b);

describe('parseCron', () => {
  it('expands *, numbers, ranges, steps and lists', () => {
    const s = parseCron('*/15 0-6/2 1,15,31 * *');
    expect(sorted(s.minutes)).toEqual([0, 15, 30, 45]);
    expect(sorted(s.hours)).toEqual([0, 2, 4, 6]);
    expect(sorted(s.daysOfMonth)).toEqual([1, 15, 31]);
    expect(s.months.size).toBe(12);
    expect(s.daysOfWeek.size).toBe(7);
  });

  it('reads a/n as a, a+n, ... up to the maximum', () => {
    expect(sorted(parseCron('5/20 * * * *').minutes)).toEqual([5, 25, 45]);
  });

  it('accepts month and day names in any case', () => {
    const s = parseCron('0 9 * jan-MAR,Dec mon-fri');
    expect(sorted(s.months)).toEqual([1, 2, 3, 12]);
    expect(sorted(s.daysOfWeek)).toEqual([1, 2, 3, 4, 5]);
    expect(sorted(parseCron('0 0 * * SUN').daysOfWeek)).toEqual([0]);
  });

  it('treats day-of-week 7 as Sunday, alone and in ranges', () => {
    expect(sorted(parseCron('0 0 * * 7').daysOfWeek)).toEqual([0]);
    expect(sorted(parseCron('0 0 * * 5-7').daysOfWeek)).toEqual([0, 5, 6]);
    expect(sorted(parseCron('0 0 * * 0,7').daysOfWeek)).toEqual([0]);
  });

  it('expands the @-macros', () => {
    expect(parseCron('@hourly').source).toBe('@hourly');
    expect(sorted(parseCron('@hourly').minutes)).toEqual([0]);
    expect(parseCron('@daily').hours.size).toBe(1);
    expect(sorted(parseCron('@weekly').daysOfWeek)).toEqual([0]);
    expect(sorted(parseCron('@YEARLY').months)).toEqual([1]);
  });

  it.each([
    ['* * * *', /expected 5 fields/],
    ['* * * * * *', /expected 5 fields/],
    ['60 * * * *', /minute: 60 is outside 0-59/],
    ['* 24 * * *', /hour: 24 is outside 0-23/],
    ['* * 0 * *', /day of month: 0 is outside 1-31/],
    ['* * * 13 *', /month: 13 is outside 1-12/],
    ['* * * * 8', /day of week: 8 is outside 0-7/],
    ['*/0 * * * *', /step '0' must be a positive number/],
    ['5-1 * * * *', /runs backwards/],
    ['1,,2 * * * *', /empty list item/],
    ['a * * * *', /minute: 'a' is not a number/],
    ['* * * foo *', /month: 'foo' is not a number or a name/],
    ['1-2-3 * * * *', /not a range/],
    ['*/5/2 * * * *', /more than one/],
    ['@reboot', /unknown macro/],
    ['*/61 * * * *', /larger than the field's range/],
  ])('refuses %s', (expr, message) => {
    expect(() => parseCron(expr)).toThrow(CronError);
    expect(() => parseCron(expr)).toThrow(message);
  });
});

describe('cronMatches (UTC)', () => {
  it('matches minutes and hours in UTC', () => {
    const s = parseCron('30 14 * * *');
    expect(cronMatches(s, at('2025-03-10T14:30:59Z'))).toBe(true);
    expect(cronMatches(s, at('2025-03-10T14:31:00Z'))).toBe(false);
    // 14:30 in UTC+2 is 12:30 UTC
    expect(cronMatches(s, at('2025-03-10T14:30:00+02:00'))).toBe(false);
  });

  it('requires both day fields when one of them is *', () => {
    const weekdays = parseCron('0 9 * * 1-5');
    expect(cronMatches(weekdays, at('2025-03-10T09:00:00Z'))).toBe(true); // Monday
    expect(cronMatches(weekdays, at('2025-03-09T09:00:00Z'))).toBe(false); // Sunday
    const firstOfMonth = parseCron('0 0 1 * *');
    expect(cronMatches(firstOfMonth, at('2025-04-01T00:00:00Z'))).toBe(true);
    expect(cronMatches(firstOfMonth, at('2025-04-02T00:00:00Z'))).toBe(false);
  });

  it('matches EITHER day field when both are restricted (Vixie semantics)', () => {
    const s = parseCron('0 0 13 * 5'); // the 13th, or any Friday
    expect(cronMatches(s, at('2025-06-13T00:00:00Z'))).toBe(true); // Friday the 13th
    expect(cronMatches(s, at('2025-05-13T00:00:00Z'))).toBe(true); // Tuesday the 13th
    expect(cronMatches(s, at('2025-05-16T00:00:00Z'))).toBe(true); // a Friday
    expect(cronMatches(s, at('2025-05-15T00:00:00Z'))).toBe(false);
  });

  it('treats a */n day field as unrestricted for that rule', () => {
    const s = parseCron('0 0 */2 * 1'); // odd days AND Monday (the field starts with *)
    expect(cronMatches(s, at('2025-03-03T00:00:00Z'))).toBe(true); // Monday the 3rd
    expect(cronMatches(s, at('2025-03-10T00:00:00Z'))).toBe(false); // Monday the 10th
    expect(cronMatches(s, at('2025-03-05T00:00:00Z'))).toBe(false); // Wednesday the 5th
  });

  it('fires on Sunday for both 0 and 7', () => {
    for (const expr of ['0 12 * * 0', '0 12 * * 7', '0 12 * * sun']) {
      expect(cronMatches(parseCron(expr), at('2025-03-09T12:00:00Z'))).toBe(true);
      expect(cronMatches(parseCron(expr), at('2025-03-08T12:00:00Z'))).toBe(false);
    }
  });
});

describe('cronSlots and cronNext', () => {
  it('lists the due minutes after the cursor up to now, oldest first', () => {
    const s = parseCron('*/10 * * * *');
    const slots = cronSlots(s, at('2025-01-01T00:05:00Z'), at('2025-01-01T00:41:30Z'), 100).map((d) => d.toISOString());
    expect(slots).toEqual(['2025-01-01T00:10:00.000Z', '2025-01-01T00:20:00.000Z', '2025-01-01T00:30:00.000Z', '2025-01-01T00:40:00.000Z']);
  });

  it('excludes the cursor minute itself and includes the minute of now', () => {
    const s = parseCron('* * * * *');
    const slots = cronSlots(s, at('2025-01-01T00:00:00Z'), at('2025-01-01T00:02:00Z'), 100).map((d) => d.toISOString());
    expect(slots).toEqual(['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z']);
    expect(cronSlots(s, at('2025-01-01T00:00:10Z'), at('2025-01-01T00:00:50Z'), 100)).toEqual([]);
  });

  it('keeps only the newest slots beyond the cap', () => {
    const s = parseCron('* * * * *');
    const slots = cronSlots(s, at('2025-01-01T00:00:00Z'), at('2025-01-01T01:00:00Z'), 3).map((d) => d.toISOString());
    expect(slots).toEqual(['2025-01-01T00:58:00.000Z', '2025-01-01T00:59:00.000Z', '2025-01-01T01:00:00.000Z']);
  });

  it('finds the next firing across months and years', () => {
    expect(cronNext(parseCron('0 0 1 1 *'), at('2025-06-01T00:00:00Z'))?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(cronNext(parseCron('15 10 * * mon'), at('2025-03-10T10:15:00Z'))?.toISOString()).toBe('2025-03-17T10:15:00.000Z');
    expect(cronNext(parseCron('0 0 29 2 *'), at('2025-03-01T00:00:00Z'))?.toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('finds no firing for an impossible date', () => {
    expect(cronNext(parseCron('0 0 30 2 *'), at('2025-01-01T00:00:00Z'))).toBeUndefined();
  });
});
