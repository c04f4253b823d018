// Social posts: drafted by the AI gateway, scheduled, published by a cron through the author's connected account.
import type { SocialPost } from '../types.ts';
import { db, fn, rows } from './core.ts';

export async function posts(workspaceId: string): Promise<SocialPost[]> {
  const q = (await db()).from('social_posts').select('id,network,topic,body,status,scheduled_at,published_at,error');
  return rows<SocialPost>(await q.eq('workspace_id', workspaceId).order('created_at', { ascending: false }));
}

export const draft = (workspaceId: string, topic: string, network: SocialPost['network']) => fn<{ post: SocialPost }>('social-draft', { body: { workspace_id: workspaceId, topic, network } });

export const schedule = (postId: string, scheduledAt: string, body: string) => fn<{ post: SocialPost }>('social-schedule', { body: { post_id: postId, scheduled_at: scheduledAt, body } });
