import { draft, posts, schedule } from '../api/social.ts';
import { useCurrent } from '../context.ts';
import type { SocialPost } from '../types.ts';
import { Area, Choice, Field, Form, Page, Show, useLoad, value, when } from '../ui.tsx';

/** A local datetime-local value an hour from now, the default of a schedule. */
function inAnHour(): string {
  const d = new Date(Date.now() + 3_600_000);
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
}

export function Social() {
  const { workspace } = useCurrent();
  const loaded = useLoad(() => posts(workspace.id), [workspace.id]);
  return (
    <Page title="Social posts">
      <Form
        label="Draft a post"
        done="Draft written."
        onSubmit={async (d) => {
          await draft(workspace.id, value(d, 'topic') ?? '', (value(d, 'network') ?? 'linkedin') as SocialPost['network']);
          await loaded.reload();
        }}
      >
        <Field label="Topic" name="topic" required size={40} />
        <Choice
          label="Network"
          name="network"
          options={[
            ['linkedin', 'LinkedIn'],
            ['twitter', 'X / Twitter'],
          ]}
        />
        <button class="primary">Draft with AI</button>
      </Form>
      <Show loaded={loaded}>
        {(list) => (
          <ul class="list posts">
            {list.map((p) => (
              <li key={p.id}>
                <p>
                  <span class="badge">{p.network}</span> <span class="badge">{p.status}</span> {p.topic && <span class="muted">{p.topic}</span>}
                  {p.scheduled_at && <span class="muted"> · {p.status === 'published' ? `published ${when(p.published_at)}` : `scheduled ${when(p.scheduled_at)}`}</span>}
                  {p.error && <span class="muted"> · {p.error}</span>}
                </p>
                {p.status === 'draft' || p.status === 'scheduled' || p.status === 'failed' ? (
                  <Form
                    label={`Schedule the post about ${p.topic ?? 'this'}`}
                    class="stack"
                    done="Post scheduled."
                    onSubmit={async (d) => {
                      await schedule(p.id, new Date(value(d, 'at') ?? '').toISOString(), value(d, 'body') ?? p.body);
                      await loaded.reload();
                    }}
                  >
                    <Area label="Text" name="body" rows={4} defaultValue={p.body} required />
                    <Field label="Publish at" name="at" type="datetime-local" required defaultValue={inAnHour()} />
                    <button>Schedule</button>
                  </Form>
                ) : (
                  <p class="prewrap">{p.body}</p>
                )}
              </li>
            ))}
            {!list.length && <li class="muted">No posts yet.</li>}
          </ul>
        )}
      </Show>
    </Page>
  );
}
