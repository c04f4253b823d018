import type { Citation } from '../types.ts';

const KIND: Record<string, string> = { note: 'note', email: 'e-mail', meeting: 'meeting', call: 'call', transcript: 'transcript' };

/** Passages an answer or a search cites, numbered as the answer refers to them. */
export function Citations({ list }: { list: Citation[] }) {
  return (
    <ol class="citations">
      {list.map((c, i) => (
        <li key={`${c.n ?? i}-${c.activity_id ?? c.meeting_id ?? i}`} value={c.n ?? i + 1}>
          <span class="badge">{KIND[c.kind ?? ''] ?? c.kind ?? 'source'}</span> {c.snippet ?? ''}
          {c.contact_id && (
            <>
              {' '}
              <a href={`#/timeline/${encodeURIComponent(`contact:${c.contact_id}`)}`}>contact</a>
            </>
          )}
          {c.deal_id && (
            <>
              {' '}
              <a href={`#/timeline/${encodeURIComponent(`deal:${c.deal_id}`)}`}>deal</a>
            </>
          )}
        </li>
      ))}
    </ol>
  );
}
