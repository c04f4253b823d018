import { randomBytes } from 'node:crypto';
import { hash, verify, type Algorithm, type Options } from '@node-rs/argon2';

// Algorithm is a const enum, which cannot be read under isolated modules (Node's type stripping); 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

/**
 * OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. Tens of milliseconds per hash on one core, run on
 * libuv's thread pool so the event loop stays free. Stored hashes carry their parameters (PHC string), so
 * raising these later still verifies old hashes.
 */
export const PASSWORD_HASH_OPTIONS: Readonly<Options> = Object.freeze({ algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 });

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 200;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

/** False for a wrong password and for a stored value that is not an argon2 hash at all. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/** A hash of a random secret with the same parameters as real ones: nobody knows its password. */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(32).toString('base64url'));
  return dummy;
}

/**
 * Spends the same time as verifying a real account, so that "no such email" cannot be told apart from
 * "wrong password" by timing. Always false.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await verifyPassword(await dummyHash(), password);
  return false;
}
