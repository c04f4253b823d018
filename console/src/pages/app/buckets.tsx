// The app's buckets on its Files tab (storage_buckets_list / _set / _delete): who reads each one's files and its own
// limits, which only tighten the app's; a bucket created or changed by its id, and deleted with its files. The
// bucket 'files', where the files above are, cannot be deleted.
import { BUCKET_ACCESS, buckets, type BucketAccess, type BucketChange } from '../../api/files.ts';
import { useCan } from '../../session.ts';
import { bytes, Field, Form, Loading, RowAction, Select, Table, text, useLoad, when } from '../../ui.tsx';

/** The bucket every app has: the file routes store there, and the API refuses to delete it. */
const DEFAULT_BUCKET = 'files';

const READERS: Record<BucketAccess, string> = {
  owner: 'owner: end users read their own files',
  authenticated: 'authenticated: signed-in end users read',
  public: 'public: anyone reads',
};

/** `changed`: deleting a bucket deletes its files, so the bytes used change. */
export function Buckets({ appId, changed }: { appId: string; changed: () => Promise<void> }) {
  const list = useLoad(() => buckets.list(appId), [appId]);
  const canWrite = useCan('developer');
  const remove = async (id: string) => {
    await buckets.remove(appId, id);
    await list.reload();
    await changed();
  };
  return (
    <section aria-labelledby="buckets">
      <h3 id="buckets">Buckets</h3>
      {canWrite && <BucketForm appId={appId} saved={list.reload} />}
      <Loading loaded={list}>
        {(rows) => (
          <Table caption="Buckets" columns={['Bucket', 'Access', 'Largest file', 'Allowed types', 'Created', ...(canWrite ? ['Actions'] : [])]}>
            {rows.map((b) => (
              <tr key={b.id}>
                <td>{b.id}</td>
                <td>{READERS[b.access]}</td>
                <td>{b.file_size_limit === null ? "the app's limit" : bytes(b.file_size_limit)}</td>
                <td>{b.allowed_mime_types ? b.allowed_mime_types.join(', ') : "the app's"}</td>
                <td>{when(b.created_at)}</td>
                {canWrite &&
                  (b.id === DEFAULT_BUCKET ? (
                    <td class="muted">always kept</td>
                  ) : (
                    <RowAction label={`Delete bucket ${b.id}`} confirm={`Delete the bucket ${b.id} and every file in it?`} act={() => remove(b.id)}>
                      Delete
                    </RowAction>
                  ))}
              </tr>
            ))}
          </Table>
        )}
      </Loading>
    </section>
  );
}

/** The form's fields as storage_buckets_set's change: an empty limit gives back the app's. */
function bucketChange(d: FormData): BucketChange {
  const size = text(d, 'file_size_limit');
  const types = text(d, 'allowed_mime_types')?.split(/[\s,]+/).filter(Boolean);
  return {
    access: d.get('access') as BucketAccess,
    file_size_limit: size === undefined ? null : Number(size),
    allowed_mime_types: types?.length ? types : null,
  };
}

function BucketForm({ appId, saved }: { appId: string; saved: () => Promise<void> }) {
  const save = async (d: FormData) => {
    await buckets.set(appId, text(d, 'id') ?? '', bucketChange(d));
    await saved();
  };
  return (
    <Form label="Save a bucket" button="Save bucket" submit={save}>
      <p class="muted">A new id creates a bucket; an existing one's id changes it.</p>
      <div class="row">
        <Field label="Bucket id" name="id" required maxLength={100} />
        <Select label="Access" name="access" options={BUCKET_ACCESS} initial="owner" />
        <Field label="Largest file in bytes (empty: the app's limit)" name="file_size_limit" type="number" min={1} />
      </div>
      <Field label="Allowed types (comma-separated; empty: the app's)" name="allowed_mime_types" placeholder="image/png, image/jpeg" />
    </Form>
  );
}
