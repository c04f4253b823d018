// Pins names to schema public by splicing `public.` into the author's own text at the parser's byte offsets (not by
// deparsing: both deparsers measured break valid SQL, docs/design/schema-functions.md §2), then proves the splice:
// the new text is parsed again and its tree must equal the checked tree with exactly the recorded changes. What
// Postgres runs is what was checked; anything else is refused (fail closed).
import { errors } from '../../core/errors.ts';
import type { Site } from './walker.ts';
import { isComment, reparse, type Token } from './parser.ts';
import { canonical } from './tree.ts';

/**
 * Sites that replace each comment with one space: the output keeps the author's layout but no comment, so no `--`
 * comment at the end can swallow what the caller writes after the SQL (the `)` of a policy, the END of a function).
 */
export function commentSites(tokens: readonly Token[]): Site[] {
  return tokens.filter(isComment).map((t) => ({ at: t.start, cut: t.end - t.start, text: ' ' }));
}

/** The text of bytes[from, to) with the sites in that span applied. Overlapping sites are a bug: refused. */
export function splice(bytes: Buffer, sites: readonly Site[], from: number, to: number, label: string): string {
  // At one offset an insertion goes before a replacement (auth.uid()'s ')' before a comment right after it).
  const inside = sites.filter((s) => s.at >= from && s.at <= to).sort((a, b) => a.at - b.at || a.cut - b.cut);
  const pieces: Buffer[] = [];
  let at = from;
  for (const [i, site] of inside.entries()) {
    const previous = inside[i - 1];
    // Two insertions at one place, or a change inside another's cut, have no single right order.
    if (previous && ((site.at === previous.at && site.cut === 0) || site.at < at)) throw unprovable(label);
    pieces.push(bytes.subarray(at, site.at), Buffer.from(site.text, 'utf8'));
    at = site.at + site.cut;
  }
  pieces.push(bytes.subarray(at, to));
  return Buffer.concat(pieces).toString('utf8');
}

/** Refuses unless `source` parses to exactly the statements `checked` (after their recorded changes). */
export function proveSame(checked: readonly unknown[], source: string, label: string): void {
  const again = reparse(source, label).map((s) => s.stmt);
  if (canonical(again) !== canonical(checked)) throw unprovable(label);
}

function unprovable(label: string) {
  return errors.validation(`${label}: the SQL could not be pinned to the app's schema without changing its meaning; write it more plainly (and report it with POST /suggestions).`);
}
