// Blocks the Functions, Sites and Files tabs share: a labelled text area, a form that keeps what was typed (an
// invocation is re-run with small changes), name/value lines, a file picker's file, and byte counts for people.
import type { ComponentChildren, TargetedEvent, TextareaHTMLAttributes } from 'preact';
import { useRef, useState } from 'preact/hooks';
import { messageOf } from '../../ui.tsx';

/** A labelled text area; named by aria-label too, as a wrapping label would also count the text typed in it. */
export function TextArea({ label, ...area }: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; name: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      <textarea spellcheck={false} aria-label={label} {...area} />
    </label>
  );
}

/** A labelled form whose fields stay as typed after `submit` (ui.tsx's Form clears them on success). */
export function StickyForm({ label, submit, button, children }: { label: string; submit: (data: FormData) => Promise<unknown>; button: string; children: ComponentChildren }) {
  const form = useRef<HTMLFormElement>(null);
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState<string>();
  const onSubmit = async (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    setBusy(true);
    setFailed(undefined);
    try {
      await submit(new FormData(form.current!));
    } catch (err) {
      setFailed(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form ref={form} aria-label={label} class="column" aria-busy={busy} onSubmit={(e) => void onSubmit(e)}>
      {children}
      <button class="primary" disabled={busy}>
        {button}
      </button>
      {failed && <p role="alert" class="error">{failed}</p>}
    </form>
  );
}

/** Lines of `name<sep>value` (headers, variables) as a map; a line without the separator is an error the person sees. */
export function pairLines(raw: string | undefined, sep: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of (raw ?? '').split('\n').filter((l) => l.trim())) {
    const at = line.indexOf(sep);
    if (at < 1) throw new Error(`A ${what} is "name${sep}value"; this line is not: ${line}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** The file a form's file input holds, if any. */
export function fileOf(data: FormData, name: string): File | undefined {
  const f = data.get(name);
  return f instanceof File && f.name ? f : undefined;
}

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
