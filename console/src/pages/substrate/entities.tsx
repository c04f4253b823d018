// Entities: the people, companies, projects... of the person's substrate, newest updated first a page at a time
// (next_before), by type, with a display-name search (its best matches, one page); an entity's page
// (#/substrate/entities/<id>) shows every field and edits the name, email and attributes through the ledger
// (PATCH: patch_entity proposed, guarded by the updated_at read).
import { useState } from 'preact/hooks';
import { entities, ENTITY_TYPES, type Entity, type Proposal } from '../../api/substrate.ts';
import { Facts } from '../../facts.tsx';
import { href } from '../../router.ts';
import type { TabProps } from '../../tabs.tsx';
import { Field, Form, Loading, Select, Table, text, TextArea, useLoad, when } from '../../ui.tsx';
import { Json } from '../../json.tsx';
import { Filters, jsonField, Pager, useCursorPages } from './parts.tsx';

const PAGE = 25;

export default function Entities({ rest }: TabProps) {
  return rest[0] ? <EntityPage id={rest[0]} /> : <EntityList />;
}

function EntityList() {
  const [ask, setAsk] = useState<{ type?: string | undefined; q?: string | undefined }>({});
  const apply = (data: FormData) => setAsk({ type: data.get('type') === 'any' ? undefined : (data.get('type') as string), q: text(data, 'q') });
  return (
    <section aria-labelledby="entities-title">
      <h2 id="entities-title">Entities</h2>
      <Filters label="Find entities" apply={apply}>
        <Select label="Type" name="type" options={['any', ...ENTITY_TYPES]} initial="any" />
        <Field label="Name contains" name="q" type="search" maxLength={200} />
      </Filters>
      <EntityPages key={JSON.stringify(ask)} type={ask.type} q={ask.q} />
    </section>
  );
}

function EntityPages({ type, q }: { type?: string | undefined; q?: string | undefined }) {
  const pages = useCursorPages((before) => entities.list(type, q, before, PAGE));
  return (
    <Loading loaded={pages.loaded}>
      {(page) =>
        page.rows.length === 0 ? (
          <p class="muted">No entities match.</p>
        ) : (
          <>
            <p class="muted">
              {page.total} {page.total === 1 ? 'entity' : 'entities'}
              {q ? ', best matches first' : ''}
            </p>
            <Table caption="Entities" columns={['Name', 'Type', 'Email', 'Updated']}>
              {page.rows.map((e) => (
                <tr key={e.id}>
                  <td>
                    <a href={href('substrate', 'entities', e.id)}>{e.display_name}</a>
                  </td>
                  <td>{e.type}</td>
                  <td>{e.primary_email ?? '—'}</td>
                  <td>
                    <time dateTime={e.updated_at}>{when(e.updated_at)}</time>
                  </td>
                </tr>
              ))}
            </Table>
            <Pager pages={pages} label="Entities" />
          </>
        )
      }
    </Loading>
  );
}

function EntityPage({ id }: { id: string }) {
  const entity = useLoad(() => entities.get(id), [id]);
  return (
    <section aria-labelledby="entity-title">
      <p>
        <a href={href('substrate', 'entities')}>All entities</a>
      </p>
      <Loading loaded={entity}>{(e) => <EntityView entity={e} changed={entity.reload} />}</Loading>
    </section>
  );
}

function EntityView({ entity: e, changed }: { entity: Entity; changed: () => Promise<void> }) {
  const [outcome, setOutcome] = useState('');
  const save = async (data: FormData) => {
    const email = text(data, 'primary_email');
    const answer = await entities.patch(e.id, {
      display_name: text(data, 'display_name'),
      primary_email: email === e.primary_email ? undefined : (email ?? null),
      attrs_patch: jsonField(data, 'attrs_patch', 'Attributes patch'),
      if_updated_at: e.updated_at,
    });
    setOutcome(describePatch(answer));
    await changed();
  };
  return (
    <>
      <h2 id="entity-title">{e.display_name}</h2>
      <Facts
        facts={[
          ['Type', e.type],
          ['Id', <code>{e.id}</code>],
          ['Email', e.primary_email ?? '—'],
          ['Linked app user', e.linked_app_id ? `${e.linked_app_user_id} of app ${e.linked_app_id}` : '—'],
          ['Created', when(e.created_at)],
          ['Updated', when(e.updated_at)],
        ]}
      />
      <Json summary="Canonical keys" value={e.canonical_keys} />
      <Json summary="Attributes" value={e.attrs} />
      <h3>Edit</h3>
      <p role="status" class="notice">
        {outcome}
      </p>
      {/* Keyed by updated_at: after a save the fields show the entity as it now is. */}
      <div class="row-form">
        <Form key={e.updated_at} label={`Edit ${e.display_name}`} button="Save" submit={save}>
          <Field label="Display name" name="display_name" defaultValue={e.display_name} maxLength={500} required />
          <Field label="Email (empty clears it)" name="primary_email" type="email" defaultValue={e.primary_email ?? ''} maxLength={320} />
          <TextArea label='Attributes patch (JSON merge patch: {"key": null} deletes a key)' name="attrs_patch" rows={4} />
        </Form>
      </div>
    </>
  );
}

function describePatch(p: Proposal): string {
  if (p.verdict.result === 'rejected') return `Not saved: ${p.verdict.reason}.`;
  if (p.requires_approval) return `Your change waits for approval (${p.action_id}, see Approvals).`;
  return `Saved (action ${p.action_id}).`;
}
