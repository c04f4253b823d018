// The platform as an OAuth 2.1 authorization server for MCP clients: public clients, registered dynamically or known
// by their metadata document's URL, an authorization request a signed-in person approves on the consent page,
// single-use codes bound to PKCE, and access and refresh tokens for one audience (the platform's /mcp) that act for
// that person, with their current role, in the account of the session that consented.
// Every code, token and anti-forgery value is stored only as its SHA-256; the values are returned once.
import { randomUUID } from 'node:crypto';
import { sql, type ExpressionBuilder, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Caller } from '../core/caller.ts';
import { generateKey, hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Distinct prefixes: credentials.ts routes a bearer token by its prefix, and a leaked value says what it is. */
export const OAUTH_PREFIX = { access: 'svc_oat_', refresh: 'svc_ort_', code: 'svc_oac_', consent: 'svc_ocf_' } as const;

/** How long a consent page may stay open before its answer is refused. */
const CONSENT_TTL_MINUTES = 10;
/** A client exchanges its code right after the redirect; a short life bounds what a leaked code is worth. */
const CODE_TTL_SECONDS = 60;
/**
 * Registration is open to anyone, and so is naming a metadata document's URL, so what they store is bounded: a client
 * authorizes right after registering, and one that got no token within a day is pruned (oauth_prune); so is a client
 * whose every token expired a month ago (its next token request meets invalid_client, on which MCP clients register
 * again; a document client is fetched again). Clients that never led to a consent page or a token are also capped in
 * number: storing one past the cap drops the oldest of them.
 */
const UNUSED_CLIENT_HOURS = 24;
const IDLE_CLIENT_DAYS = 30;
export const MAX_UNUSED_CLIENTS = 1000;

export interface OAuthPolicy {
  accessTokenTtlSeconds: number;
  refreshTokenTtlDays: number;
}

/** The token response (RFC 6749 §5.1). */
export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

/** What a client asked for, already checked against its registration by the SDK's authorization handler. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
}

/** The browser session a person consents in; the grant acts in its account. */
export interface ConsentingSession {
  token: string;
  personId: string;
  accountId: string;
}

/** Where the person's answer sends the browser: back to the client, with a code when they approved. */
export interface Decision {
  redirectUri: string;
  state: string | null;
  code: string | undefined;
}

interface Grant {
  grantId: string;
  clientId: string;
  personId: string;
  accountId: string;
  /** The audience (RFC 8707 resource) its tokens are issued for. */
  resource: string;
}

/** A registration before the platform names the client. */
export type NewClient = Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>;

type Db = Kysely<ControlDatabase> | Transaction<ControlDatabase>;

export class OAuthGrants {
  readonly #db: Kysely<ControlDatabase>;
  readonly #accessTokenTtlSeconds: number;
  readonly #refreshTokenTtlDays: number;

  constructor(db: Kysely<ControlDatabase>, { accessTokenTtlSeconds, refreshTokenTtlDays }: OAuthPolicy) {
    this.#db = db;
    this.#accessTokenTtlSeconds = accessTokenTtlSeconds;
    this.#refreshTokenTtlDays = refreshTokenTtlDays;
  }

  /**
   * Registers a client as the SDK's registration handler validated it (and the caller made it public and checked its
   * redirect URIs), then drops the oldest unused registrations past MAX_UNUSED_CLIENTS. A client with a consent page
   * open or a token is never among them, so a flood of registrations cannot end a person's authorization under way.
   */
  async registerClient(registration: NewClient): Promise<OAuthClientInformationFull> {
    const client = { ...registration, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) };
    await this.#db.insertInto('oauth_clients').values({ client_id: client.client_id, metadata: JSON.stringify(client) }).execute();
    await this.#dropUnusedPastCap();
    return client;
  }

  /**
   * Keeps a client known by its metadata document's URL, as the document was just fetched and checked, until
   * `freshSeconds` from now; the same cap on unused clients as registration applies, since anyone can name a URL. A
   * fetch counts as a registration (created_at), so the cap never drops the client it has just stored.
   */
  async storeDocumentClient(client: OAuthClientInformationFull, freshSeconds: number): Promise<void> {
    const row = { metadata: JSON.stringify(client), document_expires_at: sql<Date>`now() + make_interval(secs => ${freshSeconds})`, created_at: sql<Date>`now()` };
    await this.#db
      .insertInto('oauth_clients')
      .values({ client_id: client.client_id, ...row })
      .onConflict((oc) => oc.column('client_id').doUpdateSet(row))
      .execute();
    await this.#dropUnusedPastCap();
  }

  async #dropUnusedPastCap(): Promise<void> {
    const unused = this.#db
      .selectFrom('oauth_clients as c')
      .select('c.client_id')
      .where(sql<boolean>`not (${clientHolds(EVER, EVER)})`)
      .orderBy('c.created_at', 'desc')
      .orderBy('c.client_id')
      .offset(MAX_UNUSED_CLIENTS);
    await this.#db.deleteFrom('oauth_clients').where('client_id', 'in', unused).execute();
  }

  /**
   * oauth_prune: drops codes and consent pages past their expiry, tokens a month past theirs, and the clients older
   * than a day that hold neither an open consent page or code nor a token expired less than a month ago: those that
   * never got a token, and those unused for a month since their last one expired. Each deletion stands on its own, so
   * a second run, or one racing a new authorization, drops nothing still in use.
   */
  async prune(): Promise<{ clients: number }> {
    await this.#db.deleteFrom('oauth_codes').where('expires_at', '<', sql<Date>`now()`).execute();
    await this.#db.deleteFrom('oauth_tokens').where('expires_at', '<', MONTH_AGO).execute();
    const clients = await this.#db
      .deleteFrom('oauth_clients as c')
      .where('c.created_at', '<', sql<Date>`now() - make_interval(hours => ${UNUSED_CLIENT_HOURS})`)
      .where(sql<boolean>`not (${clientHolds(sql`now()`, MONTH_AGO)})`)
      .executeTakeFirst();
    return { clients: Number(clients.numDeletedRows) };
  }

  /** A registered client, or one known by its metadata document while that is fresh. */
  async client(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    const row = await this.#db
      .selectFrom('oauth_clients')
      .select('metadata')
      .where('client_id', '=', clientId)
      .where((eb) => eb.or([eb('document_expires_at', 'is', null), eb('document_expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirst();
    // registerClient and storeDocumentClient wrote this shape.
    return row?.metadata as OAuthClientInformationFull | undefined;
  }

  /** Opens an authorization request for the consent page; the value returned is that page's anti-forgery value. */
  async openConsent(request: AuthorizationRequest, session: ConsentingSession): Promise<string> {
    const consent = generateKey(OAUTH_PREFIX.consent);
    // Requests the person never answered, and codes never exchanged, go as new ones come.
    await this.#db.deleteFrom('oauth_codes').where('person_id', '=', session.personId).where('expires_at', '<', sql<Date>`now()`).execute();
    await this.#db
      .insertInto('oauth_codes')
      .values({
        consent_hash: hashKey(consent),
        session_hash: hashKey(session.token),
        client_id: request.clientId,
        person_id: session.personId,
        account_id: session.accountId,
        redirect_uri: request.redirectUri,
        code_challenge: request.codeChallenge,
        state: request.state ?? null,
        expires_at: sql<Date>`now() + make_interval(mins => ${CONSENT_TTL_MINUTES})`,
      })
      .execute();
    return consent;
  }

  /**
   * The person's answer to the request their consent page showed, from the session that saw it: approval makes the
   * single-use code, denial ends the request. Undefined when there is no such open request (another session's,
   * answered already, expired).
   */
  async decide(consent: string, sessionToken: string, approve: boolean): Promise<Decision | undefined> {
    const open = (eb: ExpressionBuilder<ControlDatabase, 'oauth_codes'>) =>
      eb.and([
        eb('consent_hash', '=', hashKey(consent)),
        eb('session_hash', '=', hashKey(sessionToken)),
        eb('code_hash', 'is', null),
        eb('expires_at', '>', sql<Date>`now()`),
      ]);
    if (!approve) {
      const denied = await this.#db.deleteFrom('oauth_codes').where(open).returning(['redirect_uri', 'state']).executeTakeFirst();
      return denied && { redirectUri: denied.redirect_uri, state: denied.state, code: undefined };
    }
    const code = generateKey(OAUTH_PREFIX.code);
    const approved = await this.#db
      .updateTable('oauth_codes')
      .set({ code_hash: hashKey(code), expires_at: sql<Date>`now() + make_interval(secs => ${CODE_TTL_SECONDS})` })
      .where(open)
      .returning(['redirect_uri', 'state'])
      .executeTakeFirst();
    return approved && { redirectUri: approved.redirect_uri, state: approved.state, code };
  }

  /** The PKCE challenge of a code issued to this client, used or not (exchangeCode tells those apart). */
  async challenge(clientId: string, code: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('oauth_codes')
      .select('code_challenge')
      .where('code_hash', '=', hashKey(code))
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return row?.code_challenge;
  }

  /**
   * Exchanges a code once, for the client it was issued to and (when the client names it) the redirect URI it was
   * issued for, into tokens for `resource`. A used code presented again was copied: the grant it started is revoked
   * (RFC 6749 §4.1.2).
   */
  async exchangeCode(clientId: string, code: string, redirectUri: string | undefined, resource: string): Promise<IssuedTokens | undefined> {
    const codeHash = hashKey(code);
    return this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('oauth_codes')
        .set({ used_at: sql<Date>`now()` })
        .where('code_hash', '=', codeHash)
        .where('client_id', '=', clientId)
        .where('used_at', 'is', null)
        .where('expires_at', '>', sql<Date>`now()`)
        .returning(['id', 'person_id', 'account_id', 'redirect_uri'])
        .executeTakeFirst();
      if (!row) {
        const used = tx.selectFrom('oauth_codes').select('id').where('code_hash', '=', codeHash).where('used_at', 'is not', null);
        await tx.deleteFrom('oauth_tokens').where('grant_id', 'in', used).execute();
        return undefined;
      }
      if (redirectUri !== undefined && redirectUri !== row.redirect_uri) return undefined;
      return this.#issue(tx, { grantId: row.id, clientId, personId: row.person_id, accountId: row.account_id, resource });
    });
  }

  /**
   * Rotates a refresh token for `resource`: it is marked rotated and a new pair for that audience is issued in its
   * grant, whose earlier access tokens and expired rows go. A rotated refresh token presented again was copied, and
   * revokes its whole grant; so does any other token of the client presented here, or one issued for another audience
   * (the platform's address changed since), whose pair /mcp would refuse.
   */
  async refresh(clientId: string, refreshToken: string, resource: string): Promise<IssuedTokens | undefined> {
    const tokenHash = hashKey(refreshToken);
    return this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .updateTable('oauth_tokens')
        .set({ rotated_at: sql<Date>`now()` })
        .where((eb) => eb.and({ token_hash: tokenHash, kind: 'refresh', client_id: clientId, rotated_at: null }))
        .where(forAudience('resource', resource))
        .where('expires_at', '>', sql<Date>`now()`)
        .returning(['grant_id', 'person_id', 'account_id'])
        .executeTakeFirst();
      if (!row) {
        await revokeGrantOf(tx, clientId, tokenHash);
        return undefined;
      }
      await tx
        .deleteFrom('oauth_tokens')
        .where('grant_id', '=', row.grant_id)
        .where((eb) => eb.or([eb('kind', '=', 'access'), eb('expires_at', '<', sql<Date>`now()`)]))
        .execute();
      return this.#issue(tx, { grantId: row.grant_id, clientId, personId: row.person_id, accountId: row.account_id, resource });
    });
  }

  /**
   * The platform caller of a live access token issued for `resource` (RFC 8707 audience): its person with their
   * current role in its account. A person no longer a member there has none, so the token stops working when the
   * membership ends; a token for another audience is none of this resource's.
   */
  async resolve(accessToken: string, resource: string): Promise<Caller | undefined> {
    if (!accessToken.startsWith(OAUTH_PREFIX.access)) return undefined;
    const row = await this.#db
      .selectFrom('oauth_tokens as t')
      .innerJoin('account_members as m', (j) => j.onRef('m.account_id', '=', 't.account_id').onRef('m.person_id', '=', 't.person_id'))
      .select(['t.person_id', 't.account_id', 'm.role'])
      .where('t.token_hash', '=', hashKey(accessToken))
      .where('t.kind', '=', 'access')
      .where(forAudience('t.resource', resource))
      .where('t.expires_at', '>', sql<Date>`now()`)
      .executeTakeFirst();
    return row && { kind: 'platform', accountId: row.account_id, role: row.role, via: 'oauth', keyId: null, personId: row.person_id };
  }

  /** Revokes the grant of a token the client holds, access or refresh; an unknown token is no error (RFC 7009 §2.2). */
  async revoke(clientId: string, token: string): Promise<void> {
    await revokeGrantOf(this.#db, clientId, hashKey(token));
  }

  async #issue(db: Db, grant: Grant): Promise<IssuedTokens> {
    const access = generateKey(OAUTH_PREFIX.access);
    const refresh = generateKey(OAUTH_PREFIX.refresh);
    const owner = { grant_id: grant.grantId, client_id: grant.clientId, person_id: grant.personId, account_id: grant.accountId, resource: grant.resource };
    await db
      .insertInto('oauth_tokens')
      .values([
        { ...owner, token_hash: hashKey(access), kind: 'access', expires_at: sql<Date>`now() + make_interval(secs => ${this.#accessTokenTtlSeconds})` },
        { ...owner, token_hash: hashKey(refresh), kind: 'refresh', expires_at: sql<Date>`now() + make_interval(days => ${this.#refreshTokenTtlDays})` },
      ])
      .execute();
    return { access_token: access, token_type: 'Bearer', expires_in: this.#accessTokenTtlSeconds, refresh_token: refresh };
  }
}

/**
 * Whether a token row is for `resource`: its recorded audience, or none (issued before audiences were recorded, when
 * the platform issued tokens for its /mcp only).
 */
function forAudience(column: string, resource: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(column)} is null or ${sql.ref(column)} = ${resource})`;
}

const EVER = sql<Date>`'-infinity'::timestamptz`;
const MONTH_AGO = sql<Date>`now() - make_interval(days => ${IDLE_CLIENT_DAYS})`;

/**
 * Whether the client `c` of the statement holds a consent page or code expiring at or after `codesFrom`, or a token
 * expiring at or after `tokensFrom` (EVER: any at all).
 */
function clientHolds(codesFrom: RawBuilder<Date>, tokensFrom: RawBuilder<Date>): RawBuilder<boolean> {
  return sql<boolean>`exists (select from oauth_codes k where k.client_id = c.client_id and k.expires_at >= ${codesFrom})
    or exists (select from oauth_tokens t where t.client_id = c.client_id and t.expires_at >= ${tokensFrom})`;
}

/** Ends every token of the grant that the client's token (by hash) belongs to. */
async function revokeGrantOf(db: Db, clientId: string, tokenHash: string): Promise<void> {
  const grant = db.selectFrom('oauth_tokens').select('grant_id').where('token_hash', '=', tokenHash).where('client_id', '=', clientId);
  await db.deleteFrom('oauth_tokens').where('grant_id', 'in', grant).execute();
}

/**
 * The protected resource: /mcp, the one route that accepts OAuth access tokens, and the audience (RFC 8707) of every
 * token issued. The bare base URL is not another name for it: it would name the whole platform, whose other routes
 * take no OAuth token, and the resource metadata names /mcp, which is what clients send.
 */
export function mcpResource(baseUrl: string): URL {
  return new URL(`${baseUrl}/mcp`);
}
