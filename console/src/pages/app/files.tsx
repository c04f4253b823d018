// An app's Files tab: the bytes used against its limits, an upload from the browser (storage_upload's presigned URL,
// then a PUT of the file), the files a page at a time (offset paging), each downloaded through its presigned URL or
// deleted; then the app's buckets.
import { useState } from 'preact/hooks';
import type { AppTabProps } from './tabs.ts';
import { FILE_PAGE, files, type StorageLimits, type StoredObject } from '../../api/files.ts';
import { useCan } from '../../session.ts';
import { Action, bytes, Field, Form, Loading, RowAction, Table, useLoad, when } from '../../ui.tsx';
import { Facts } from '../../facts.tsx';
import { fileOf } from './runtime-ui.tsx';
import { Buckets } from './buckets.tsx';

export default function FilesTab({ app }: AppTabProps) {
  const appId = app.app_id;
  const [offset, setOffset] = useState(0);
  const list = useLoad(() => files.list(appId, offset), [appId, offset]);
  const limits = useLoad(() => files.limits(appId), [appId]);
  const canWrite = useCan('developer');
  // On S3 the listing is what marks uploads whose bytes have arrived as stored: the bytes used are read after it.
  const changed = async () => {
    await list.reload();
    await limits.reload();
  };
  return (
    <>
      <h2>Files</h2>
      <Loading loaded={limits}>{(l) => <Usage limits={l} />}</Loading>
      {canWrite && <UploadForm appId={appId} uploaded={changed} />}
      <h3>Stored files</h3>
      <Loading loaded={list}>
        {(rows) => (
          <>
            <FileTable appId={appId} rows={rows} canWrite={canWrite} changed={changed} />
            <nav aria-label="File pages" class="row">
              {offset > 0 && (
                <button type="button" onClick={() => setOffset(Math.max(0, offset - FILE_PAGE))}>
                  Newer files
                </button>
              )}
              {rows.length === FILE_PAGE && (
                <button type="button" onClick={() => setOffset(offset + FILE_PAGE)}>
                  Older files
                </button>
              )}
            </nav>
          </>
        )}
      </Loading>
      <Buckets appId={appId} changed={changed} />
    </>
  );
}

function Usage({ limits: l }: { limits: StorageLimits }) {
  return (
    <Facts
      label="Storage"
      facts={[
        ['Used', `${bytes(l.usage.used_bytes)} of ${bytes(l.max_app_bytes)}`],
        ['Pending uploads', bytes(l.usage.pending_bytes)],
        ['Largest file', bytes(l.max_file_bytes)],
        ['Allowed types', l.allowed_content_types.length ? l.allowed_content_types.join(', ') : 'any'],
      ]}
    />
  );
}

function UploadForm({ appId, uploaded }: { appId: string; uploaded: () => Promise<void> }) {
  const upload = async (d: FormData) => {
    const file = fileOf(d, 'file');
    if (!file) throw new Error('Choose a file.');
    await files.upload(appId, file);
    await uploaded();
  };
  return (
    <Form label="Upload a file" button="Upload" submit={upload}>
      <Field label="File" type="file" name="file" required />
    </Form>
  );
}

/** The presigned URL answers with Content-Disposition: attachment, so following it downloads without leaving the page. */
async function download(appId: string, f: StoredObject): Promise<void> {
  const a = document.createElement('a');
  a.href = await files.downloadUrl(appId, f.id);
  a.download = f.filename;
  a.click();
}

function FileTable({ appId, rows, canWrite, changed }: { appId: string; rows: StoredObject[]; canWrite: boolean; changed: () => Promise<void> }) {
  if (rows.length === 0) return <p class="muted">No files.</p>;
  return (
    <Table caption="Files" columns={['Name', 'Type', 'Size', 'Uploaded', 'Download', ...(canWrite ? ['Actions'] : [])]}>
      {rows.map((f) => (
        <tr key={f.id}>
          <td>{f.filename}</td>
          <td>{f.content_type}</td>
          <td>{bytes(f.size_bytes)}</td>
          <td>{when(f.created_at)}</td>
          <td>
            <Action label={`Download ${f.filename}`} act={() => download(appId, f)}>
              Download
            </Action>
          </td>
          {canWrite && (
            <RowAction label={`Delete ${f.filename}`} confirm={`Delete ${f.filename}? Download links already handed out stop working.`} act={() => files.remove(appId, f.id).then(changed)}>
              Delete
            </RowAction>
          )}
        </tr>
      ))}
    </Table>
  );
}
