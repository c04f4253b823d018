// Texts, schemas and helpers that several areas' tools share, so that they read and behave the same everywhere.
import { z } from 'zod';
import type { HttpBinding, HttpMethod } from '../src/core/define.ts';
import type { Ctx } from './define.ts';
import type { Caller } from '../src/core/caller.ts';
import { errors } from '../src/core/errors.ts';

/** Where an area's reference is (limits, errors, formats): its section of the guide, GET /llms.txt?area=<area>. */
/** A boolean that a GET route also takes from its query string, as "true" or "false". */
export const QueryFlag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);

export const guideRef = (area: string): string => `platform_guide area=${area}`;

/** Bindings of an area's routes under /v1/{app_id}/<area>, also served under /<area> on the app's own host. */
export const appRoute =
  (area: string) =>
  <O>(method: HttpMethod, path: string, extra: Partial<HttpBinding<O>> = {}): HttpBinding<O> => ({
    method,
    path: `/v1/{app_id}/${area}${path}`,
    subdomainPath: `/${area}${path}`,
    ...extra,
  });

/** The `user_token` argument of every tool that serves end users (data, storage, auth, functions_invoke). */
export const UserTokenSchema = z
  .string()
  .max(4000)
  .optional()
  .describe("An end user's access_token (auth_login): the call acts as them");

/** Who sees which files (storage): the sentence every storage tool ends with. */
export const OWN_FILES_NOTE = ' Keys reach every file of the app; an end user (their JWT, or user_token) only their own.';

type EndUserCaller = Extract<Caller, { kind: 'user' }>;

/** Only a key holder of the app may act as one of its end users, and only with a token that user was issued. */
export async function actAs(token: string, appId: string, ctx: Ctx<'endUserTokens'>): Promise<EndUserCaller> {
  if (ctx.caller.kind !== 'platform' && ctx.caller.kind !== 'service') throw errors.wrongCredential(['platform key', 'service key']);
  const user = await ctx.services.endUserTokens.verify(token);
  if (!user) throw errors.invalidToken();
  if (user.appId !== appId) throw errors.otherApp();
  return user;
}

/** Who the call runs as: the end user of `user_token` when one is given, otherwise the caller itself. */
export async function effectiveCaller(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<'endUserTokens'>): Promise<Caller> {
  return input.user_token ? actAs(input.user_token, input.app_id, ctx) : ctx.caller;
}

/** For tools that only make sense for an end user: their token as the credential, or a key with user_token. */
export async function endUserCaller(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<'endUserTokens'>): Promise<EndUserCaller> {
  const caller = await effectiveCaller(input, ctx);
  if (caller.kind === 'user') return caller;
  throw errors.validation(
    "This tool acts for an end user: send that user's access token as the credential, or pass it as 'user_token' with a platform or service key.",
    [{ path: 'user_token', message: 'required with a platform or service key' }],
  );
}

// ---- inline bytes ---------------------------------------------------------------------------------------

export const ENCODINGS = ['base64', 'utf8'] as const;
export type ContentEncoding = (typeof ENCODINGS)[number];

const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of inline content; base64 must be canonical standard base64 (padding included, no blanks). */
export function decodeContent(content: string, encoding: ContentEncoding, field: string): Buffer {
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  if (!BASE64_RE.test(content)) {
    throw errors.validation(`'${field}' is not valid base64 (standard alphabet A-Z a-z 0-9 + /, padded with =, no line breaks).`, [
      { path: field, message: 'not valid base64' },
    ]);
  }
  return Buffer.from(content, 'base64');
}

/** Bytes as inline content; utf8 is refused (400) for bytes that are not valid UTF-8 text. */
export function encodeContent(bytes: Buffer, encoding: ContentEncoding): string {
  if (encoding === 'base64') return bytes.toString('base64');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw errors.validation("The file is not valid UTF-8 text; read it with encoding 'base64'.", [{ path: 'encoding', message: 'not UTF-8 text' }]);
  }
}

/** Each person's substrate is their own (a session reaches only theirs): every member of the account may use it. */
export const SUBSTRATE_ROLE = 'viewer' as const;
