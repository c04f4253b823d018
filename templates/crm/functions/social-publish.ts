// Every 5 minutes: scheduled posts that are due, published through their author's connected account (LinkedIn, or
// X). Each post ends published with the network's id, or failed with the reason (not connected, refused, ...), and
// social-schedule may retry it.
import type { Ctx } from '../lib/ctx.ts';
import { eq, handler, json, rows } from '../lib/http.ts';
import { errorText, runTool } from '../lib/tools.ts';
import { currentMembers } from '../lib/workspace.ts';

/** Posts per run: each is two vendor calls at most. */
const BATCH = 50;

interface Post {
  id: string;
  workspace_id: string;
  user_id: string | null;
  network: 'linkedin' | 'twitter';
  body: string;
}

/** Publishes as the author; the network's id of the post, when it gives one. */
async function publish(ctx: Ctx, post: Post & { user_id: string }): Promise<string | null> {
  if (post.network === 'twitter') {
    const data = await runTool(ctx, post.user_id, 'TWITTER_CREATION_OF_A_POST', { text: post.body });
    return data.data?.id ?? data.id ?? null;
  }
  // A LinkedIn post names its author by URN, which only the member's own profile gives.
  const me = await runTool(ctx, post.user_id, 'LINKEDIN_GET_MY_INFO', {});
  const author = me.author_id ?? (me.id ? `urn:li:person:${me.id}` : null);
  if (!author) throw new Error('LinkedIn did not say who the connected member is');
  const data = await runTool(ctx, post.user_id, 'LINKEDIN_CREATE_LINKED_IN_POST', { author, commentary: post.body, visibility: 'PUBLIC', lifecycleState: 'PUBLISHED' });
  return data.id ?? data['x-restli-id'] ?? null;
}

export default handler(async (_request, ctx) => {
  const now = new Date().toISOString();
  const due = rows(
    await ctx.asApp.data.from('social_posts').select<Post>('id,workspace_id,user_id,network,body', { query: `status=eq.scheduled&scheduled_at=lte.${encodeURIComponent(now)}&order=scheduled_at&limit=${BATCH}` }),
    'social_posts',
  );
  const members = due.length ? await currentMembers(ctx) : null;
  let published = 0;
  for (const post of due) {
    let patch: Record<string, unknown>;
    try {
      if (!post.user_id) throw new Error('the post has no author');
      if (!members?.has(post.workspace_id, post.user_id)) throw new Error('the author is no longer a member of the workspace');
      const externalId = await publish(ctx, { ...post, user_id: post.user_id });
      patch = { status: 'published', published_at: new Date().toISOString(), external_id: externalId, error: null };
      published++;
    } catch (err) {
      patch = { status: 'failed', error: errorText(err) };
    }
    rows(await ctx.asApp.data.from('social_posts').update(patch, `id=${eq(post.id)}&status=eq.scheduled`), 'social_posts');
  }
  return json({ due: due.length, published, failed: due.length - published });
});
