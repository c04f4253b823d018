// A value shown as indented JSON (payloads, conditions, bindings), open or collapsed under a summary; a substrate
// action's payload, read in full when the list left it out.
import { useState } from 'preact/hooks';
import { substrate, type SubstrateAction } from './api.ts';
import { messageOf } from './ui.tsx';

export function JsonCode({ value }: { value: unknown }) {
  return (
    <pre class="payload">
      <code>{JSON.stringify(value, null, 2)}</code>
    </pre>
  );
}

/** Collapsed under `summary` until opened. */
export function Json({ summary, value }: { summary: string; value: unknown }) {
  return (
    <details>
      <summary>{summary}</summary>
      <JsonCode value={value} />
    </details>
  );
}

/** Whether the list left the action's payload out (over 8 KB: { omitted, bytes }): GET of the action reads it. */
export const payloadOmitted = (a: SubstrateAction): boolean =>
  typeof a.payload === 'object' && a.payload !== null && (a.payload as { omitted?: unknown }).omitted === true;

/** The payload as collapsed JSON; one the list left out is read in full when opened. */
export function Payload({ action: a }: { action: SubstrateAction }) {
  const omitted = payloadOmitted(a);
  const [full, setFull] = useState<{ payload?: unknown; error?: string }>({});
  const opened = (e: Event) => {
    if (!omitted || full.payload !== undefined || !(e.currentTarget as HTMLDetailsElement).open) return;
    substrate.get(a.action_id).then(
      (got) => setFull({ payload: got.payload }),
      (err: unknown) => setFull({ error: messageOf(err) }),
    );
  };
  const shown = omitted ? full.payload : a.payload;
  return (
    <details onToggle={opened}>
      <summary>Payload</summary>
      {full.error && <p role="alert" class="error">{full.error}</p>}
      {shown === undefined ? (
        <p aria-busy="true" class="muted">Loading…</p>
      ) : (
        <JsonCode value={shown} />
      )}
    </details>
  );
}
