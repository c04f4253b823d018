// An attention rule's page (#/substrate/rules/<rule_id>): its body, and its firings newest slot first (25 a page): the bindings
// found, the proposals made (each linked to the ledger filtered by the rule) and what was skipped and why.
import { rules, type Firing, type Rule } from '../../api/substrate.ts';
import { Facts } from '../../facts.tsx';
import { href } from '../../router.ts';
import { Loading, Table, useLoad, when } from '../../ui.tsx';
import { Json } from '../../json.tsx';
import { Pager, useCursorPages } from './parts.tsx';

const PAGE = 25;

export function RulePage({ id }: { id: string }) {
  const rule = useLoad(() => rules.get(id), [id]);
  const firings = useCursorPages((before) => rules.firings(id, before, PAGE));
  return (
    <section aria-labelledby="rule-title">
      <p>
        <a href={href('substrate', 'rules')}>All rules</a>
      </p>
      <Loading loaded={rule}>{(r) => <RuleFacts rule={r} />}</Loading>
      <h3>Firings</h3>
      <Loading loaded={firings.loaded}>
        {(page) => (
          <>
            <Firings firings={page.rows} ruleId={id} />
            <Pager pages={firings} label="Firings" />
          </>
        )}
      </Loading>
    </section>
  );
}

function RuleFacts({ rule: r }: { rule: Rule }) {
  return (
    <>
      <h2 id="rule-title">{r.name}</h2>
      {r.description && <p>{r.description}</p>}
      <Facts
        facts={[
          ['Schedule (UTC)', <code>{r.trigger_cron}</code>],
          ['State', r.enabled ? `enabled, next slot ${r.next_fire_at ? when(r.next_fire_at) : 'none'}` : 'disabled'],
          [
            'Proposes',
            <>
              <code>{r.action_capability}</code>, at most {r.max_fires_per_day} a day
            </>,
          ],
        ]}
      />
      <Json summary={`Condition (${r.condition_mode})`} value={r.condition} />
      <Json summary="Payload template" value={r.action_payload_template} />
      <p>
        <a href={href('substrate', 'ledger', 'rule', r.rule_id)}>Its proposals in the ledger</a>
      </p>
    </>
  );
}

function Firings({ firings, ruleId }: { firings: Firing[]; ruleId: string }) {
  if (firings.length === 0) return <p class="muted">It has not fired yet.</p>;
  return (
    <Table caption={`Firings of ${ruleId}`} columns={['Slot', 'Bindings', 'Proposed', 'Skipped']}>
      {firings.map((f) => (
        <tr key={f.firing_id}>
          <td>
            <time dateTime={f.slot}>{when(f.slot)}</time>
          </td>
          <td>{f.bindings_count}</td>
          <td>
            {f.proposals.length === 0
              ? '—'
              : f.proposals.map((p) => (
                  <div key={p.action_id}>
                    <code>{p.action_id}</code> {p.verdict}
                  </div>
                ))}
          </td>
          <td>{f.skip_reason ?? (f.skipped.length ? f.skipped.map((s) => `#${s.binding_index}: ${s.reason}`).join('; ') : '—')}</td>
        </tr>
      ))}
    </Table>
  );
}
