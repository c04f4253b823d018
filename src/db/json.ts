/** A jsonb column's value as pg parses it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A jsonb value the platform stored as an object, read back as one (anything else reads as empty). */
export function jsonObject(value: JsonValue | null): { [key: string]: JsonValue } {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
}
