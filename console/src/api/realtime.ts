// The realtime routes the console uses: realtime_token, a short-lived credential (minted with the session) for channels
// that act as the app, which supabase-js's channel() then carries on the app's realtime socket like any page's.
import { call, seg } from '../api.ts';

export interface RealtimeToken {
  token: string;
  /** Seconds. */
  expires_in: number;
}

export const realtime = {
  token: (appId: string) => call<RealtimeToken>('POST', `/v1/${seg(appId)}/realtime/token`),
};
