// An app's end-user auth settings (app_auth_settings): e-mail confirmation, open sign-ups, where mailed links may lead,
// and the app's own SMTP server. auth_settings_get/set show and change them; the GoTrue routes read them.
import { sql, type Kysely } from 'kysely';
import type { SecretBox } from '../core/crypto.ts';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Where an app's end-user mail goes out: its own SMTP server, the platform's (SVC_SMTP_URL), or nowhere. */
export type MailRoute = 'app' | 'platform' | 'none';

export interface AuthSettings {
  confirmEmail: boolean;
  allowSignup: boolean;
  siteUrl: string | null;
  redirectUrls: string[];
  mailFrom: string | null;
  /** The app's SMTP URL, opened: only the mail job reads it. */
  smtpUrl: string | null;
}

/** The settings as the API shows them: the SMTP URL only as whether it is set and a hint. */
export interface AuthSettingsView {
  confirm_email: boolean;
  allow_signup: boolean;
  site_url: string | null;
  redirect_urls: string[];
  mail_from: string | null;
  smtp_url_set: boolean;
  smtp_url_hint: string | null;
  mail_route: MailRoute;
  updated_at: string | null;
}

/** A partial update: omitted fields keep their value, null clears one. */
export interface AuthSettingsPatch {
  confirm_email?: boolean | undefined;
  allow_signup?: boolean | undefined;
  site_url?: string | null | undefined;
  redirect_urls?: string[] | undefined;
  mail_from?: string | null | undefined;
  smtp_url?: string | null | undefined;
}

interface SettingsRow {
  confirm_email: boolean;
  allow_signup: boolean;
  site_url: string | null;
  redirect_urls: string[];
  mail_from: string | null;
  smtp_url_sealed: string | null;
  smtp_url_hint: string | null;
  updated_at: Date | null;
}

const DEFAULTS: SettingsRow = {
  confirm_email: false,
  allow_signup: true,
  site_url: null,
  redirect_urls: [],
  mail_from: null,
  smtp_url_sealed: null,
  smtp_url_hint: null,
  updated_at: null,
};

/** The server of an SMTP URL, never its credentials. */
function smtpHint(url: string): string {
  const { protocol, hostname, port } = new URL(url);
  return `${protocol}//${hostname}${port ? `:${port}` : ''}`;
}

export class AuthSettingsStore {
  readonly #db: Kysely<ControlDatabase>;
  readonly #box: SecretBox;
  /** Whether the platform has an SMTP server (SVC_SMTP_URL) to carry mail for apps without their own. */
  readonly #platformMail: boolean;

  constructor(db: Kysely<ControlDatabase>, box: SecretBox, platformMail: boolean) {
    this.#db = db;
    this.#box = box;
    this.#platformMail = platformMail;
  }

  async settings(appId: string): Promise<AuthSettings> {
    const row = await this.#row(appId);
    return {
      confirmEmail: row.confirm_email,
      allowSignup: row.allow_signup,
      siteUrl: row.site_url,
      redirectUrls: row.redirect_urls,
      mailFrom: row.mail_from,
      smtpUrl: row.smtp_url_sealed ? this.#box.open(row.smtp_url_sealed) : null,
    };
  }

  async view(appId: string): Promise<AuthSettingsView> {
    return this.#view(await this.#row(appId));
  }

  /** Which server carries the app's mail (the routes that mail refuse without one). */
  route(settings: Pick<AuthSettings, 'smtpUrl'>): MailRoute {
    if (settings.smtpUrl) return 'app';
    return this.#platformMail ? 'platform' : 'none';
  }

  /** One upsert: the fields given replace theirs (null clears), the others stay; checked on the merged result. */
  async update(appId: string, patch: AuthSettingsPatch): Promise<AuthSettingsView> {
    const has = (k: keyof AuthSettingsPatch) => patch[k] !== undefined;
    const smtp = patch.smtp_url;
    const row = await this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<SettingsRow>`
        insert into app_auth_settings as s (app_id, confirm_email, allow_signup, site_url, redirect_urls, mail_from, smtp_url_sealed, smtp_url_hint)
        values (${appId}, ${patch.confirm_email ?? DEFAULTS.confirm_email}, ${patch.allow_signup ?? DEFAULTS.allow_signup}, ${patch.site_url ?? null},
                ${patch.redirect_urls ?? []}, ${patch.mail_from ?? null}, ${smtp ? this.#box.seal(smtp) : null}, ${smtp ? smtpHint(smtp) : null})
        on conflict (app_id) do update set
          confirm_email = case when ${has('confirm_email')}::boolean then excluded.confirm_email else s.confirm_email end,
          allow_signup = case when ${has('allow_signup')}::boolean then excluded.allow_signup else s.allow_signup end,
          site_url = case when ${has('site_url')}::boolean then excluded.site_url else s.site_url end,
          redirect_urls = case when ${has('redirect_urls')}::boolean then excluded.redirect_urls else s.redirect_urls end,
          mail_from = case when ${has('mail_from')}::boolean then excluded.mail_from else s.mail_from end,
          smtp_url_sealed = case when ${has('smtp_url')}::boolean then excluded.smtp_url_sealed else s.smtp_url_sealed end,
          smtp_url_hint = case when ${has('smtp_url')}::boolean then excluded.smtp_url_hint else s.smtp_url_hint end,
          updated_at = now()
        returning *`.execute(tx);
      const saved = rows[0]!;
      if (saved.confirm_email && !saved.smtp_url_sealed && !this.#platformMail) {
        throw errors.validation('confirm_email needs a mail server: the platform has none (SVC_SMTP_URL), so set smtp_url, the app\'s own.', [
          { path: has('smtp_url') ? 'smtp_url' : 'confirm_email', message: 'no mail server to send confirmations' },
        ]);
      }
      return saved;
    });
    return this.#view(row);
  }

  #view(row: SettingsRow): AuthSettingsView {
    return {
      confirm_email: row.confirm_email,
      allow_signup: row.allow_signup,
      site_url: row.site_url,
      redirect_urls: row.redirect_urls,
      mail_from: row.mail_from,
      smtp_url_set: row.smtp_url_sealed !== null,
      smtp_url_hint: row.smtp_url_hint,
      mail_route: this.route({ smtpUrl: row.smtp_url_sealed }),
      updated_at: row.updated_at?.toISOString() ?? null,
    };
  }

  async #row(appId: string): Promise<SettingsRow> {
    const { rows } = await sql<SettingsRow>`select * from app_auth_settings where app_id = ${appId}`.execute(this.#db);
    return rows[0] ?? DEFAULTS;
  }
}

/**
 * Where a mailed link sends the end user: `requested` when the app allows it (the origin of site_url, or under one of
 * redirect_urls: same origin, path within), else site_url, else the app's own host, else the platform's address.
 */
export function redirectTarget(settings: Pick<AuthSettings, 'siteUrl' | 'redirectUrls'>, requested: string | undefined, fallback: string): string {
  if (requested !== undefined && redirectAllowed(settings, requested)) return requested;
  return settings.siteUrl ?? fallback;
}

function redirectAllowed(settings: Pick<AuthSettings, 'siteUrl' | 'redirectUrls'>, requested: string): boolean {
  const url = URL.parse(requested);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return false;
  if (settings.siteUrl !== null && URL.parse(settings.siteUrl)?.origin === url.origin) return true;
  return settings.redirectUrls.some((entry) => {
    const allowed = URL.parse(entry);
    return allowed !== null && allowed.origin === url.origin && url.pathname.startsWith(allowed.pathname);
  });
}
