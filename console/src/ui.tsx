// The console's building blocks: data loaded with its error, forms and buttons that say when they are busy or
// failed (role="alert"), labelled fields, a secret shown once, and a public value copied.
import type { ComponentChildren, InputHTMLAttributes, TargetedEvent, TextareaHTMLAttributes } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export interface Loaded<T> {
  data?: T;
  error?: string;
  reload: () => Promise<void>;
}

/** `load` run when `deps` change and on reload(); an answer a newer load overtook is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++latest.current;
    try {
      const data = await load();
      if (mine === latest.current) setState({ data });
    } catch (err) {
      if (mine === latest.current) setState((s) => ({ data: s.data, error: messageOf(err) }));
    }
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { ...state, reload };
}

/** The first load's spinner or error, then the content (a later error shows above it). */
export function Loading<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  const failure = loaded.error && <p role="alert" class="error">{loaded.error}</p>;
  if (loaded.data === undefined) return failure || <p aria-busy="true" class="muted">Loading…</p>;
  return (
    <>
      {failure}
      {children(loaded.data)}
    </>
  );
}

/** Runs one action at a time; its failure is kept to show, cleared by the next run. */
function useRun(act: () => Promise<unknown>): { run: () => Promise<void>; busy: boolean; failed?: string } {
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string>();
  const run = async () => {
    setBusy(true);
    setFailed(undefined);
    try {
      await act();
    } catch (err) {
      setFailed(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, failed };
}

/** A button for an async action; `confirm` asks first (deleting, revoking). */
export function Action({ act, children, label, confirm: question, danger }: { act: () => Promise<unknown>; children: ComponentChildren; label?: string; confirm?: string; danger?: boolean }) {
  const { run, busy, failed } = useRun(act);
  const click = () => (!question || confirm(question)) && void run();
  return (
    <>
      <button type="button" class={danger ? 'danger' : undefined} aria-label={label} aria-busy={busy} disabled={busy} onClick={click}>
        {children}
      </button>
      {failed && <span role="alert" class="error">{failed}</span>}
    </>
  );
}

/** A table row's last cell: the destructive action on that row (delete, revoke, remove), asked first when `confirm`. */
export function RowAction({ act, label, confirm: question, children }: { act: () => Promise<unknown>; label: string; confirm?: string; children: ComponentChildren }) {
  return (
    <td>
      <Action danger label={label} confirm={question} act={act}>
        {children}
      </Action>
    </td>
  );
}

/**
 * A labelled form whose submit runs `submit` with its fields. They stay as typed when it fails; on success they are
 * cleared (a thing created), unless `keep` (filters, an invocation re-run with small changes).
 */
export function Form({ label, submit, children, button, inline, keep }: { label: string; submit: (data: FormData) => Promise<unknown>; children: ComponentChildren; button: string; inline?: boolean; keep?: boolean }) {
  const form = useRef<HTMLFormElement>(null);
  const { run, busy, failed } = useRun(async () => {
    await submit(new FormData(form.current!));
    if (!keep) form.current?.reset();
  });
  const onSubmit = (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    void run();
  };
  return (
    <form ref={form} aria-label={label} class={inline ? 'row' : 'column'} aria-busy={busy} onSubmit={onSubmit}>
      {children}
      <button class="primary" disabled={busy}>
        {button}
      </button>
      {failed && <p role="alert" class="error">{failed}</p>}
    </form>
  );
}

export function Field({ label, ...input }: InputHTMLAttributes<HTMLInputElement> & { label: string; name: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <input {...input} />
    </label>
  );
}

/** A labelled text area; named by aria-label too, as a wrapping label would also count the text typed in it. */
export function TextArea({ label, ...area }: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; name: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <textarea spellcheck={false} aria-label={label} {...area} />
    </label>
  );
}

/**
 * A labelled choice, `initial` chosen first. Uncontrolled: a controlled value would be put back by any re-render
 * (a list loading beside the form) over the person's choice.
 */
export function Select({ label, name, options, initial }: { label: string; name: string; options: readonly string[]; initial?: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <select name={name}>
        {options.map((o) => (
          <option key={o} selected={o === initial}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A secret shown once (a key, an invitation link): selectable, with the warning that it will not be shown again. */
export function Secret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong>: copy it now, it is shown only once.
      </p>
      <output aria-label={label}>{value}</output>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/** How long a copy button says "Copied" before it offers to copy again. */
const COPIED_MS = 2000;

/** A button that copies a public value (a publishable key) to the clipboard, then says so for a moment. */
export function Copy({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), COPIED_MS);
    return () => clearTimeout(t);
  }, [copied]);
  const copy = async () => {
    await navigator.clipboard.writeText(value);
    setCopied(true);
  };
  // The button is named by `label`, so its text's change is also said in a status screen readers announce.
  return (
    <>
      <Action label={label} act={copy}>
        {copied ? 'Copied' : 'Copy'}
      </Action>
      <span role="status" class="visually-hidden">
        {copied ? 'Copied' : ''}
      </span>
    </>
  );
}

/** A form field's text, trimmed; undefined when empty. */
export function text(data: FormData, name: string): string | undefined {
  const v = data.get(name);
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

export const when = (iso: string): string => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A moment's UTC day, YYYY-MM-DD (the API's date parameters and daily series). */
export const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];
/** 1536 as '1.5 KB' (powers of 1024, as the platform's limits are set). */
export function bytes(n: number): string {
  let i = 0;
  while (n >= 1024 && i < UNITS.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${UNITS[i]}`;
}

/** A table with a caption for screen readers and headers for its columns. */
export function Table({ caption, columns, children }: { caption: string; columns: string[]; children: ComponentChildren }) {
  return (
    <table>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" key={c}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
