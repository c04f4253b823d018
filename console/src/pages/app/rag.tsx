// An app's RAG tab (#/apps/<id>/rag/<collection>): its collections (create, delete), and one collection's page with
// its documents and the query playground (rag/collection.tsx).
import type { AppTabProps } from './tabs.ts';
import { ACCESS_MODES, rag, type AccessMode } from '../../api/rag.ts';
import { href } from '../../router.ts';
import { useCan } from '../../session.ts';
import { Field, Form, Loading, RowAction, Select, Table, text, useLoad, when } from '../../ui.tsx';
import { CollectionPage } from './rag/collection.tsx';

export default function RagTab({ app, rest }: AppTabProps) {
  return rest[0] ? <CollectionPage appId={app.app_id} name={rest[0]} /> : <Collections appId={app.app_id} />;
}

function Collections({ appId }: { appId: string }) {
  const list = useLoad(() => rag.collections(appId), [appId]);
  const canWrite = useCan('developer');
  const create = async (d: FormData) => {
    const name = text(d, 'name')!;
    await rag.create(appId, { name, description: text(d, 'description'), accessMode: text(d, 'accessMode') as AccessMode });
    location.hash = href('apps', appId, 'rag', name);
  };
  return (
    <>
      <h2>RAG</h2>
      <Loading loaded={list}>
        {(collections) =>
          collections.length === 0 ? (
            <p class="muted">No collections yet.</p>
          ) : (
            <Table caption="Collections" columns={['Name', 'Description', 'Access', 'Embedding model', 'Created', ...(canWrite ? ['Actions'] : [])]}>
              {collections.map((c) => (
                <tr key={c.id}>
                  <td>
                    <a href={href('apps', appId, 'rag', c.name)}>{c.name}</a>
                  </td>
                  <td>{c.description}</td>
                  <td>{c.accessMode}</td>
                  <td>{c.embeddingModel}</td>
                  <td>{when(c.createdAt)}</td>
                  {canWrite && (
                    <RowAction
                      label={`Delete the collection ${c.name}`}
                      confirm={`Delete the collection ${c.name} with all its documents? This cannot be undone.`}
                      act={() => rag.remove(appId, c.name).then(list.reload)}
                    >
                      Delete
                    </RowAction>
                  )}
                </tr>
              ))}
            </Table>
          )
        }
      </Loading>
      {canWrite && (
        <>
          <h3>New collection</h3>
          <Form label="New collection" button="Create collection" submit={create}>
            <Field label="Name" name="name" required pattern="[a-z0-9_\-]{1,100}" title="lowercase letters, digits, - and _" />
            <Field label="Description" name="description" maxLength={2000} />
            <Select label="Access" name="accessMode" options={ACCESS_MODES} initial="private" />
          </Form>
        </>
      )}
    </>
  );
}
