import { addCompany, companies, enrichCompany } from '../api/contacts.ts';
import { useCurrent } from '../context.ts';
import { Action, Field, Form, Page, Show, useLoad, value, when, Head } from '../ui.tsx';

export function Companies() {
  const { workspace } = useCurrent();
  const loaded = useLoad(() => companies(workspace.id), [workspace.id]);
  return (
    <Page title="Companies">
      <details class="add">
        <summary>Add a company</summary>
        <Form
          label="Add a company"
          done="Company added."
          onSubmit={async (d) => {
            await addCompany(workspace.id, { name: value(d, 'name') ?? '', domain: value(d, 'domain') ?? null });
            await loaded.reload();
          }}
        >
          <Field label="Name" name="name" required maxLength={200} />
          <Field label="Domain" name="domain" placeholder="example.com" />
          <button class="primary">Add</button>
        </Form>
      </details>
      <Show loaded={loaded}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No companies yet.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Companies of the workspace</caption>
              <Head columns={['Name', 'Domain', 'Industry', 'Size', 'Location', 'Enriched']} actions />
              <tbody>
                {list.map((c) => (
                  <tr key={c.id}>
                    <th scope="row">{c.name}</th>
                    <td>{c.domain ?? ''}</td>
                    <td>{c.industry ?? ''}</td>
                    <td>{c.size ?? ''}</td>
                    <td>{c.location ?? ''}</td>
                    <td>{c.enriched_at ? when(c.enriched_at) : <span class="muted">never</span>}</td>
                    <td class="row-actions">
                      <Action label={`Enrich ${c.name}`} done={`${c.name} enriched.`} onAction={async () => (await enrichCompany(c.id), await loaded.reload())}>
                        Enrich
                      </Action>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </Page>
  );
}
