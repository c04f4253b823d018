import { addContact, companies, contacts, enrichContact, findEmail } from '../api/contacts.ts';
import { useCurrent } from '../context.ts';
import { Action, Choice, Field, Form, Page, Show, useLoad, value, when, Head } from '../ui.tsx';

const EMAIL_STATUS: Record<string, string> = { unknown: '', pending: 'looking up…', found: 'found', not_found: 'not found' };

export function Contacts() {
  const { workspace } = useCurrent();
  const loaded = useLoad(async () => {
    const [people, firms] = await Promise.all([contacts(workspace.id), companies(workspace.id)]);
    return { people, firms: new Map(firms.map((f) => [f.id, f])) };
  }, [workspace.id]);
  return (
    <Page title="Contacts">
      <Show loaded={loaded}>
        {({ people, firms }) => (
          <>
            <details class="add">
              <summary>Add a contact</summary>
              <Form
                label="Add a contact"
                done="Contact added."
                onSubmit={async (d) => {
                  await addContact(workspace.id, {
                    full_name: value(d, 'full_name') ?? '',
                    email: value(d, 'email') ?? null,
                    title: value(d, 'title') ?? null,
                    linkedin_url: value(d, 'linkedin_url') ?? null,
                    company_id: value(d, 'company_id') ?? null,
                  });
                  await loaded.reload();
                }}
              >
                <Field label="Name" name="full_name" required maxLength={200} />
                <Field label="E-mail" name="email" type="email" />
                <Field label="Title" name="title" />
                <Field label="LinkedIn URL" name="linkedin_url" type="url" />
                <Choice label="Company" name="company_id" options={[['', '—'], ...[...firms.values()].map((f): [string, string] => [f.id, f.name])]} />
                <button class="primary">Add</button>
              </Form>
            </details>
            {people.length === 0 ? (
              <p class="muted">No contacts yet: add one, import them, or save leads from a search.</p>
            ) : (
              <table>
                <caption class="visually-hidden">Contacts of the workspace</caption>
                <Head columns={['Name', 'Title', 'Company', 'E-mail', 'Enriched']} actions />
                <tbody>
                  {people.map((c) => (
                    <tr key={c.id}>
                      <th scope="row">
                        <a href={`#/timeline/${encodeURIComponent(`contact:${c.id}`)}`}>{c.full_name}</a>
                      </th>
                      <td>{c.title ?? ''}</td>
                      <td>{(c.company_id && firms.get(c.company_id)?.name) ?? ''}</td>
                      <td>
                        {c.email ?? ''} <span class="muted">{EMAIL_STATUS[c.email_status]}</span>
                      </td>
                      <td>{c.enriched_at ? when(c.enriched_at) : <span class="muted">never</span>}</td>
                      <td class="row-actions">
                        <Action label={`Enrich ${c.full_name}`} done={`${c.full_name} enriched.`} onAction={async () => (await enrichContact(c.id), await loaded.reload())}>
                          Enrich
                        </Action>
                        {!c.email && c.email_status !== 'pending' && (
                          <Action label={`Find the e-mail of ${c.full_name}`} done="E-mail lookup started." onAction={async () => (await findEmail(c.id), await loaded.reload())}>
                            Find e-mail
                          </Action>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Show>
    </Page>
  );
}
