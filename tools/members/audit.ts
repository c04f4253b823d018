// The account's audit log (src/identity/audit.ts), for its admins: who did what to which resource, newest first.
import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { accountOf } from '../caller.ts';

type Uses = 'audit';
const defineTool = toolsUsing<Uses>();

const Filter = z.string().min(1).max(200);

const EntrySchema = z.object({
  id: z.string(),
  actor_kind: z.enum(['person', 'key', 'platform']),
  actor_id: z.string().nullable(),
  action: z.string(),
  resource_type: z.string(),
  resource_id: z.string().nullable(),
  ip: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

export const auditList = defineTool({
  name: 'audit_list',
  title: 'Read the audit log',
  description:
    "The account's audit log, newest first: { entries, next_cursor }. Filters: actor (a person's or key's id), action (e.g. " +
    'member.role_change), resource_type, resource_id, since and until (ISO times), limit; cursor pages on.',
  input: z.object({
    actor: Filter.optional(),
    action: Filter.optional(),
    resource_type: Filter.optional(),
    resource_id: Filter.optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: Filter.optional().describe('next_cursor of the previous page'),
  }),
  output: z.object({ entries: z.array(EntrySchema), next_cursor: z.string().nullable() }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'GET', path: '/dashboard/audit' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.audit.list(accountOf(ctx.caller), input),
});
