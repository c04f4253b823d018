const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value can be cast to Postgres's uuid (checked before a query, so a bad id is a miss, not an error). */
export const isUuid = (value: string): boolean => UUID_RE.test(value);
