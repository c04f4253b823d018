// Which URLs are video meetings a bot can join: https links of the platforms the provider supports. Checked before any
// credit is held or the provider is called, so a typo is a 400 naming meetingUrl rather than a bot that never joins.

/** Exact hosts, and domains whose subdomains are meeting hosts too (company.zoom.us, company.webex.com). */
const HOSTS = ['meet.google.com', 'teams.microsoft.com', 'teams.live.com', 'meet.goto.com', 'app.gotomeeting.com', 'gotomeet.me'];
const DOMAINS = ['zoom.us', 'zoomgov.com', 'webex.com'];

export const MEETING_PLATFORMS = 'Zoom, Google Meet, Microsoft Teams, Webex, GoTo Meeting';

export function isMeetingUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' || url.username || url.password || url.port) return false;
  const host = url.hostname.toLowerCase();
  return HOSTS.includes(host) || DOMAINS.some((d) => host === d || host.endsWith(`.${d}`));
}
