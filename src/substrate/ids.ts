import { randomBytes } from 'node:crypto';

export type IdPrefix = 'act' | 'dec' | 'com' | 'lrn' | 'prn' | 'ent' | 'art' | 'dlv' | 'rul' | 'frg';

/** `<prefix>_` and 20 lowercase base32 characters (100 bits): readable in logs, never guessable. */
export function newId(prefix: IdPrefix): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(20);
  let out = '';
  for (const b of bytes) out += alphabet[b & 31];
  return `${prefix}_${out}`;
}
