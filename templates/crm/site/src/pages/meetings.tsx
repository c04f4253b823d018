import { contacts } from '../api/contacts.ts';
import { book, leave, meetings, sendBot, summarize } from '../api/meetings.ts';
import { useCurrent } from '../context.ts';
import type { Meeting } from '../types.ts';
import { Action, Choice, Field, Form, Page, Show, useLoad, value, when } from '../ui.tsx';

/** A bot is in (or on its way to) the meeting until it is done or failed. */
const botActive = (m: Meeting) => Boolean(m.bot_id) && !/done|fatal|failed|left|ended/i.test(m.bot_status ?? '');

export function Meetings() {
  const { workspace } = useCurrent();
  const loaded = useLoad(async () => {
    const [list, people] = await Promise.all([meetings(workspace.id), contacts(workspace.id)]);
    return { list, people };
  }, [workspace.id]);
  const act = (run: () => Promise<unknown>) => async () => (await run(), await loaded.reload());
  return (
    <Page title="Meetings">
      <Show loaded={loaded}>
        {({ list, people }) => (
          <>
            <details class="add">
              <summary>Book a meeting</summary>
              <Form
                label="Book a meeting"
                done="Meeting booked on your calendar."
                onSubmit={async (d) => {
                  const at = (name: string) => new Date(value(d, name) ?? '').toISOString();
                  await book({ contact_id: value(d, 'contact_id') ?? '', title: value(d, 'title') ?? '', starts_at: at('starts_at'), ends_at: at('ends_at') });
                  await loaded.reload();
                }}
              >
                <Choice label="With" name="contact_id" required options={people.map((c): [string, string] => [c.id, c.full_name])} />
                <Field label="Title" name="title" required />
                <Field label="Starts" name="starts_at" type="datetime-local" required />
                <Field label="Ends" name="ends_at" type="datetime-local" required />
                <button class="primary">Book</button>
              </Form>
            </details>
            {list.length === 0 && <p class="muted">No meetings yet: turn on calendar sync on the Workspace page, or book one.</p>}
            <ul class="list meetings">
              {list.map((m) => (
                <li key={m.id}>
                  <h2>{m.title}</h2>
                  <p class="muted">
                    {when(m.starts_at)}
                    {m.bot_status && ` · bot ${m.bot_status}`}
                    {m.meeting_url && (
                      <>
                        {' · '}
                        <a href={m.meeting_url} target="_blank" rel="noreferrer">
                          join link
                        </a>
                      </>
                    )}
                  </p>
                  <div class="row-actions">
                    {m.meeting_url && !botActive(m) && (
                      <Action label={`Send a bot to ${m.title}`} done="Bot on its way." onAction={act(() => sendBot(m.id))}>
                        Send bot
                      </Action>
                    )}
                    {botActive(m) && (
                      <Action label={`Make the bot leave ${m.title}`} done="The bot is leaving." onAction={act(() => leave(m.id))}>
                        Bot leave
                      </Action>
                    )}
                    {m.transcript_text && (
                      <Action label={`Summarize ${m.title}`} done="Summary written." onAction={act(() => summarize(m.id))}>
                        {m.summary ? 'Summarize again' : 'Summarize'}
                      </Action>
                    )}
                  </div>
                  {m.summary && (
                    <section aria-label={`Summary of ${m.title}`}>
                      <h3>Summary</h3>
                      <p class="prewrap">{m.summary}</p>
                    </section>
                  )}
                  {m.transcript_text && (
                    <details>
                      <summary>Transcript</summary>
                      <p class="prewrap">{m.transcript_text}</p>
                    </details>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
      </Show>
    </Page>
  );
}
