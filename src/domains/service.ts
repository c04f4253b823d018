// Custom domains of apps' sites (pro and enterprise plans): an app claims a domain, proves control with a DNS TXT
// record, and the domain then serves the app as its subdomain does (the live site, the app's short paths). Serving
// needs the Host of every request looked up, so that lookup goes through a small in-process cache; TLS is the
// operator's proxy's business, never the platform's.
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Logger } from 'pino';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppRecord } from '../apps/types.ts';
import { DnsUnavailableError, type TxtLookup } from './dns-port.ts';
import { domainErrors } from './errors.ts';
import { domainProblem, hostOf, type PlatformHosts } from './names.ts';
import { CHALLENGE_LABEL, HOST_CACHE_TTL_MS, MAX_DOMAINS_PER_APP, VERIFICATION_PREFIX, type DomainView } from './types.ts';

type DomainRow = Selectable<ControlDatabase['app_domains']>;

/** Hosts whose answer (an app or none) a process remembers at once; the oldest is forgotten first. */
const HOST_CACHE_MAX = 10_000;

export function domainView(row: DomainRow): DomainView {
  return {
    domain: row.domain,
    app_id: row.app_id,
    status: row.status,
    verification: { type: 'TXT', name: `${CHALLENGE_LABEL}.${row.domain}`, value: `${VERIFICATION_PREFIX}${row.token}` },
    url: `https://${row.domain}/`,
    verified_at: row.verified_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export interface DomainsServiceDeps {
  db: Kysely<ControlDatabase>;
  dns: TxtLookup;
  hosts: PlatformHosts;
  log: Logger;
}

type App = Pick<AppRecord, 'id' | 'account_id'>;

export class DomainsService {
  readonly #d: DomainsServiceDeps;
  readonly #platformHost: string;
  /** Host -> the app it serves (null: none), or the lookup in flight; see appForHost. */
  readonly #hosts = new Map<string, { app: string | null | Promise<string | null>; expiresMs: number }>();

  constructor(deps: DomainsServiceDeps) {
    this.#d = deps;
    this.#platformHost = hostOf(new URL(deps.hosts.baseUrl).host);
  }

  async list(appId: string): Promise<DomainView[]> {
    const rows = await this.#d.db.selectFrom('app_domains').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('domain').execute();
    return rows.map(domainView);
  }

  /** Claims `input` for the app (pending) with a fresh verification token. */
  async add(app: App, input: string): Promise<DomainView> {
    await this.#requirePaidPlan(app.account_id);
    const domain = this.#checked(input);
    const { db } = this.#d;
    await this.#refuseIfVerifiedElsewhere(app.id, domain);
    const { n } = await db.selectFrom('app_domains').select((eb) => eb.fn.countAll<string>().as('n')).where('app_id', '=', app.id).executeTakeFirstOrThrow();
    if (Number(n) >= MAX_DOMAINS_PER_APP) {
      throw errors.conflict(`The app already has ${MAX_DOMAINS_PER_APP} custom domains, the most one app may have.`, 'Remove one it no longer needs with domains_remove, then add this one.');
    }
    const row = await db
      .insertInto('app_domains')
      .values({ app_id: app.id, domain, token: randomBytes(16).toString('hex') })
      .onConflict((oc) => oc.columns(['app_id', 'domain']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      throw errors.conflict(
        `The domain '${domain}' is already added to this app.`,
        'Publish its TXT record (domains_list shows it) and call domains_verify { app_id, domain }; to start over, domains_remove it first.',
      );
    }
    this.#forget(domain);
    this.#d.log.info({ app_id: app.id, domain }, 'custom domain added');
    return domainView(row);
  }

  /** Looks the domain's TXT record up now: verified when it holds the token, else 409 DOMAIN_NOT_VERIFIED. */
  async verify(app: App, input: string): Promise<DomainView> {
    await this.#requirePaidPlan(app.account_id);
    const domain = input.toLowerCase();
    const row = await this.#row(app.id, domain);
    if (row.status === 'verified') return domainView(row);
    await this.#refuseIfVerifiedElsewhere(app.id, domain);
    const record = domainView(row).verification;
    let found: string[];
    try {
      found = await this.#d.dns.txt(record.name);
    } catch (err) {
      if (err instanceof DnsUnavailableError) throw domainErrors.dnsUnavailable(record.name, err.code);
      throw err;
    }
    if (!found.includes(record.value)) throw domainErrors.notVerified(record, found);
    let verified: DomainRow | undefined;
    try {
      verified = await this.#d.db
        .updateTable('app_domains')
        .set({ status: 'verified', verified_at: new Date() })
        .where('app_id', '=', app.id)
        .where('domain', '=', domain)
        .returningAll()
        .executeTakeFirst();
    } catch (err) {
      // Another app verified the same domain between our check and this update (the partial unique index).
      if ((err as { code?: unknown }).code === '23505') throw verifiedElsewhere(domain);
      throw err;
    }
    if (!verified) throw notFound(domain);
    this.#forget(domain);
    this.#d.log.info({ app_id: app.id, domain }, 'custom domain verified');
    return domainView(verified);
  }

  /** Removes the domain from the app: this process stops serving it at once, others within HOST_CACHE_TTL_MS. */
  async remove(appId: string, input: string): Promise<{ deleted: true; domain: string }> {
    const domain = input.toLowerCase();
    const removed = await this.#d.db.deleteFrom('app_domains').where('app_id', '=', appId).where('domain', '=', domain).returning('domain').executeTakeFirst();
    if (!removed) throw notFound(domain);
    this.#forget(domain);
    this.#d.log.info({ app_id: appId, domain }, 'custom domain removed');
    return { deleted: true, domain };
  }

  /**
   * The app a request's Host header names as its verified custom domain (an app that is ready, of an account on a
   * paid plan), or null. Synchronous when the answer is known without the database: a Host that cannot be a custom
   * domain (an IP address, the platform's own host, a malformed name) and one looked up within HOST_CACHE_TTL_MS; so
   * requests to the platform itself never query for it.
   */
  appForHost(hostHeader: string | undefined): string | null | Promise<string | null> {
    const host = hostOf(hostHeader);
    if (host === '' || host === this.#platformHost) return null;
    const now = Date.now();
    const hit = this.#hosts.get(host);
    if (hit && hit.expiresMs > now) return hit.app;
    if (domainProblem(host, this.#d.hosts) !== undefined) return null;
    const lookup = this.#servingApp(host).then(
      (app) => {
        // Settled: later requests get the value itself (unless the entry was forgotten or replaced meanwhile).
        if (this.#hosts.get(host)?.app === lookup) this.#hosts.set(host, { app, expiresMs: now + HOST_CACHE_TTL_MS });
        return app;
      },
      (err: unknown) => {
        if (this.#hosts.get(host)?.app === lookup) this.#hosts.delete(host);
        throw err;
      },
    );
    this.#hosts.delete(host);
    if (this.#hosts.size >= HOST_CACHE_MAX) this.#hosts.delete(this.#hosts.keys().next().value as string);
    this.#hosts.set(host, { app: lookup, expiresMs: now + HOST_CACHE_TTL_MS });
    return lookup;
  }

  async #servingApp(host: string): Promise<string | null> {
    const row = await this.#d.db
      .selectFrom('app_domains as d')
      .innerJoin('apps as a', 'a.id', 'd.app_id')
      .innerJoin('accounts as ac', 'ac.id', 'a.account_id')
      .select('d.app_id')
      .where('d.domain', '=', host)
      .where('d.status', '=', 'verified')
      .where('a.status', '=', 'ready')
      .where('ac.plan', '!=', 'free')
      .executeTakeFirst();
    return row?.app_id ?? null;
  }

  #forget(domain: string): void {
    this.#hosts.delete(domain);
  }

  async #requirePaidPlan(accountId: string): Promise<void> {
    const account = await this.#d.db.selectFrom('accounts').select('plan').where('id', '=', accountId).executeTakeFirst();
    const plan = account?.plan ?? 'free';
    if (plan === 'free') throw domainErrors.planUpgradeRequired(plan);
  }

  /** The lowercased domain, or a 400 naming the field. */
  #checked(input: string): string {
    const domain = input.toLowerCase();
    const problem = domainProblem(domain, this.#d.hosts);
    if (problem) throw errors.validation(`Invalid 'domain': ${problem}.`, [{ path: 'domain', message: problem }]);
    return domain;
  }

  async #refuseIfVerifiedElsewhere(appId: string, domain: string): Promise<void> {
    const holder = await this.#d.db
      .selectFrom('app_domains')
      .select('app_id')
      .where('domain', '=', domain)
      .where('status', '=', 'verified')
      .where('app_id', '!=', appId)
      .executeTakeFirst();
    if (holder) throw verifiedElsewhere(domain);
  }

  async #row(appId: string, domain: string): Promise<DomainRow> {
    const row = await this.#d.db.selectFrom('app_domains').selectAll().where('app_id', '=', appId).where('domain', '=', domain).executeTakeFirst();
    if (!row) throw notFound(domain);
    return row;
  }
}

function notFound(domain: string) {
  return errors.notFound(`Custom domain '${domain.slice(0, 260)}' of this app`, 'List the app\'s domains with domains_list; add one with domains_add.');
}

function verifiedElsewhere(domain: string) {
  return errors.conflict(
    `The domain '${domain}' is verified by another app.`,
    'A domain serves one app: remove it from the other app first (domains_remove there), or use another domain.',
  );
}
