import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { accountOf, personSignedIn } from '../caller.ts';
import { substratePropose } from './substrate.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const Link = z.object({ app_id: z.string(), substrate_user_id: z.string().nullable(), end_users_decide: z.boolean() });

export const substrateAppLink = defineTool({
  name: 'substrate_app_link',
  title: 'Link an app to the substrate',
  description:
    "Link an app to a substrate user of your account (default: the account's own), so that its functions (ctx.substrate) and its service key " +
    '(POST /v1/{app_id}/substrate/actions/propose) propose for that user as an agent, with source_app_id set.',
  input: z.object({
    app_id: AppIdSchema,
    substrate_user_id: z.string().uuid().optional().describe("A substrate user of your account; default the account's own"),
    end_users_decide: z.boolean().optional().describe("true: its end users may approve its proposals (a person's session only)"),
  }),
  output: Link,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/apps/{app_id}/substrate-link' },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    // An agent holding the platform key could otherwise sign up an end user of its own app and approve through it.
    if (input.end_users_decide === true) personSignedIn(ctx.caller, "let an app's end users decide on its proposals", 'POST /apps/{app_id}/substrate-link');
    return ctx.services.substrate.link(accountOf(ctx.caller), input.app_id, input.substrate_user_id, input.end_users_decide);
  },
});

export const substrateAppUnlink = defineTool({
  name: 'substrate_app_unlink',
  title: 'Unlink an app from the substrate',
  description: 'Remove the app\'s substrate link: ctx.substrate disappears from its functions and its service key can no longer propose.',
  input: z.object({ app_id: AppIdSchema }),
  output: Link,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'DELETE', path: '/apps/{app_id}/substrate-link' },
  annotations: { idempotentHint: true, destructiveHint: true },
  handler: async (input, ctx) => ctx.services.substrate.unlink(input.app_id),
});

/** The app's backend proposing with its service key: the same door, as an agent for the linked user. */
export const substrateAppPropose = defineTool({
  name: 'substrate_app_propose',
  title: 'Propose as a linked app',
  description: 'An app\'s service key proposes for the substrate user the app is linked to (proposer kind agent, source_app_id set); same body and answer as substrate_propose. 409 SUBSTRATE_NOT_LINKED when the app is not linked.',
  input: (substratePropose.input as unknown as z.ZodObject).extend({ app_id: AppIdSchema }),
  output: substratePropose.output,
  auth: ['service'],
  appScoped: true,
  mcp: false,
  http: { method: 'POST', path: '/v1/{app_id}/substrate/actions/propose' },
  handler: async ({ app_id, ...input }, ctx) => ctx.services.substrate.propose(await ctx.services.substrate.actorForApp(String(app_id)), input as never),
});

export const substrateLinkTools = [substrateAppLink, substrateAppUnlink, substrateAppPropose];
