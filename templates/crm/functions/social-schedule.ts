// POST {post_id, scheduled_at, body?}: schedules a draft (or reschedules, or retries a failed post) with its final
// text. It will be published through its author's account, so only the author or a workspace owner or admin may.
import { POST_LIMITS, type Network } from '../lib/social.ts';
import { HttpError, body, eq, handler, json, one, text, uuid } from '../lib/http.ts';
import { rowOf } from '../lib/workspace.ts';


interface Post {
  id: string;
  workspace_id: string;
  user_id: string | null;
  network: Network;
  status: 'draft' | 'scheduled' | 'published' | 'failed';
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const { row: post, member } = await rowOf<Post>(ctx, 'social_posts', uuid(input, 'post_id'));
  const when = new Date(text(input, 'scheduled_at', { max: 40 }));
  if (Number.isNaN(when.getTime())) throw new HttpError(400, 'invalid_field', 'scheduled_at must be an ISO 8601 date and time.');
  const newBody = text(input, 'body', { optional: true, max: POST_LIMITS[post.network] });
  if (post.user_id !== member.user_id && member.role === 'member') throw new HttpError(403, 'not_author', "Only the post's author or a workspace owner or admin may schedule it.");
  if (post.status === 'published') throw new HttpError(409, 'wrong_status', 'The post is already published.');
  const patch = { status: 'scheduled', scheduled_at: when.toISOString(), error: null, ...(newBody ? { body: newBody } : {}) };
  const saved = one(await ctx.asApp.data.from('social_posts').update(patch, `id=${eq(post.id)}&status=neq.published`, { prefer: 'return=representation' }), 'social post');
  return json({ post: saved });
});
