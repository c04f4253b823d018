// An app's end users (auth_users_list): newest first, a page at a time by cursor, filtered by e-mail.
import { call, query, seg } from '../api.ts';

export interface EndUser {
  id: string;
  email: string;
  created_at: string;
  last_sign_in_at: string | null;
}

export const endUsers = {
  list: (appId: string, page: { limit: number; cursor?: string; q?: string }) =>
    call<{ users: EndUser[]; next_cursor: string | null }>('GET', `/v1/${seg(appId)}/auth/users${query({ limit: String(page.limit), cursor: page.cursor, q: page.q })}`),
};
