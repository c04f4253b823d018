// Attention rules: the person's scheduled proposals. A new rule is previewed before it is saved (POST preview: how
// many bindings the condition finds now and the payloads it would propose); Save is offered only for the body just
// previewed, and any edit asks for a new preview. Rules are enabled, disabled and deleted from the list; a rule's page
// (#/substrate/rules/<rule_id>) shows its body and its firings, with its proposals in the ledger.
import { useRef, useState } from 'preact/hooks';
import { rules, type Preview, type Rule, type RuleBody } from '../../api/substrate.ts';
import { href } from '../../router.ts';
import type { TabProps } from '../../tabs.tsx';
import { Action, Field, Loading, RowAction, Select, Table, TextArea, text, useLoad, when } from '../../ui.tsx';
import { Json, JsonCode } from '../../json.tsx';
import { jsonField } from './parts.tsx';
import { RulePage } from './rule-page.tsx';

const MODES = ['row_query', 'snapshot_predicate'] as const;

export default function Rules({ rest }: TabProps) {
  return rest[0] ? <RulePage id={rest[0]} /> : <RuleList />;
}

function RuleList() {
  const list = useLoad(rules.list, []);
  return (
    <section aria-labelledby="rules-title">
      <h2 id="rules-title">Attention rules</h2>
      <Loading loaded={list}>
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No rules yet.</p>
          ) : (
            <Table caption="Attention rules" columns={['Name', 'Schedule (UTC)', 'Proposes', 'State', 'Next slot', '', '']}>
              {all.map((r) => (
                <RuleRow key={r.rule_id} rule={r} changed={list.reload} />
              ))}
            </Table>
          )
        }
      </Loading>
      <NewRule created={list.reload} />
    </section>
  );
}

function RuleRow({ rule: r, changed }: { rule: Rule; changed: () => Promise<void> }) {
  return (
    <tr>
      <td>
        <a href={href('substrate', 'rules', r.rule_id)}>{r.name}</a>
      </td>
      <td>
        <code>{r.trigger_cron}</code>
      </td>
      <td>
        <code>{r.action_capability}</code>
      </td>
      <td>{r.enabled ? 'enabled' : 'disabled'}</td>
      <td>{r.next_fire_at ? <time dateTime={r.next_fire_at}>{when(r.next_fire_at)}</time> : '—'}</td>
      <td>
        <Action label={`${r.enabled ? 'Disable' : 'Enable'} ${r.name}`} act={async () => (await rules.setEnabled(r.rule_id, !r.enabled), await changed())}>
          {r.enabled ? 'Disable' : 'Enable'}
        </Action>
      </td>
      <RowAction
        label={`Delete ${r.name}`}
        confirm={`Delete the rule ${r.name} and its firings? Its proposals stay in the ledger.`}
        act={async () => (await rules.remove(r.rule_id), await changed())}
      >
        Delete
      </RowAction>
    </tr>
  );
}

/** The form's fields as a rule body; an error naming a field whose JSON does not parse. */
function bodyOf(form: HTMLFormElement): RuleBody {
  const data = new FormData(form);
  const max = text(data, 'max_fires_per_day');
  return {
    name: text(data, 'name') ?? '',
    description: text(data, 'description'),
    trigger_cron: text(data, 'trigger_cron') ?? '',
    condition_mode: data.get('condition_mode') as RuleBody['condition_mode'],
    condition: jsonField(data, 'condition', 'Condition') ?? {},
    action_capability: text(data, 'action_capability') ?? '',
    action_payload_template: jsonField(data, 'action_payload_template', 'Payload template') ?? {},
    max_fires_per_day: max === undefined ? undefined : Number(max),
  };
}

function NewRule({ created }: { created: () => Promise<void> }) {
  const form = useRef<HTMLFormElement>(null);
  const [previewed, setPreviewed] = useState<{ body: RuleBody; preview: Preview }>();
  const preview = async () => {
    if (!form.current!.reportValidity()) return;
    const body = bodyOf(form.current!);
    setPreviewed({ body, preview: await rules.preview(body) });
  };
  const save = async () => {
    await rules.create(previewed!.body);
    setPreviewed(undefined);
    form.current!.reset();
    await created();
  };
  return (
    <>
      <h3>New rule</h3>
      <div class="row-form">
        {/* Enter submits nothing: previewing and saving are the buttons' deliberate steps. */}
        <form ref={form} aria-label="New rule" class="column" onSubmit={(e) => e.preventDefault()} onInput={() => setPreviewed(undefined)}>
          <Field label="Name" name="name" required maxLength={200} />
          <Field label="Description" name="description" maxLength={2000} />
          <Field label="Schedule (cron, UTC)" name="trigger_cron" required defaultValue="0 9 * * *" />
          <Select label="Condition mode" name="condition_mode" options={MODES} initial="row_query" />
          <TextArea
            label="Condition (JSON)"
            name="condition"
            required
            rows={4}
            defaultValue={'{ "from": "commitments", "where": { "==": [{ "var": "status" }, "confirmed"] } }'}
          />
          <Field label="Capability to propose" name="action_capability" required defaultValue="record_learning" />
          <TextArea
            label="Payload template (JSON, {{path}} from each binding)"
            name="action_payload_template"
            required
            rows={4}
            defaultValue={'{ "title": "Follow up", "description": "{{description}}" }'}
          />
          <Field label="Most proposals a day" name="max_fires_per_day" type="number" min={1} max={10000} />
          <div class="row">
            <Action act={preview}>Preview</Action>
            {previewed ? <Action act={save}>Save</Action> : <span class="muted">Preview the rule to save it.</span>}
          </div>
        </form>
      </div>
      {previewed && <PreviewView preview={previewed.preview} />}
    </>
  );
}

function PreviewView({ preview: p }: { preview: Preview }) {
  return (
    <section aria-labelledby="preview-title" class="preview">
      <h3 id="preview-title">Preview</h3>
      <p role="status">
        {p.skip_reason
          ? `It would propose nothing now: ${p.skip_reason}.`
          : `It would find ${p.bindings_count} ${p.bindings_count === 1 ? 'binding' : 'bindings'} now${p.bindings_count ? `, and propose (${p.sample_proposals.length} shown):` : '.'}`}
      </p>
      {p.sample_proposals.length > 0 && (
        <ol aria-label="Sample proposals">
          {p.sample_proposals.map((s, i) => (
            <li key={i}>
              {s.error ? (
                <span class="error">{s.error}</span>
              ) : (
                <>
                  {s.would_require_approval ? 'Waits for your approval' : 'Executes at once'}
                  <JsonCode value={s.rendered_payload} />
                </>
              )}
              <Json summary="Binding" value={s.binding} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
