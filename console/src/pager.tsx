// Paging by cursor (`before` in, the next page's cursor out): the cursors of the pages opened so far, so that the
// person can step back as well as on, and the buttons that do it.
import { useState } from 'preact/hooks';

export interface Cursors {
  /** The cursor of the page shown (undefined: the first page). */
  before: string | undefined;
  /** Pages opened before the one shown (0: the first page). */
  depth: number;
  back?: () => void;
  on: (next: string) => void;
  /** Back to the first page (a new filter). */
  reset: () => void;
}

export function useCursors(): Cursors {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  return {
    before: cursors.at(-1),
    depth: cursors.length - 1,
    back: cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : undefined,
    on: (next) => setCursors([...cursors, next]),
    reset: () => setCursors([undefined]),
  };
}

/** "Previous" and "Next" buttons of a list named `label`; `next` is the following page's cursor (none: the last page). */
export function Pager({ label, cursors, next }: { label: string; cursors: Cursors; next: string | null | undefined }) {
  if (!cursors.back && !next) return null;
  return (
    <div class="row" role="group" aria-label={`Pages of ${label}`}>
      {cursors.back && (
        <button type="button" onClick={cursors.back}>
          Previous page
        </button>
      )}
      {next && (
        <button type="button" onClick={() => cursors.on(next)}>
          Next page
        </button>
      )}
    </div>
  );
}
