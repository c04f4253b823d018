// Who is calling: the one type every layer shares, so it imports nothing.

/** A member's role in an account, highest first: each may do what the ones after it may. */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` may do what `required` may. */
export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) <= ROLES.indexOf(required);
}

/**
 * How a platform caller proved itself: a platform key (`keyId`), a person's browser session, or an OAuth access token
 * an MCP client holds for a person (`personId` set for both).
 */
export type PlatformVia = 'key' | 'session' | 'oauth';

/** Who is calling, resolved once per request from the Authorization header or the session cookie (or their absence). */
export type Caller =
  /** No credential, or an app's publishable key (`appId`, `keyId`): anonymous either way, the key on its own app only. */
  | { kind: 'none'; appId?: string; keyId?: string }
  | {
      kind: 'platform';
      accountId: string;
      role: Role;
      via: PlatformVia;
      keyId: string | null;
      personId: string | null;
      /**
       * A platform key's person: who made it, or the person behind the key that made it (keys made by keys inherit
       * their maker's person); null for keys no person is behind (the operator's SVC_PLATFORM_API_KEY, the first
       * start's key, and keys made with those). Unset for sessions and OAuth tokens, whose person is personId.
       */
      keyPerson?: string | null;
      /** A browser session's id (the hash of its cookie), so what it opens can close when it ends. */
      sessionId?: string;
    }
  | { kind: 'service'; accountId: string; appId: string; keyId: string }
  | { kind: 'user'; appId: string; userId: string; claims: Record<string, unknown> }
  /** A person's substrate key: it reaches that person's own substrate user only. */
  | { kind: 'substrate'; accountId: string; keyId: string; personId: string; userId: string };

export type CallerKind = Caller['kind'];

/**
 * The person behind a caller, whom what it makes answers to (keys, invitations, apps' first service keys): the person
 * signed in or consenting, or a key's person; null for the operator's keys and for callers no person is behind (a
 * service key, an end user). What it made stops working when that person leaves the account or drops below the role
 * it needs.
 */
export function personBehind(caller: Caller): string | null {
  if (caller.kind === 'platform') return caller.personId ?? caller.keyPerson ?? null;
  return caller.kind === 'substrate' ? caller.personId : null;
}
