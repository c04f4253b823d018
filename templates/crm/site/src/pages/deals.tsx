// The pipeline as columns of stages. Dropping a card on another stage (or choosing it in the card's menu, for the
// keyboard) proposes the move; the card stays where it is, marked pending, until a person approves it.
import { useState } from 'preact/hooks';
import { createDeal, deals, moveDeal, pendingMoves, proposeForecast, proposeNextStep, stages } from '../api/deals.ts';
import { messageOf } from '../api/errors.ts';
import { useCurrent } from '../context.ts';
import type { Deal, Stage } from '../types.ts';
import { Action, Choice, Field, Form, Page, Show, money, notify, useLoad, value } from '../ui.tsx';

const DRAG_TYPE = 'application/x-crm-deal';

export function Deals() {
  const { workspace } = useCurrent();
  const loaded = useLoad(async () => {
    const [s, d, pending] = await Promise.all([stages(workspace.id), deals(workspace.id), pendingMoves(workspace.id)]);
    return { stages: s, deals: d, pending };
  }, [workspace.id]);
  const [over, setOver] = useState<string | null>(null);

  const move = async (deal: Deal, stage: Stage) => {
    if (deal.stage_id === stage.id) return;
    try {
      await moveDeal(deal.id, stage.id);
      notify(`Moving “${deal.title}” to ${stage.name} waits for approval.`);
    } catch (err) {
      notify(messageOf(err), 'error');
    }
    await loaded.reload();
  };

  return (
    <Page title="Deals" actions={<Action done="Forecast proposed for approval." onAction={() => proposeForecast(workspace.id)}>Propose forecast</Action>}>
      <Show loaded={loaded}>
        {({ stages: columns, deals: list, pending }) => {
          const byId = new Map(list.map((d) => [d.id, d]));
          const stageName = (id: string) => columns.find((s) => s.id === id)?.name ?? 'another stage';
          return (
            <>
              <details class="add">
                <summary>New deal</summary>
                <Form
                  label="New deal"
                  done="Deal created."
                  onSubmit={async (d) => {
                    await createDeal(workspace.id, { title: value(d, 'title') ?? '', stage_id: value(d, 'stage_id'), amount: Number(value(d, 'amount') ?? 0) });
                    await loaded.reload();
                  }}
                >
                  <Field label="Title" name="title" required maxLength={200} />
                  <Field label="Amount" name="amount" type="number" min={0} step="any" />
                  <Choice label="Stage" name="stage_id" options={columns.map((s): [string, string] => [s.id, s.name])} />
                  <button class="primary">Create</button>
                </Form>
              </details>
              <div class="board">
                {columns.map((stage) => {
                  const cards = list.filter((d) => d.stage_id === stage.id);
                  const total = cards.reduce((sum, d) => sum + Number(d.amount || 0), 0);
                  return (
                    <section
                      key={stage.id}
                      class={`column${over === stage.id ? ' over' : ''}`}
                      aria-labelledby={`stage-${stage.id}`}
                      data-stage={stage.name}
                      onDragOver={(e) => {
                        if (!e.dataTransfer?.types.includes(DRAG_TYPE)) return;
                        e.preventDefault();
                        setOver(stage.id);
                      }}
                      onDragLeave={() => setOver((o) => (o === stage.id ? null : o))}
                      onDrop={(e) => {
                        e.preventDefault();
                        setOver(null);
                        const deal = byId.get(e.dataTransfer?.getData(DRAG_TYPE) ?? '');
                        if (deal) void move(deal, stage);
                      }}
                    >
                      <h2 id={`stage-${stage.id}`}>
                        {stage.name} <span class="muted">{cards.length} · {money(total)}</span>
                      </h2>
                      <ul>
                        {cards.map((deal) => (
                          <DealCard key={deal.id} deal={deal} stages={columns} pendingTo={pending.get(deal.id)} stageName={stageName} onMove={move} />
                        ))}
                      </ul>
                    </section>
                  );
                })}
              </div>
            </>
          );
        }}
      </Show>
    </Page>
  );
}

interface CardProps {
  deal: Deal;
  stages: Stage[];
  pendingTo: string | undefined;
  stageName: (id: string) => string;
  onMove: (deal: Deal, stage: Stage) => Promise<void>;
}

function DealCard({ deal, stages: all, pendingTo, stageName, onMove }: CardProps) {
  return (
    <li
      class={`card${pendingTo ? ' pending' : ''}`}
      draggable
      data-deal={deal.title}
      onDragStart={(e) => {
        e.dataTransfer?.setData(DRAG_TYPE, deal.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
      }}
    >
      <a href={`#/timeline/${encodeURIComponent(`deal:${deal.id}`)}`} class="card-title">
        {deal.title}
      </a>
      <span>{money(deal.amount, deal.currency)}</span>
      {deal.next_step && <span class="muted">Next: {deal.next_step}</span>}
      {pendingTo && (
        <span class="badge" role="status">
          Awaiting approval → {stageName(pendingTo)}
        </span>
      )}
      <div class="card-actions">
        <label>
          <span class="visually-hidden">Move {deal.title} to</span>
          <select
            value={deal.stage_id}
            onChange={(e) => {
              const target = all.find((s) => s.id === e.currentTarget.value);
              e.currentTarget.value = deal.stage_id;
              if (target) void onMove(deal, target);
            }}
          >
            {all.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id === deal.stage_id ? s.name : `Move to ${s.name}`}
              </option>
            ))}
          </select>
        </label>
        <Action label={`Propose the next step of ${deal.title}`} done="Next step proposed for approval." onAction={() => proposeNextStep(deal.id)}>
          Next step
        </Action>
      </div>
    </li>
  );
}
