// Pieces the substrate tabs share: paging through a list by its next_before cursor, a filter form that keeps what was
// typed, a JSON object read from a form field, and who proposed an action.
import type { ComponentChildren, TargetedEvent } from 'preact';
import type { SubstrateAction } from '../../api.ts';
import type { Page } from '../../api/substrate.ts';
import { useCursors } from '../../pager.tsx';
import { useLoad, type Loaded } from '../../ui.tsx';

export interface Pages<T, P extends Page<T> = Page<T>> {
  loaded: Loaded<P>;
  /** Pages read before this one (0: the newest). */
  depth: number;
  older: () => void;
  newer: () => void;
}

/**
 * One page of a newest-first list at a time: Older follows the page's next_before, Newer goes back (the cursors seen
 * are kept). Filters are the caller's props: it renders the list under a `key` made of them, so new filters start
 * over at the newest page.
 */
export function useCursorPages<T, P extends Page<T> = Page<T>>(load: (before: string | undefined) => Promise<P>): Pages<T, P> {
  const cursors = useCursors();
  const loaded = useLoad(() => load(cursors.before), [cursors.before]);
  return {
    loaded,
    depth: cursors.depth,
    older: () => loaded.data?.next_before && cursors.on(loaded.data.next_before),
    newer: () => cursors.back?.(),
  };
}

export function Pager<T, P extends Page<T>>({ pages, label }: { pages: Pages<T, P>; label: string }) {
  const next = pages.loaded.data?.next_before;
  if (!pages.depth && !next) return null;
  return (
    <nav class="row pager" aria-label={`${label} pages`}>
      <button type="button" disabled={!pages.depth} onClick={pages.newer}>
        Newer
      </button>
      <span class="muted">Page {pages.depth + 1}</span>
      <button type="button" disabled={!next} onClick={pages.older}>
        Older
      </button>
    </nav>
  );
}

/** A filter form: applying it keeps the fields as typed (unlike ui.tsx's Form, which resets after a write). */
export function Filters({ label, apply, children }: { label: string; apply: (data: FormData) => void; children: ComponentChildren }) {
  const submit = (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    apply(new FormData(e.currentTarget));
  };
  return (
    <form aria-label={label} class="row" onSubmit={submit}>
      {children}
      <button>Apply</button>
    </form>
  );
}

/** A JSON object typed in a form field; an error naming the field when it is not one. Undefined when left empty. */
export function jsonField(data: FormData, name: string, label: string): Record<string, unknown> | undefined {
  const raw = data.get(name);
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${label} is not valid JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${label} must be a JSON object.`);
  return value as Record<string, unknown>;
}

/** Who proposed: a rule or an app (agents of the person), else the person or an agent. */
export function proposerOf(a: Pick<SubstrateAction, 'proposer_kind' | 'source_app_id' | 'source_rule_id'>): string {
  if (a.source_rule_id) return `rule ${a.source_rule_id}`;
  if (a.source_app_id) return `app ${a.source_app_id}`;
  return a.proposer_kind === 'agent' ? 'agent' : 'person';
}
