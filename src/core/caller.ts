// Who is calling: the one type every layer shares, so it imports nothing.

/** Who is calling, resolved once per request from the Authorization header (or its absence). */
export type Caller =
  | { kind: 'none' }
  | { kind: 'platform'; accountId: string; keyId: string }
  | { kind: 'service'; accountId: string; appId: string; keyId: string }
  | { kind: 'user'; appId: string; userId: string; claims: Record<string, unknown> }
  | { kind: 'substrate'; accountId: string; keyId: string };

export type CallerKind = Caller['kind'];
