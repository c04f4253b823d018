// The table editor's filters, written in the data API's own dialect: a column, an operator and a value make
// `column=op.value`, shown as the query string the page sends so the person can reuse it with any client.
import { OPERATORS, filterValue, type Filter, type Operator } from '../../api/data.ts';
import { Field, Form, Select, text } from '../../ui.tsx';

export function Filters({ columns, filters, onChange }: { columns: string[]; filters: readonly Filter[]; onChange: (f: Filter[]) => void }) {
  const add = async (d: FormData) => {
    const column = text(d, 'column');
    if (!column) return;
    onChange([...filters, { column, op: (text(d, 'op') ?? 'eq') as Operator, value: (d.get('value') as string | null) ?? '' }]);
  };
  return (
    <>
      <Form label="Add a filter" button="Add filter" inline submit={add}>
        <Select label="Column" name="column" options={columns} />
        <Select label="Operator" name="op" options={OPERATORS} initial="eq" />
        <Field label="Value" name="value" placeholder="e.g. 42, *text*, null, (a,b)" />
      </Form>
      {filters.length > 0 && (
        <ul class="filters" aria-label="Filters">
          {filters.map((f, i) => (
            <li key={i}>
              <code>
                {f.column}={filterValue(f)}
              </code>
              <button type="button" class="link" aria-label={`Remove filter ${f.column}=${filterValue(f)}`} onClick={() => onChange(filters.filter((_, j) => j !== i))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
