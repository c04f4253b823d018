// A row's form, by the table's columns: inserting (an empty field takes the column's default) or editing one row by
// its primary key (only changed fields are sent; a field emptied becomes null). Text goes to Postgres as typed, which
// casts it to the column's type; json and jsonb fields are parsed as JSON, arrays too when written as JSON.
import type { TargetedEvent } from 'preact';
import type { Row } from '../../api/data.ts';
import type { TableView } from '../../api/schema.ts';
import { Form } from '../../ui.tsx';

/** What a cell shows and an edit field starts from: JSON for objects and arrays, '' for null. */
export const cellText = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function valueOf(type: string, text: string, column: string): unknown {
  const json = type === 'json' || type === 'jsonb' || (type.endsWith('[]') && text.trimStart().startsWith('['));
  if (!json) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${column} is ${type}: write it as JSON.`);
  }
}

/** The fields that differ from `before` (all filled ones when inserting), as the body of the write. */
function changes(data: FormData, table: TableView, before: Row | undefined): Row {
  const out: Row = {};
  for (const [name, c] of Object.entries(table.columns)) {
    const text = data.get(name);
    if (typeof text !== 'string') continue;
    if (!before) {
      if (text !== '') out[name] = valueOf(c.type, text, name);
    } else if (text !== cellText(before[name])) {
      out[name] = text === '' ? null : valueOf(c.type, text, name);
    }
  }
  return out;
}

const hint = (name: string, table: TableView, inserting: boolean): string | undefined => {
  const c = table.columns[name]!;
  if (inserting && (c.default || c.identity)) return 'default';
  return c.nullable ? 'null' : undefined;
};

export function RowForm({ table, name, row, save, cancel }: { table: TableView; name: string; row?: Row; save: (changes: Row) => Promise<unknown>; cancel: () => void }) {
  const label = row ? `Edit a row of ${name}` : `Insert a row into ${name}`;
  const submit = (data: FormData) => save(changes(data, table, row));
  const escape = (e: TargetedEvent<HTMLDivElement, KeyboardEvent>) => e.key === 'Escape' && cancel();
  return (
    <div class="row-form" onKeyDown={escape}>
      <h3>{label}</h3>
      <Form label={label} button={row ? 'Save row' : 'Insert row'} submit={submit}>
        <div class="fields">
          {Object.entries(table.columns).map(([col, c]) => (
            <label class="field" key={col}>
              <span>
                {col} <span class="muted">{c.type}</span>
              </span>
              <input name={col} defaultValue={row ? cellText(row[col]) : ''} placeholder={hint(col, table, !row)} required={!c.nullable && !c.default && !c.identity && !row} />
            </label>
          ))}
        </div>
      </Form>
      <button type="button" onClick={cancel}>
        Cancel
      </button>
    </div>
  );
}
