// Small pieces every page uses: loading data with its error, buttons that show they are busy, labelled fields, and
// one polite live region for what just happened.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TargetedEvent, TextareaHTMLAttributes } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api/errors.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Runs `load` when `deps` change and on reload(); an answer overtaken by a newer load is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: null, loading: false });
    } catch (err) {
      if (mine === seq.current) setState((s) => ({ ...s, error: messageOf(err), loading: false }));
    }
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { ...state, reload };
}

type Notice = { id: number; text: string; kind: 'ok' | 'error' };
const noticeListeners = new Set<(n: Notice[]) => void>();
let notices: Notice[] = [];
let nextNotice = 0;

/** Tells the user what happened (announced to screen readers), gone after a few seconds. */
export function notify(text: string, kind: Notice['kind'] = 'ok'): void {
  const n = { id: ++nextNotice, text, kind };
  notices = [...notices, n].slice(-4);
  for (const l of noticeListeners) l(notices);
  setTimeout(() => {
    notices = notices.filter((x) => x !== n);
    for (const l of noticeListeners) l(notices);
  }, kind === 'error' ? 8000 : 4000);
}

export function Notices() {
  const [list, setList] = useState(notices);
  useEffect(() => {
    noticeListeners.add(setList);
    return () => void noticeListeners.delete(setList);
  }, []);
  return (
    <div class="notices" role="status" aria-live="polite">
      {list.map((n) => (
        <p key={n.id} class={`notice ${n.kind}`}>
          {n.text}
        </p>
      ))}
    </div>
  );
}

/** Runs an action once at a time: busy while it runs, its failure told to the user. */
export function useAction<A extends unknown[]>(act: (...args: A) => Promise<unknown>, done?: string): [(...args: A) => Promise<void>, boolean] {
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    try {
      await act(...args);
      if (done) notify(done);
    } catch (err) {
      notify(messageOf(err), 'error');
    } finally {
      setBusy(false);
    }
  };
  return [run, busy];
}

interface ActionProps {
  onAction: () => Promise<unknown>;
  children: ComponentChildren;
  done?: string;
  class?: string;
  label?: string;
  disabled?: boolean;
}

/** A button running an async action, disabled and marked busy meanwhile. */
export function Action({ onAction, children, done, class: cls, label, disabled }: ActionProps) {
  const [run, busy] = useAction(onAction, done);
  return (
    <button type="button" class={cls} aria-label={label} aria-busy={busy} disabled={busy || disabled} onClick={() => void run()}>
      {busy ? '…' : children}
    </button>
  );
}

/** A form whose submit runs an async action; the fields stay as typed when it fails. */
export function Form({ onSubmit, children, label, class: cls, done }: { onSubmit: (data: FormData, form: HTMLFormElement) => Promise<unknown>; children: ComponentChildren; label: string; class?: string; done?: string }) {
  const [run, busy] = useAction(async (form: HTMLFormElement) => {
    await onSubmit(new FormData(form), form);
    form.reset();
  }, done);
  const submit = (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    void run(e.currentTarget);
  };
  return (
    <form class={cls ?? 'inline'} aria-label={label} aria-busy={busy} onSubmit={submit}>
      <fieldset disabled={busy}>{children}</fieldset>
    </form>
  );
}

type InputProps = InputHTMLAttributes<HTMLInputElement> & { label: string; name: string };

export function Field({ label, ...input }: InputProps) {
  return (
    <label class="field">
      <span>{label}</span>
      <input {...input} />
    </label>
  );
}

export function Area({ label, ...input }: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; name: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <textarea {...input} />
    </label>
  );
}

export function Choice({ label, options, ...select }: SelectHTMLAttributes<HTMLSelectElement> & { label: string; name: string; options: Array<[string, string]> }) {
  return (
    <label class="field">
      <span>{label}</span>
      <select {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A page's data: a spinner while the first load runs, its error with a retry, then the content. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error && loaded.data === undefined) {
    return (
      <div class="error" role="alert">
        <p>{loaded.error}</p>
        <button type="button" onClick={() => void loaded.reload()}>
          Try again
        </button>
      </div>
    );
  }
  if (loaded.data === undefined) return <p class="muted" aria-busy="true">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

export function Page({ title, actions, children }: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** A table's header row; `actions` adds a last column for row buttons, named for screen readers only. */
export function Head({ columns, actions }: { columns: string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—');

export const money = (amount: number | string, currency = 'USD'): string =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency, maximumFractionDigits: 0 }).format(Number(amount) || 0);

/** A form field's text, trimmed; undefined when empty. */
export function value(data: FormData, name: string): string | undefined {
  const v = data.get(name);
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}
