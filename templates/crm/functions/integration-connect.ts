// POST {toolkit, redirect_url}: starts connecting the caller's own account of a toolkit the CRM uses; the site sends
// the browser to auth_url and gets it back at redirect_url (which the app's integration settings must allow).
import { handler, json, body, text, oneOf, requireUser, HttpError } from '../lib/http.ts';
import { TOOLKIT_NAMES } from '../lib/integrations.ts';
import { asUser } from '../lib/rest.ts';

export default handler(async (request, ctx) => {
  requireUser(ctx);
  const input = await body(request);
  const toolkit = oneOf(input, 'toolkit', TOOLKIT_NAMES);
  const redirectUrl = text(input, 'redirect_url', { max: 2000 });
  if (!/^https?:\/\//i.test(redirectUrl) || !URL.canParse(redirectUrl)) throw new HttpError(400, 'invalid_field', 'redirect_url must be an http(s) URL.');
  const started = await asUser<{ authUrl: string; connectionRequestId: string }>(ctx, 'POST', '/integrations/connect', { toolkit, redirectUrl });
  return json({ toolkit, auth_url: started.authUrl, connection_request_id: started.connectionRequestId });
});
