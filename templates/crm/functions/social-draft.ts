// POST {workspace_id, topic, network}: the AI gateway drafts a post on the topic for LinkedIn or X, saved as the
// caller's draft (social-schedule schedules it, social-publish publishes it through their account).
import { chatText } from '../lib/ai.ts';
import { NETWORKS, POST_LIMITS } from '../lib/social.ts';
import { body, handler, json, one, oneOf, text, uuid } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';

const STYLE = {
  linkedin: 'a LinkedIn post: a hook in the first line, two or three short paragraphs, at most 1300 characters, no hashtag spam',
  twitter: 'a post on X: at most 280 characters, one idea, plain and direct',
} as const;

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const topic = text(input, 'topic', { max: 2000 });
  const network = oneOf(input, 'network', NETWORKS, 'linkedin');
  const member = await requireMember(ctx, workspaceId);
  const draft = await chatText(
    ctx,
    [
      { role: 'system', content: `You write social posts for a small B2B sales team. Write ${STYLE[network]}. Answer with the post only.` },
      { role: 'user', content: topic },
    ],
    'a draft',
  );
  const post = one(
    await ctx.asApp.data
      .from('social_posts')
      .insert({ workspace_id: workspaceId, user_id: member.user_id, network, topic, body: draft.slice(0, POST_LIMITS[network]), status: 'draft' }, { prefer: 'return=representation' }),
    'social post',
  );
  return json({ post }, 201);
});
