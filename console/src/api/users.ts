// An app's end users (auth_users_list): newest first, a page at a time by cursor, filtered by e-mail; and their auth
// settings (auth_settings_get / auth_settings_set).
import { call, query, seg } from '../api.ts';

export interface EndUser {
  id: string;
  email: string;
  created_at: string;
  last_sign_in_at: string | null;
}

export interface AuthSettings {
  confirm_email: boolean;
  allow_signup: boolean;
  site_url: string | null;
  redirect_urls: string[];
  mail_from: string | null;
  smtp_url_set: boolean;
  /** The SMTP server without its credentials (smtps://host:port); the URL itself is never returned. */
  smtp_url_hint: string | null;
  mail_route: 'app' | 'platform' | 'none';
  updated_at: string | null;
}

/** A change of the settings: omitted fields keep their value, null clears one. */
export interface AuthSettingsChange {
  confirm_email?: boolean;
  allow_signup?: boolean;
  site_url?: string | null;
  redirect_urls?: string[];
  mail_from?: string | null;
  smtp_url?: string | null;
}

export const endUsers = {
  list: (appId: string, page: { limit: number; cursor?: string; q?: string }) =>
    call<{ users: EndUser[]; next_cursor: string | null }>('GET', `/v1/${seg(appId)}/auth/users${query({ limit: String(page.limit), cursor: page.cursor, q: page.q })}`),
  settings: (appId: string) => call<AuthSettings>('GET', `/v1/${seg(appId)}/auth/settings`),
  setSettings: (appId: string, change: AuthSettingsChange) => call<AuthSettings>('PUT', `/v1/${seg(appId)}/auth/settings`, change),
};
