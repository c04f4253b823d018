import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { accountOf, personSignedIn } from '../caller.ts';
import { substrateErrors } from '../../src/substrate/service.ts';
import { substratePropose } from './substrate.ts';

type Uses = 'substrate';
const defineTool = toolsUsing<Uses>();

const Link = z.object({ app_id: z.string(), substrate_user_id: z.string().nullable(), end_users_decide: z.boolean() });

export const substrateAppLink = defineTool({
  name: 'substrate_app_link',
  title: 'Link an app to the substrate',
  description:
    "Link an app to a substrate user of your account (default: the account's own), so that its functions (ctx.substrate) and its service key " +
    '(POST /v1/{app_id}/substrate/actions/propose) propose for that user as an agent, with source_app_id set. ' +
    "end_users_decide: true (a person signed in, for their own substrate) lets the app's end users decide on what its functions propose.",
  input: z.object({
    app_id: AppIdSchema,
    substrate_user_id: z.string().uuid().optional().describe("A substrate user of your account; default the account's own (with end_users_decide: true, yours)"),
    end_users_decide: z
      .boolean()
      .optional()
      .describe("true: its end users may decide on what its functions propose (a person's session only, for their own substrate); false: no more"),
  }),
  output: Link,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/apps/{app_id}/substrate-link' },
  annotations: { idempotentHint: true },
  audit: {
    action: 'substrate.link',
    resource: 'app',
    id: (input) => input.app_id,
    details: (_input, link) => ({ substrate_user_id: link.substrate_user_id, end_users_decide: link.end_users_decide }),
  },
  handler: async (input, ctx) => {
    const accountId = accountOf(ctx.caller);
    if (input.end_users_decide !== true) return ctx.services.substrate.link(accountId, input.app_id, input.substrate_user_id, input.end_users_decide === false ? null : undefined);
    // An agent holding the platform key could otherwise sign up an end user of its own app and approve through it; a
    // person lets end users decide for themselves only, on their own substrate.
    const personId = personSignedIn(ctx.caller, "let an app's end users decide on its proposals", 'POST /apps/{app_id}/substrate-link');
    const { userId } = await ctx.services.substrate.actor(ctx.caller);
    if (input.substrate_user_id !== undefined && input.substrate_user_id !== userId) {
      throw substrateErrors.humanRequired(
        "Only the person whose substrate an app is linked to can let its end users decide on its proposals; this substrate user is not yours.",
        'Omit substrate_user_id (your own substrate user is the default with end_users_decide), or let its person do it signed in.',
      );
    }
    return ctx.services.substrate.link(accountId, input.app_id, userId, personId);
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
  audit: { action: 'substrate.unlink', resource: 'app', id: (input) => input.app_id },
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
  // A proposal to the owner's ledger: the ledger governs it.
  governed: false,
  mcp: false,
  http: { method: 'POST', path: '/v1/{app_id}/substrate/actions/propose' },
  handler: async ({ app_id, ...input }, ctx) => ctx.services.substrate.propose(await ctx.services.substrate.actorForApp(String(app_id), 'service_key'), input as never),
});

export const substrateLinkTools = [substrateAppLink, substrateAppUnlink, substrateAppPropose];
