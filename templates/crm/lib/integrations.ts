// The toolkits the CRM uses and the caller's connected accounts (the platform's integrations routes, as the end user:
// each member connects their own mailbox, calendar and social account; nobody else can use or see their tokens).
import type { Ctx, IntegrationConnection } from './ctx.ts';

/** Toolkit -> what the CRM does with it. */
export const CRM_TOOLKITS = {
  gmail: 'Mail: sync e-mails to the timeline, send e-mails, campaigns and invitations',
  googlecalendar: 'Calendar: sync meetings, book meetings, send meeting bots',
  linkedin: 'Social: publish posts',
} as const;

export type CrmToolkit = keyof typeof CRM_TOOLKITS;
export const TOOLKIT_NAMES = Object.keys(CRM_TOOLKITS) as CrmToolkit[];

/** Which sync kind (sync_state.kind) a toolkit feeds, when it feeds one. */
export const SYNC_KIND: Partial<Record<CrmToolkit, 'mail' | 'calendar'>> = { gmail: 'mail', googlecalendar: 'calendar' };

export type Connection = IntegrationConnection;

/** The caller's connected accounts. */
export async function myConnections(ctx: Ctx): Promise<Connection[]> {
  return (await ctx.integrations.connections()).connections;
}

/** Whether the caller has an active account of the toolkit (e.g. to mail from their Gmail). */
export async function isConnected(ctx: Ctx, toolkit: CrmToolkit): Promise<boolean> {
  return (await myConnections(ctx)).some((c) => c.toolkit === toolkit && c.status === 'active');
}
