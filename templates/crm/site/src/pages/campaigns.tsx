// Campaigns: a sequence of e-mail steps sent to recipients from the sender's mailbox. Launching asks a person to
// approve the first send; a reply stops the sequence for that recipient.
import { addRecipients, addStep, campaigns, createCampaign, launch, pause, recipients, steps } from '../api/campaigns.ts';
import { contacts } from '../api/contacts.ts';
import { lists } from '../api/leads.ts';
import { useCurrent } from '../context.ts';
import { go, useRoute } from '../router.ts';
import type { Campaign } from '../types.ts';
import { Action, Area, Choice, Field, Form, Page, Show, useLoad, value, when, Head } from '../ui.tsx';

const STATUS: Record<Campaign['status'], string> = { draft: 'Draft', pending_approval: 'Awaiting approval', active: 'Active', paused: 'Paused', completed: 'Completed' };

export function Campaigns() {
  const { workspace } = useCurrent();
  const { param } = useRoute();
  const loaded = useLoad(() => campaigns(workspace.id), [workspace.id]);
  return (
    <Page title="Campaigns">
      <Form
        label="New campaign"
        done="Campaign created."
        onSubmit={async (d) => {
          const made = await createCampaign(workspace.id, value(d, 'name') ?? '');
          await loaded.reload();
          go('campaigns', made.id);
        }}
      >
        <Field label="New campaign" name="name" required maxLength={200} />
        <button>Create</button>
      </Form>
      <Show loaded={loaded}>
        {(list) => {
          const open = list.find((c) => c.id === param);
          return (
            <div class="split">
              <ul class="list" aria-label="Campaigns">
                {list.map((c) => (
                  <li key={c.id}>
                    <a href={`#/campaigns/${c.id}`} aria-current={c.id === param ? 'true' : undefined}>
                      {c.name}
                    </a>{' '}
                    <span class="badge">{STATUS[c.status]}</span>
                  </li>
                ))}
                {!list.length && <li class="muted">No campaigns yet.</li>}
              </ul>
              {open && <CampaignDetail key={open.id} campaign={open} onChange={loaded.reload} />}
            </div>
          );
        }}
      </Show>
    </Page>
  );
}

function CampaignDetail({ campaign, onChange }: { campaign: Campaign; onChange: () => Promise<void> }) {
  const { workspace } = useCurrent();
  const loaded = useLoad(async () => {
    const [s, r, people, leadLists] = await Promise.all([steps(campaign.id), recipients(campaign.id), contacts(workspace.id), lists(workspace.id)]);
    return { steps: s, recipients: r, people, leadLists };
  }, [campaign.id]);
  const refresh = async () => {
    await Promise.all([loaded.reload(), onChange()]);
  };
  const editable = campaign.status === 'draft' || campaign.status === 'paused';
  return (
    <section class="detail" aria-labelledby="campaign-title">
      <h2 id="campaign-title">
        {campaign.name} <span class="badge">{STATUS[campaign.status]}</span>
      </h2>
      <div class="row-actions">
        {campaign.status === 'draft' && (
          <Action class="primary" done="Launch proposed: a person approves the first send." onAction={async () => (await launch(campaign.id), await refresh())}>
            Launch
          </Action>
        )}
        {campaign.status === 'active' && (
          <Action done="Campaign paused." onAction={async () => (await pause(campaign.id, true), await refresh())}>
            Pause
          </Action>
        )}
        {campaign.status === 'paused' && (
          <Action done="Campaign resumed." onAction={async () => (await pause(campaign.id, false), await refresh())}>
            Resume
          </Action>
        )}
      </div>
      <Show loaded={loaded}>
        {({ steps: sequence, recipients: to, people, leadLists }) => {
          const name = new Map(people.map((p) => [p.id, p.full_name]));
          return (
            <>
              <h3>Steps</h3>
              <ol class="list">
                {sequence.map((s) => (
                  <li key={s.id}>
                    <strong>{s.subject}</strong> <span class="muted">{s.position === 0 ? 'at launch' : `after ${s.delay_days} day(s)`}</span>
                    <p class="prewrap">{s.body}</p>
                  </li>
                ))}
              </ol>
              {editable && (
                <Form
                  label="Add a step"
                  class="stack"
                  done="Step added."
                  onSubmit={async (d) => {
                    await addStep(workspace.id, campaign.id, { position: sequence.length, delay_days: Number(value(d, 'delay_days') ?? 0), subject: value(d, 'subject') ?? '', body: value(d, 'body') ?? '' });
                    await loaded.reload();
                  }}
                >
                  <Field label="Subject" name="subject" required />
                  <Area label="Body" name="body" required rows={4} />
                  <Field label="Days after the previous step" name="delay_days" type="number" min={0} defaultValue={sequence.length ? '3' : '0'} />
                  <button>Add step</button>
                </Form>
              )}
              <h3>Recipients ({to.length})</h3>
              <table>
                <Head columns={['Contact', 'Status', 'Next send']} />
                <tbody>
                  {to.map((r) => (
                    <tr key={r.id}>
                      <th scope="row">{name.get(r.contact_id) ?? r.contact_id}</th>
                      <td>
                        {r.status}
                        {r.error && <span class="muted"> ({r.error})</span>}
                      </td>
                      <td>{when(r.next_send_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {editable && (
                <Form
                  label="Add recipients"
                  onSubmit={async (d) => {
                    const list = value(d, 'lead_list_id');
                    const ids = d.getAll('contact_ids').map(String);
                    const added = await addRecipients(campaign.id, list ? { lead_list_id: list } : { contact_ids: ids });
                    await loaded.reload();
                    return added;
                  }}
                  done="Recipients added."
                >
                  <Choice label="From a lead list" name="lead_list_id" options={[['', '—'], ...leadLists.map((l): [string, string] => [l.id, l.name])]} />
                  <label class="field">
                    <span>Or contacts</span>
                    <select name="contact_ids" multiple size={5}>
                      {people
                        .filter((p) => !to.some((r) => r.contact_id === p.id))
                        .map((p) => (
                          <option key={p.id} value={p.id}>
                            {p.full_name}
                            {p.email ? ` <${p.email}>` : ' (no e-mail)'}
                          </option>
                        ))}
                    </select>
                  </label>
                  <button>Add</button>
                </Form>
              )}
            </>
          );
        }}
      </Show>
    </section>
  );
}
