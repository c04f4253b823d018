// Lead search by the people vendor: each search says what it cost; chosen people are saved as contacts on a lead list.
import { useState } from 'preact/hooks';
import { enrichList, exportList, lists, save, searchCompanies, searchPeople, type CompanyLead, type Found, type PersonLead } from '../api/leads.ts';
import { useCurrent } from '../context.ts';
import { Action, Choice, Field, Form, Page, Show, useLoad, value, when, Head } from '../ui.tsx';

type Results = { kind: 'people'; found: Found<PersonLead> } | { kind: 'companies'; found: Found<CompanyLead> };

export function Leads() {
  const { workspace } = useCurrent();
  const [results, setResults] = useState<Results | null>(null);
  const leadLists = useLoad(() => lists(workspace.id), [workspace.id]);
  return (
    <Page title="Lead search">
      <Form
        label="Search leads"
        onSubmit={async (d) => {
          const q = value(d, 'query') ?? '';
          setResults(value(d, 'kind') === 'companies' ? { kind: 'companies', found: await searchCompanies(workspace.id, q) } : { kind: 'people', found: await searchPeople(workspace.id, q) });
        }}
      >
        <Field label="Who are you looking for?" name="query" type="search" required placeholder="VP of sales at fintech startups in Berlin" size={40} />
        <Choice
          label="Search"
          name="kind"
          options={[
            ['people', 'People'],
            ['companies', 'Companies'],
          ]}
        />
        <button class="primary">Search</button>
      </Form>
      {results && (
        <p class="muted" role="status">
          {results.found.total} found · this search cost {results.found.credits} credit{results.found.credits === 1 ? '' : 's'}
        </p>
      )}
      {results?.kind === 'people' && <People found={results.found} onSaved={leadLists.reload} />}
      {results?.kind === 'companies' && <Companies found={results.found} />}
      <h2>Lead lists</h2>
      <Show loaded={leadLists}>
        {(all) =>
          all.length ? (
            <ul class="list">
              {all.map((l) => (
                <li key={l.id}>
                  <strong>{l.name}</strong> <span class="muted">{when(l.created_at)} · {Number(l.credits_spent)} credits</span>
                  <span class="row-actions">
                    <Action label={`Find e-mails for ${l.name}`} done="E-mail lookups queued." onAction={() => enrichList(l.id)}>
                      Find e-mails
                    </Action>
                    <Action label={`Export ${l.name} as CSV`} onAction={async () => download(`${l.name}.csv`, await exportList(l.id))}>
                      Export CSV
                    </Action>
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">Save people from a search to make a list.</p>
          )
        }
      </Show>
    </Page>
  );
}

function People({ found, onSaved }: { found: Found<PersonLead>; onSaved: () => Promise<void> }) {
  const { workspace } = useCurrent();
  return (
    <Form
      label="Save leads"
      class="stack"
      done="Leads saved as contacts."
      onSubmit={async (d) => {
        const chosen = d.getAll('pick').map((i) => found.results[Number(i)]!);
        await save(workspace.id, chosen, value(d, 'list_name') ?? 'Leads');
        await onSaved();
      }}
    >
      <table>
        <Head columns={['Save', 'Name', 'Title', 'Company', 'Location']} />
        <tbody>
          {found.results.map((p, i) => (
            <tr key={p.linkedin_url ?? i}>
              <td>
                <input type="checkbox" name="pick" value={String(i)} aria-label={`Save ${p.full_name}`} disabled={Boolean(p.contact_id)} />
              </td>
              <th scope="row">
                {p.full_name} {p.contact_id && <span class="badge">saved</span>}
              </th>
              <td>{p.title ?? ''}</td>
              <td>{p.company ?? ''}</td>
              <td>{p.location ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Field label="Lead list" name="list_name" required defaultValue="New leads" />
      <button class="primary">Save chosen as contacts</button>
    </Form>
  );
}

function Companies({ found }: { found: Found<CompanyLead> }) {
  return (
    <ul class="list">
      {found.results.map((c, i) => (
        <li key={c.linkedin_url ?? c.domain ?? i}>
          <strong>{c.name ?? c.domain}</strong> <span class="muted">{[c.domain, c.industry, c.location].filter(Boolean).join(' · ')}</span>
        </li>
      ))}
    </ul>
  );
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  a.click();
  URL.revokeObjectURL(url);
}
