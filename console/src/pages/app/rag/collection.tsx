// One RAG collection: its documents a page at a time (ingest a text, delete one) and the query playground: the
// matches with their scores, and with "synthesize" the answer written from them (developer and up: it spends AI
// credits, and the API refuses a viewer).
import { useState } from 'preact/hooks';
import { rag, type DocumentPage, type QueryAnswer } from '../../../api/rag.ts';
import { Pager, useCursors } from '../../../pager.tsx';
import { href } from '../../../router.ts';
import { useCan } from '../../../session.ts';
import { Action, Field, Form, Loading, RowAction, Table, text, TextArea, useLoad, when } from '../../../ui.tsx';

export function CollectionPage({ appId, name }: { appId: string; name: string }) {
  return (
    <>
      <p>
        <a href={href('apps', appId, 'rag')}>All collections</a>
      </p>
      <h2>Collection {name}</h2>
      <Documents appId={appId} name={name} />
      <Playground appId={appId} name={name} />
    </>
  );
}

function Documents({ appId, name }: { appId: string; name: string }) {
  const cursors = useCursors();
  const docs = useLoad(() => rag.documents(appId, name, cursors.before), [appId, name, cursors.before]);
  const canWrite = useCan('developer');
  const ingest = async (d: FormData) => {
    await rag.ingest(appId, name, { text: text(d, 'text')!, filename: text(d, 'filename') });
    await docs.reload();
  };
  return (
    <section aria-labelledby="rag-documents">
      <h3 id="rag-documents">Documents</h3>
      <Loading loaded={docs}>
        {(page) => <DocumentTable appId={appId} name={name} page={page} canWrite={canWrite} reload={docs.reload} />}
      </Loading>
      <Pager label="documents" cursors={cursors} next={docs.data?.next} />
      <Action act={docs.reload}>Refresh</Action>
      {canWrite && (
        <Form label="Ingest a text document" button="Ingest" submit={ingest}>
          <Field label="File name" name="filename" maxLength={1024} />
          <TextArea label="Text" name="text" required rows={5} spellcheck />
        </Form>
      )}
    </section>
  );
}

function DocumentTable({ appId, name, page, canWrite, reload }: { appId: string; name: string; page: DocumentPage; canWrite: boolean; reload: () => Promise<void> }) {
  if (page.documents.length === 0) return <p class="muted">No documents yet.</p>;
  return (
    <Table caption="Documents" columns={['File name', 'Status', 'Chunks', 'Added', ...(canWrite ? ['Actions'] : [])]}>
      {page.documents.map((d) => (
        <tr key={d.id}>
          <td>{d.filename ?? d.id}</td>
          <td>
            {d.status}
            {d.errorMessage && <div class="error">{d.errorMessage}</div>}
          </td>
          <td>{d.chunkCount}</td>
          <td>{when(d.createdAt)}</td>
          {canWrite && (
            <RowAction label={`Delete ${d.filename ?? d.id}`} confirm="Delete this document and its chunks?" act={() => rag.removeDocument(appId, name, d.id).then(reload)}>
              Delete
            </RowAction>
          )}
        </tr>
      ))}
    </Table>
  );
}

function Playground({ appId, name }: { appId: string; name: string }) {
  const [answer, setAnswer] = useState<QueryAnswer>();
  const canSynthesize = useCan('developer');
  const run = async (d: FormData) => {
    const threshold = text(d, 'threshold');
    setAnswer(
      await rag.query(appId, name, {
        query: text(d, 'query')!,
        topK: Number(text(d, 'topK') ?? 5),
        ...(threshold ? { threshold: Number(threshold) } : {}),
        synthesize: d.get('synthesize') === 'on',
      }),
    );
  };
  return (
    <section aria-labelledby="rag-playground">
      <h3 id="rag-playground">Query playground</h3>
      <Form label="Query the collection" button="Run query" submit={run}>
        <Field label="Query" name="query" required maxLength={8000} />
        <div class="row">
          <Field label="Top K" name="topK" type="number" min={1} max={50} defaultValue="5" />
          <Field label="Threshold (0-1)" name="threshold" type="number" min={0} max={1} step="0.01" />
          {canSynthesize && (
            <label>
              <input type="checkbox" name="synthesize" /> Synthesize an answer (spends AI credits)
            </label>
          )}
        </div>
      </Form>
      {answer && <Matches answer={answer} />}
    </section>
  );
}

function Matches({ answer }: { answer: QueryAnswer }) {
  return (
    <div role="region" aria-label="Query results">
      {answer.answer !== undefined && (
        <>
          <h4>Answer{answer.model ? ` (${answer.model})` : ''}</h4>
          <p>{answer.answer}</p>
        </>
      )}
      <h4>Matches</h4>
      {answer.chunks.length === 0 ? (
        <p class="muted">No chunk matched.</p>
      ) : (
        <Table caption="Matching chunks" columns={['#', 'Score', 'Text', 'Document']}>
          {answer.chunks.map((c, i) => (
            <tr key={`${c.documentId}-${i}`}>
              <td>{i + 1}</td>
              <td>{c.score.toFixed(3)}</td>
              <td>{c.text}</td>
              <td>
                <code>{c.documentId}</code>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}
