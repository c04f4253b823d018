// A standard 5-field cron matcher (minute hour day-of-month month day-of-week), evaluated in UTC, with Vixie
// cron's semantics: `*`, numbers, ranges `a-b`, steps `*/n`, `a-b/n` and `a/n`, comma lists, month names
// JAN-DEC and day names SUN-SAT (any case), day-of-week 0 and 7 both Sunday, and the @-macros @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly. When both day fields are restricted (neither starts
// with `*`), a day matches if EITHER matches, as in Vixie cron; otherwise both must.

export class CronError extends Error {}

export interface CronSchedule {
  readonly source: string;
  readonly minutes: ReadonlySet<number>;
  readonly hours: ReadonlySet<number>;
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  /** 0 = Sunday ... 6 = Saturday (7 is folded into 0). */
  readonly daysOfWeek: ReadonlySet<number>;
  readonly domStar: boolean;
  readonly dowStar: boolean;
}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Value of names[0]. */
  nameBase?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

function value(text: string, f: FieldSpec): number {
  const lower = text.toLowerCase();
  if (f.names) {
    const at = f.names.indexOf(lower);
    if (at >= 0) return at + f.nameBase!;
  }
  if (!/^\d{1,2}$/.test(text)) throw new CronError(`${f.name}: '${text}' is not a number${f.names ? ' or a name' : ''}`);
  const n = Number(text);
  if (n < f.min || n > f.max) throw new CronError(`${f.name}: ${n} is outside ${f.min}-${f.max}`);
  return n;
}

function parseField(text: string, f: FieldSpec): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new CronError(`${f.name}: empty list item in '${text}'`);
    const [range, stepText, extra] = item.split('/');
    if (extra !== undefined) throw new CronError(`${f.name}: '${item}' has more than one '/'`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d{1,2}$/.test(stepText) || Number(stepText) < 1) throw new CronError(`${f.name}: step '${stepText}' must be a positive number`);
      step = Number(stepText);
      if (step > f.max - f.min + 1) throw new CronError(`${f.name}: step ${step} is larger than the field's range`);
    }
    let lo: number;
    let hi: number;
    if (range === '*') {
      lo = f.min;
      hi = f.max;
    } else if (range!.includes('-')) {
      const [a, b, more] = range!.split('-');
      if (more !== undefined || !a || !b) throw new CronError(`${f.name}: '${range}' is not a range a-b`);
      lo = value(a, f);
      hi = value(b, f);
      if (lo > hi) throw new CronError(`${f.name}: range ${a}-${b} runs backwards`);
    } else {
      lo = value(range!, f);
      // `a/n` means a, a+n, ... up to the field's maximum.
      hi = stepText !== undefined ? f.max : lo;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

export function parseCron(expression: string): CronSchedule {
  const source = expression.trim();
  const expanded = source.startsWith('@') ? MACROS[source.toLowerCase()] : source;
  if (expanded === undefined) throw new CronError(`unknown macro '${source}'; use one of ${Object.keys(MACROS).join(', ')}`);
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) {
    throw new CronError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length} in '${source}'`);
  }
  const [minutes, hours, daysOfMonth, months, dow] = parts.map((p, i) => parseField(p, FIELDS[i]!)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  if (dow.delete(7)) dow.add(0);
  return { source, minutes, hours, daysOfMonth, months, daysOfWeek: dow, domStar: parts[2]!.startsWith('*'), dowStar: parts[4]!.startsWith('*') };
}

/** Whether the schedule fires in the UTC minute that contains `at`. */
export function cronMatches(s: CronSchedule, at: Date): boolean {
  if (!s.minutes.has(at.getUTCMinutes()) || !s.hours.has(at.getUTCHours()) || !s.months.has(at.getUTCMonth() + 1)) return false;
  const dom = s.daysOfMonth.has(at.getUTCDate());
  const dow = s.daysOfWeek.has(at.getUTCDay());
  return s.domStar || s.dowStar ? dom && dow : dom || dow;
}

const MINUTE = 60_000;

/**
 * The minutes at which the schedule fires with after < slot <= until, oldest first, at most `max` of them (the
 * newest ones when there are more).
 */
export function cronSlots(s: CronSchedule, after: Date, until: Date, max: number): Date[] {
  const out: Date[] = [];
  const first = Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE;
  for (let t = Math.floor(until.getTime() / MINUTE) * MINUTE; t >= first && out.length < max; t -= MINUTE) {
    const d = new Date(t);
    if (cronMatches(s, d)) out.push(d);
  }
  return out.reverse();
}

/** The first firing strictly after `after`, searching up to `horizonDays` ahead (undefined when none). */
export function cronNext(s: CronSchedule, after: Date, horizonDays = 366 * 5): Date | undefined {
  let t = Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE;
  const end = t + horizonDays * 24 * 60 * MINUTE;
  while (t <= end) {
    const d = new Date(t);
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth();
    if (!s.months.has(mo + 1)) {
      t = Date.UTC(y, mo + 1, 1); // first minute of the next month
      continue;
    }
    const dom = s.daysOfMonth.has(d.getUTCDate());
    const dow = s.daysOfWeek.has(d.getUTCDay());
    if (!(s.domStar || s.dowStar ? dom && dow : dom || dow)) {
      t = Date.UTC(y, mo, d.getUTCDate() + 1); // next day
      continue;
    }
    if (!s.hours.has(d.getUTCHours())) {
      t = Date.UTC(y, mo, d.getUTCDate(), d.getUTCHours() + 1); // next hour
      continue;
    }
    if (s.minutes.has(d.getUTCMinutes())) return d;
    t += MINUTE;
  }
  return undefined;
}
