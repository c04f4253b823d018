// Applying a schema: the definition as JSON text (the live one to start from), its dry run's SQL read first, and
// Apply enabled only for the very text that was dry-run (any edit disables it again until the next dry run).
import { useState } from 'preact/hooks';
import { schema, type ApplyResult, type SchemaView } from '../../api/schema.ts';
import { Action, messageOf } from '../../ui.tsx';

/** The live schema as the text to edit: policies left out, since they follow from access and are not applied. */
const editable = (view: SchemaView): string =>
  JSON.stringify({ tables: Object.fromEntries(Object.entries(view.tables).map(([name, { policies: _, ...table }]) => [name, table])) }, null, 2);

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The schema is not valid JSON: ${messageOf(err)}`);
  }
}

export function ApplySchema({ appId, current, onApplied }: { appId: string; current: SchemaView; onApplied: (r: ApplyResult) => void }) {
  const [text, setText] = useState(() => editable(current));
  const [name, setName] = useState('');
  const [dry, setDry] = useState<{ text: string; statements: string[] }>();
  const dryRun = async () => {
    setDry(undefined);
    const r = await schema.apply(appId, parse(text), true);
    setDry({ text, statements: r.statements });
  };
  const apply = async () => onApplied(await schema.apply(appId, parse(text), false, name.trim() || undefined));
  const ready = !!dry && dry.text === text && dry.statements.length > 0;
  return (
    <section aria-labelledby="apply-title">
      <h3 id="apply-title">Apply a schema</h3>
      <p class="muted">
        Tables and columns left out are kept; <code>"_drop": true</code> removes a table, <code>"_dropColumns"</code> columns. Read the dry run's SQL, then apply
        exactly that text.
      </p>
      <label class="field">
        <span>Schema JSON</span>
        <textarea class="schema-text" rows={18} spellcheck={false} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <div class="row">
        <label class="field">
          <span>Migration name</span>
          <input value={name} maxLength={200} placeholder="unnamed" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <Action act={dryRun}>Dry run</Action>
        {ready ? (
          <Action act={apply}>Apply</Action>
        ) : (
          <button type="button" disabled>
            Apply
          </button>
        )}
      </div>
      {dry && <DryRun statements={dry.statements} stale={dry.text !== text} />}
    </section>
  );
}

function DryRun({ statements, stale }: { statements: string[]; stale: boolean }) {
  return (
    <div role="status">
      <h4>Dry run{stale && ' (of an earlier text: run it again to apply)'}</h4>
      {statements.length === 0 ? (
        <p>Nothing to change: the database already has this schema.</p>
      ) : (
        <ol aria-label="Dry-run statements" class="statements">
          {statements.map((s, i) => (
            <li key={i}>
              <code>{s}</code>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
