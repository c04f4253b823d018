// Where the app's API is: the platform serves window.__ENV__ from __env.js beside the site (see index.html).
export interface SiteEnv {
  SVC_APP_ID: string;
  /** {base_url}/v1/{app_id}: functions are at {SVC_API_URL}/fn/{name}. */
  SVC_API_URL: string;
  /** The data API, the URL supabase-js takes. */
  SVC_DATA_URL: string;
  SVC_AUTH_SIGNUP_URL: string;
  SVC_AUTH_LOGIN_URL: string;
  SVC_AUTH_REFRESH_URL: string;
}

declare global {
  interface Window {
    __ENV__?: Partial<SiteEnv>;
  }
}

function read(): SiteEnv {
  const found = window.__ENV__ ?? {};
  const missing = (['SVC_APP_ID', 'SVC_API_URL', 'SVC_DATA_URL', 'SVC_AUTH_SIGNUP_URL', 'SVC_AUTH_LOGIN_URL', 'SVC_AUTH_REFRESH_URL'] as const).filter((k) => !found[k]);
  if (missing.length) throw new Error(`The site's environment lacks ${missing.join(', ')}: is it served by the platform?`);
  return found as SiteEnv;
}

export const env = read();

/** The platform's own base URL (SVC_API_URL without /v1/{app_id}): the change stream lives there. */
export const platformUrl = env.SVC_API_URL.slice(0, env.SVC_API_URL.length - `/v1/${env.SVC_APP_ID}`.length);
