// An app's schema: its tables drawn with their relationships, each table's columns, access and the row-level-security
// policies in force, applying a new definition after reading its dry run (developers), and the migration history.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { accessLabel, schema, type ApplyResult, type SchemaView, type TableView } from '../../api/schema.ts';
import { useCan } from '../../session.ts';
import { Loading, Table, useLoad, when } from '../../ui.tsx';
import { SchemaDiagram } from './schema-diagram.tsx';
import { ApplySchema } from './schema-apply.tsx';

export default function SchemaTab({ app }: AppTabProps) {
  const appId = app.app_id;
  const view = useLoad(() => schema.get(appId), [appId]);
  const migrations = useLoad(() => schema.migrations(appId), [appId]);
  const canApply = useCan('developer');
  const [applied, setApplied] = useState<ApplyResult>();
  const onApplied = async (r: ApplyResult) => {
    setApplied(r);
    await Promise.all([view.reload(), migrations.reload()]);
  };
  return (
    <>
      <h2>Schema</h2>
      <Loading loaded={view}>
        {(v) => (
          <>
            <SchemaDiagram view={v} />
            <Tables view={v} />
            {applied && <Applied result={applied} />}
            {/* Keyed by the live schema: after an apply the editor starts again from what the database now has. */}
            {canApply && <ApplySchema key={JSON.stringify(v)} appId={appId} current={v} onApplied={(r) => void onApplied(r)} />}
          </>
        )}
      </Loading>
      <h3>Migrations</h3>
      <Loading loaded={migrations}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No migration applied yet.</p>
          ) : (
            <Table caption="Migrations" columns={['#', 'Name', 'Applied', 'Statements']}>
              {list.map((m) => (
                <tr key={m.id}>
                  <td>{m.id}</td>
                  <td>
                    {m.name}
                    {m.source && <span class="muted"> (from template {m.source.template_app_id} {m.source.template_version})</span>}
                  </td>
                  <td>{when(m.applied_at)}</td>
                  <td>
                    <details>
                      <summary>{m.statements.length} statements</summary>
                      <ol class="statements">
                        {m.statements.map((s, i) => (
                          <li key={i}>
                            <code>{s}</code>
                          </li>
                        ))}
                      </ol>
                    </details>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
    </>
  );
}

function Applied({ result }: { result: ApplyResult }) {
  return (
    <p role="status" class="applied">
      {result.migration ? `Applied migration ${result.migration.id} (${result.migration.name}): ${result.statements.length} statements.` : 'Nothing changed.'}
    </p>
  );
}

function Tables({ view }: { view: SchemaView }) {
  return (
    <>
      {Object.entries(view.tables).map(([name, t]) => (
        <section key={name} aria-labelledby={`table-${name}`} class="schema-table">
          <h3 id={`table-${name}`}>{name}</h3>
          <p class="muted">
            Access: {accessLabel(t.access)}
            {t.plans && `; plans: ${t.plans.join(', ')}`}
          </p>
          <Columns name={name} table={t} />
          <Policies name={name} table={t} />
        </section>
      ))}
    </>
  );
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

function Columns({ name, table }: { name: string; table: TableView }) {
  return (
    <Table caption={`Columns of ${name}`} columns={['Column', 'Type', 'Nullable', 'Default', 'Primary key', 'References']}>
      {Object.entries(table.columns).map(([col, c]) => (
        <tr key={col}>
          <td>
            <code>{col}</code>
          </td>
          <td>
            {c.type}
            {c.enum && <span class="muted"> ({c.enum.join(', ')})</span>}
          </td>
          <td>{yes(c.nullable)}</td>
          <td>{c.identity ? 'identity' : c.default ? <code>{c.default}</code> : ''}</td>
          <td>{yes(c.primary)}</td>
          <td>{c.references ? `${c.references.table}.${c.references.column}${c.references.onDelete ? ` (on delete ${c.references.onDelete})` : ''}` : ''}</td>
        </tr>
      ))}
    </Table>
  );
}

function Policies({ name, table }: { name: string; table: TableView }) {
  if (table.policies.length === 0) return <p class="muted">No row-level-security policy.</p>;
  return (
    <Table caption={`Policies of ${name}`} columns={['Policy', 'Command', 'Roles', 'Using', 'With check']}>
      {table.policies.map((p) => (
        <tr key={p.name}>
          <td>
            <code>{p.name}</code>
            {!p.permissive && <span class="badge">restrictive</span>}
          </td>
          <td>{p.command}</td>
          <td>{p.roles.join(', ')}</td>
          <td>{p.using && <code>{p.using}</code>}</td>
          <td>{p.with_check && <code>{p.with_check}</code>}</td>
        </tr>
      ))}
    </Table>
  );
}
