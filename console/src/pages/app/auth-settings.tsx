// The end users' auth settings on an app's Users tab (auth_settings_get / auth_settings_set): whether sign-ups confirm
// their e-mail first and are open at all, where mailed links may lead, and which server sends the mail (the app's own
// SMTP server, whose URL is never shown again, only its server: replaced or removed; else the platform's).
import { endUsers, type AuthSettings, type AuthSettingsChange } from '../../api/users.ts';
import { Facts } from '../../facts.tsx';
import { useCan } from '../../session.ts';
import { Field, Form, Loading, text, TextArea, useLoad, when } from '../../ui.tsx';

const MAIL_ROUTES: Record<AuthSettings['mail_route'], string> = {
  app: "the app's SMTP server",
  platform: "the platform's SMTP server",
  none: 'none: no mail can be sent',
};

export function AuthSettingsSection({ appId }: { appId: string }) {
  const settings = useLoad(() => endUsers.settings(appId), [appId]);
  const canWrite = useCan('developer');
  return (
    <section aria-labelledby="auth-settings">
      <h3 id="auth-settings">Auth settings</h3>
      <Loading loaded={settings}>
        {(s) => (
          <>
            <Facts label="Auth settings" facts={settingFacts(s)} />
            {canWrite && <SettingsForm appId={appId} settings={s} saved={settings.reload} />}
          </>
        )}
      </Loading>
    </section>
  );
}

function settingFacts(s: AuthSettings): Array<[string, string]> {
  return [
    ['Confirm e-mail', s.confirm_email ? 'yes: sign-ups confirm by mail first' : 'no'],
    ['Sign-ups', s.allow_signup ? 'open' : 'closed'],
    ['Site URL', s.site_url ?? 'not set'],
    ['Redirect URLs', s.redirect_urls.length ? s.redirect_urls.join(', ') : 'none'],
    ['Mail from', s.mail_from ?? 'not set'],
    ['SMTP server', s.smtp_url_hint ?? 'not set'],
    ['Mail goes out through', MAIL_ROUTES[s.mail_route]],
    ['Updated', s.updated_at ? when(s.updated_at) : 'never'],
  ];
}

/** The form's fields as auth_settings_set's change: an empty field clears its setting; the SMTP URL is kept unless typed or removed. */
function settingsChange(d: FormData): AuthSettingsChange {
  const change: AuthSettingsChange = {
    confirm_email: d.has('confirm_email'),
    allow_signup: d.has('allow_signup'),
    site_url: text(d, 'site_url') ?? null,
    redirect_urls: text(d, 'redirect_urls')?.split(/\s+/) ?? [],
    mail_from: text(d, 'mail_from') ?? null,
  };
  const smtp = text(d, 'smtp_url');
  if (smtp) change.smtp_url = smtp;
  else if (d.has('remove_smtp')) change.smtp_url = null;
  return change;
}

function SettingsForm({ appId, settings: s, saved }: { appId: string; settings: AuthSettings; saved: () => Promise<void> }) {
  const save = async (d: FormData) => {
    await endUsers.setSettings(appId, settingsChange(d));
    await saved();
  };
  return (
    <Form label="Auth settings" button="Save auth settings" submit={save}>
      <label>
        <input type="checkbox" name="confirm_email" defaultChecked={s.confirm_email} /> Sign-ups confirm their e-mail first
      </label>
      <label>
        <input type="checkbox" name="allow_signup" defaultChecked={s.allow_signup} /> Anyone may sign up
      </label>
      <Field label="Site URL" name="site_url" placeholder="https://app.example" defaultValue={s.site_url ?? ''} maxLength={2000} />
      <TextArea label="Redirect URLs (one per line)" name="redirect_urls" rows={3} defaultValue={s.redirect_urls.join('\n')} />
      <Field label="Mail from" name="mail_from" placeholder="App <no-reply@app.example>" defaultValue={s.mail_from ?? ''} maxLength={200} />
      <Field
        label={s.smtp_url_set ? 'New SMTP URL (empty: keep)' : 'SMTP URL (smtp:// or smtps://)'}
        name="smtp_url"
        type="password"
        autoComplete="off"
        maxLength={2000}
      />
      {s.smtp_url_set && (
        <label>
          <input type="checkbox" name="remove_smtp" /> Remove the SMTP server
        </label>
      )}
    </Form>
  );
}
