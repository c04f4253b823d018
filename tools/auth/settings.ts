// An app's end-user auth settings: e-mail confirmation, open sign-ups, where mailed links may lead, the app's SMTP server.
import { z } from 'zod';
import { AppIdSchema } from '../../src/apps/types.ts';
import { checkOutboundUrl } from '../../src/core/outbound.ts';
import { toolsUsing } from '../define.ts';

const defineTool = toolsUsing<'authSettings' | 'config'>();
const ADMIN = ['platform', 'service'] as const;

const SettingsView = z.object({
  confirm_email: z.boolean(),
  allow_signup: z.boolean(),
  site_url: z.string().nullable(),
  redirect_urls: z.array(z.string()),
  mail_from: z.string().nullable(),
  smtp_url_set: z.boolean(),
  smtp_url_hint: z.string().nullable(),
  mail_route: z.enum(['app', 'platform', 'none']),
  updated_at: z.string().nullable(),
});

const HttpUrl = z.url({ protocol: /^https?$/, error: 'an absolute http(s) URL' }).max(2000);
const SmtpUrl = z.url({ protocol: /^smtps?$/, error: 'an smtp:// or smtps:// URL' }).max(2000);

export const authSettingsGet = defineTool({
  name: 'auth_settings_get',
  title: 'Read end-user auth settings',
  description: "The app's end-user auth settings (auth_settings_set); mail_route says which server mails end users: app, platform or none.",
  input: z.object({ app_id: AppIdSchema }),
  output: SettingsView,
  auth: ADMIN,
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/auth/settings', subdomainPath: '/auth/settings' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.authSettings.view(input.app_id),
});

export const authSettingsSet = defineTool({
  name: 'auth_settings_set',
  title: 'Change end-user auth settings',
  description:
    'Omitted fields keep their value, null clears. confirm_email: sign-ups confirm by mail first; allow_signup; site_url and redirect_urls: where ' +
    "mailed links may lead; smtp_url (never returned) and mail_from: the app's own mail server, else the platform's.",
  input: z.object({
    app_id: AppIdSchema,
    confirm_email: z.boolean().optional(),
    allow_signup: z.boolean().optional(),
    site_url: HttpUrl.nullable().optional(),
    redirect_urls: z.array(HttpUrl).max(20).optional(),
    mail_from: z.string().min(3).max(200).regex(/^[^\r\n]+$/, 'one line').nullable().optional(),
    smtp_url: SmtpUrl.nullable().optional(),
  }),
  output: SettingsView,
  auth: ADMIN,
  appScoped: true,
  http: { method: 'PUT', path: '/v1/{app_id}/auth/settings', subdomainPath: '/auth/settings' },
  annotations: { idempotentHint: true },
  audit: {
    action: 'auth_settings.update',
    resource: 'app',
    id: (input) => input.app_id,
    details: ({ app_id: _app, smtp_url, ...patch }, out) => ({
      fields: Object.keys(patch).concat(smtp_url === undefined ? [] : ['smtp_url']),
      ...(smtp_url === undefined ? {} : { smtp_url: smtp_url === null ? 'removed' : 'set', smtp_url_hint: out.smtp_url_hint }),
    }),
  },
  handler: async ({ app_id, ...patch }, ctx) => {
    // The app's SMTP host must not be one of the platform's neighbours (checked again as each mail goes out).
    if (patch.smtp_url) await checkOutboundUrl(new URL(patch.smtp_url), ctx.services.config.outboundAllowPrivate, 'smtp_url');
    return ctx.services.authSettings.update(app_id, patch);
  },
});

export const authSettingsTools = [authSettingsGet, authSettingsSet];
