// The 10 curated toolkits: what integrations_available lists without a search. Chosen for what apps built on the
// platform most often reach for (mail, calendar, files, chat, code, docs, issues, CRM) and because the vendor manages
// an OAuth app for each, so an app enables them without registering OAuth apps of its own. Slugs are the vendor's.

export interface CuratedToolkit {
  toolkit: string;
  displayName: string;
  description: string;
}

export const CURATED_TOOLKITS: readonly CuratedToolkit[] = Object.freeze([
  { toolkit: 'gmail', displayName: 'Gmail', description: 'Read, search, draft and send e-mail.' },
  { toolkit: 'googlecalendar', displayName: 'Google Calendar', description: 'List, create and update events; find free time.' },
  { toolkit: 'googledrive', displayName: 'Google Drive', description: 'Find, read, upload and share files.' },
  { toolkit: 'outlook', displayName: 'Outlook', description: 'Microsoft 365 mail and calendar.' },
  { toolkit: 'slack', displayName: 'Slack', description: 'Post and read messages, list channels and users.' },
  { toolkit: 'github', displayName: 'GitHub', description: 'Repositories, issues, pull requests.' },
  { toolkit: 'notion', displayName: 'Notion', description: 'Search, read and write pages and databases.' },
  { toolkit: 'linear', displayName: 'Linear', description: 'Issues, projects and cycles.' },
  { toolkit: 'jira', displayName: 'Jira', description: 'Issues, projects and transitions.' },
  { toolkit: 'hubspot', displayName: 'HubSpot', description: 'CRM contacts, companies and deals.' },
]);

const CURATED_SLUGS: ReadonlySet<string> = new Set(CURATED_TOOLKITS.map((t) => t.toolkit));

export function isCurated(toolkit: string): boolean {
  return CURATED_SLUGS.has(toolkit);
}
