// The CRM agent: the answer appears token by token as agent-chat streams it, then the passages it cites.
import { useRef, useState } from 'preact/hooks';
import { ask, history, type ChatMessage } from '../api/chat.ts';
import { messageOf } from '../api/errors.ts';
import { useCurrent } from '../context.ts';
import type { Citation } from '../types.ts';
import { Page, Show, useLoad } from '../ui.tsx';
import { Citations } from './citations.tsx';

interface Turn {
  question: string;
  answer: string;
  citations: Citation[];
  state: 'streaming' | 'done' | 'failed';
  error?: string;
}

export function Chat() {
  const { workspace, user } = useCurrent();
  const past = useLoad(() => history(workspace.id, user.id), [workspace.id, user.id]);
  const [turn, setTurn] = useState<Turn | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  const send = async (question: string) => {
    let current: Turn = { question, answer: '', citations: [], state: 'streaming' };
    const update = (patch: Partial<Turn>) => setTurn((current = { ...current, ...patch }));
    update({});
    try {
      await ask(workspace.id, question, {
        token: (t) => update({ answer: current.answer + t }),
        citations: (list) => update({ citations: list }),
      });
      update({ state: 'done' });
      await past.reload();
      setTurn(null);
    } catch (err) {
      update({ state: 'failed', error: messageOf(err) });
    }
  };

  const streaming = turn?.state === 'streaming';
  return (
    <Page title="Agent">
      <p class="muted">Ask about your contacts, deals, notes, e-mails and meetings. Answers cite what they draw on.</p>
      <div class="chat" aria-live="polite" aria-busy={streaming}>
        <Show loaded={past}>{(messages) => <>{messages.map((m) => <Bubble key={m.id} message={m} />)}</>}</Show>
        {turn && (
          <>
            <Bubble message={{ id: 'q', role: 'user', content: turn.question, citations: null, created_at: '' }} />
            <div class={`bubble assistant${streaming ? ' streaming' : ''}`} data-testid="streaming-answer">
              <p class="prewrap">{turn.answer || (streaming ? 'Thinking…' : '')}</p>
              {turn.citations.length > 0 && <Citations list={turn.citations} />}
              {turn.error && (
                <p class="error" role="alert">
                  {turn.error}
                </p>
              )}
            </div>
          </>
        )}
      </div>
      <form
        class="stack"
        aria-label="Ask the agent"
        onSubmit={(e) => {
          e.preventDefault();
          const q = input.current?.value.trim();
          if (!q || streaming) return;
          input.current!.value = '';
          void send(q);
        }}
      >
        <label class="field">
          <span>Message</span>
          <textarea
            ref={input}
            name="message"
            rows={3}
            required
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                e.currentTarget.form?.requestSubmit();
              }
            }}
          />
        </label>
        <button class="primary" disabled={streaming}>
          {streaming ? 'Answering…' : 'Send'}
        </button>
      </form>
    </Page>
  );
}

function Bubble({ message }: { message: ChatMessage }) {
  return (
    <div class={`bubble ${message.role}`}>
      <span class="visually-hidden">{message.role === 'user' ? 'You:' : 'Agent:'}</span>
      <p class="prewrap">{message.content}</p>
      {message.citations?.length ? <Citations list={message.citations} /> : null}
    </div>
  );
}
