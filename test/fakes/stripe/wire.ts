// Stripe's v1 wire format for the fake: form-encoded bracket parameters in, Stripe-shaped errors out.
//
// Parameters are checked against a shape per route and unknown ones are refused as Stripe does ("Received unknown
// parameter"): a parameter the fake would otherwise ignore could hide a platform bug that only real Stripe would show.

/** A parsed form body or query: `a[b][0][c]=v` becomes { a: { b: [{ c: 'v' }] } }. */
export interface Params {
  [key: string]: Param;
}
export type Param = string | Params | Param[];

export type Metadata = Record<string, string>;

export interface StripeErrorBody {
  type: 'invalid_request_error' | 'api_error' | 'card_error' | 'idempotency_error';
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
}

/** Thrown by route handlers; answered as `{ error }` with the status. */
export class StripeApiError extends Error {
  readonly status: number;
  readonly error: StripeErrorBody;

  constructor(status: number, error: StripeErrorBody) {
    super(error.message);
    this.status = status;
    this.error = error;
  }
}

export function invalid(message: string, param?: string): StripeApiError {
  return new StripeApiError(400, { type: 'invalid_request_error', message, ...(param === undefined ? {} : { param }) });
}

/** Stripe answers 404 for an unknown id in the URL and 400 for one named by a parameter. */
export function noSuch(resource: string, id: string, param = 'id'): StripeApiError {
  return new StripeApiError(param === 'id' ? 404 : 400, { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${resource}: '${id}'`, param });
}

/** What Stripe answers for a Stripe-Account (or account id) the key has no access to: a 403, not a 404. */
export function noAccess(account: string): StripeApiError {
  return new StripeApiError(403, {
    type: 'invalid_request_error',
    code: 'account_invalid',
    message: `The provided key 'sk_test_***' does not have access to account '${account}' (or that account does not exist). Application access may have been revoked.`,
  });
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function parseForm(text: string): Params {
  const root: Params = {};
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const decode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
    const rawKey = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    if (!match) throw invalid(`Invalid parameter name: ${rawKey}`);
    const path = [match[1]!, ...[...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    if (path.some((k) => UNSAFE_KEYS.has(k))) throw invalid(`Invalid parameter name: ${rawKey}`);
    let node: Params = root;
    for (const [i, key] of path.entries()) {
      const name = key === '' ? String(Object.keys(node).length) : key; // `a[]=x` appends, as qs reads it
      if (i === path.length - 1) {
        node[name] = value;
      } else {
        const next = node[name];
        if (typeof next === 'object' && !Array.isArray(next)) node = next;
        else node = node[name] = {};
      }
    }
  }
  return arrays(root, '') as Params;
}

/** Objects keyed 0..n-1 are the SDK's arrays; metadata keeps its keys even when they are digits. */
function arrays(value: Param, key: string): Param {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  for (const k of Object.keys(value)) value[k] = arrays(value[k]!, k);
  const keys = Object.keys(value);
  if (key !== 'metadata' && keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => value[k]!);
  return value;
}

/** A route's accepted parameters: `true` takes any value, an object names its keys, `[shape]` is a list of shape. */
export type Shape = true | { [key: string]: Shape } | [Shape];

export function checkParams(params: Params, shape: { [key: string]: Shape }, prefix = ''): void {
  for (const [key, value] of Object.entries(params)) {
    const name = prefix === '' ? key : `${prefix}[${key}]`;
    const expected = shape[key];
    if (expected === undefined) {
      throw invalid(`Received unknown parameter: ${name} (this fake Stripe does not implement it: add it to test/fakes/stripe if the platform needs it)`, name);
    }
    if (expected === true) continue;
    if (Array.isArray(expected)) {
      if (!Array.isArray(value)) throw invalid(`Invalid array`, name);
      value.forEach((item, i) => checkItem(item, expected[0], `${name}[${i}]`));
    } else {
      checkItem(value, expected, name);
    }
  }
}

function checkItem(value: Param, shape: Shape, name: string): void {
  if (shape === true) return;
  if (Array.isArray(shape)) return checkParams({ [name]: value }, { [name]: shape });
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('Invalid object', name);
  checkParams(value, shape, name);
}

/** Typed reads of a request's parameters, with Stripe's messages and the full bracketed name as `param`. */
export class Reader {
  readonly params: Params;
  readonly #prefix: string;

  constructor(params: Params, prefix = '') {
    this.params = params;
    this.#prefix = prefix;
  }

  name(key: string): string {
    return this.#prefix === '' ? key : `${this.#prefix}[${key}]`;
  }

  has(key: string): boolean {
    return this.params[key] !== undefined;
  }

  str(key: string, required: true): string;
  str(key: string, required?: boolean): string | undefined;
  str(key: string, required = false): string | undefined {
    const value = this.params[key];
    if (value === undefined) {
      if (required) throw invalid(`Missing required param: ${this.name(key)}.`, this.name(key));
      return undefined;
    }
    if (typeof value !== 'string') throw invalid(`Invalid string: ${this.name(key)} must be a string`, this.name(key));
    return value;
  }

  /** An empty value unsets (null), as Stripe reads `description=` on an update. */
  nullableStr(key: string): string | null | undefined {
    const value = this.str(key);
    return value === '' ? null : value;
  }

  int(key: string, opts: { required: true; min?: number }): number;
  int(key: string, opts?: { required?: boolean; min?: number }): number | undefined;
  int(key: string, opts: { required?: boolean; min?: number } = {}): number | undefined {
    const value = this.str(key, opts.required);
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n)) throw invalid(`Invalid integer: ${value}`, this.name(key));
    if (opts.min !== undefined && n < opts.min) throw invalid(`This value must be greater than or equal to ${opts.min}.`, this.name(key));
    return n;
  }

  decimal(key: string, opts: { min: number; max: number }): number | undefined {
    const value = this.str(key);
    if (value === undefined) return undefined;
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw invalid(`Invalid decimal: ${value}`, this.name(key));
    if (n < opts.min || n > opts.max) throw invalid(`This value must be between ${opts.min} and ${opts.max}.`, this.name(key));
    return n;
  }

  bool(key: string): boolean | undefined {
    const value = this.str(key);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') throw invalid(`Invalid boolean: ${value}`, this.name(key));
    return value === 'true';
  }

  oneOf<T extends string>(key: string, values: readonly T[], required: true): T;
  oneOf<T extends string>(key: string, values: readonly T[], required?: boolean): T | undefined;
  oneOf<T extends string>(key: string, values: readonly T[], required = false): T | undefined {
    const value = this.str(key, required);
    if (value === undefined) return undefined;
    if (!(values as readonly string[]).includes(value)) throw invalid(`Invalid ${this.name(key)}: must be one of ${values.join(', ')}`, this.name(key));
    return value as T;
  }

  url(key: string, required = false): string | undefined {
    const value = this.str(key, required);
    if (value === undefined) return undefined;
    let protocol: string | undefined;
    try {
      protocol = new URL(value).protocol;
    } catch {
      // reported below
    }
    if (protocol !== 'http:' && protocol !== 'https:') throw invalid('Not a valid URL', this.name(key));
    return value;
  }

  email(key: string): string | undefined {
    const value = this.str(key);
    if (value !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw invalid(`Invalid email address: ${value}`, this.name(key));
    return value;
  }

  nested(key: string): Reader {
    const value = this.params[key];
    if (value === undefined) return new Reader({}, this.name(key));
    if (typeof value !== 'object' || Array.isArray(value)) throw invalid('Invalid object', this.name(key));
    return new Reader(value, this.name(key));
  }

  list(key: string): Reader[] {
    const value = this.params[key];
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw invalid('Invalid array', this.name(key));
    return value.map((item, i) => {
      if (typeof item !== 'object' || Array.isArray(item)) throw invalid('Invalid object', `${this.name(key)}[${i}]`);
      return new Reader(item, `${this.name(key)}[${i}]`);
    });
  }

  /**
   * Stripe's metadata update: keys merge into `current`, an empty value deletes its key and `metadata=` (empty)
   * clears them all. Its limits (50 keys, 40-character keys, 500-character values) are enforced, as Stripe does.
   */
  metadata(current: Metadata = {}, key = 'metadata'): Metadata {
    const value = this.params[key];
    const name = this.name(key);
    if (value === undefined) return { ...current };
    if (value === '') return {};
    if (typeof value !== 'object' || Array.isArray(value)) throw invalid('Invalid hash', name);
    const next = { ...current };
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') throw invalid(`Metadata values must be strings: ${name}[${k}]`, `${name}[${k}]`);
      if (k.length > 40) throw invalid(`Metadata keys can have up to 40 characters; '${k}' has ${k.length}.`, `${name}[${k}]`);
      if (v.length > 500) throw invalid(`Metadata values can have up to 500 characters, but you passed in a value that is ${v.length} characters.`, `${name}[${k}]`);
      if (v === '') delete next[k];
      else next[k] = v;
    }
    if (Object.keys(next).length > 50) throw invalid('You can have up to 50 metadata keys.', name);
    return next;
  }
}
