// The signed-in person's own substrate: the tab the route names (#/substrate/<tab>/...; the ledger when none).
import { TabNav, TabPage } from '../tabs.tsx';
import { SUBSTRATE_TABS } from './substrate/tabs.ts';

export function SubstratePage({ rest }: { rest: string[] }) {
  const tab = SUBSTRATE_TABS.find((t) => t.name === rest[0]) ?? SUBSTRATE_TABS[0]!;
  return (
    <section aria-labelledby="substrate-title">
      <h1 id="substrate-title" tabIndex={-1}>
        Substrate
      </h1>
      <TabNav label="Substrate" base={['substrate']} tabs={SUBSTRATE_TABS} current={tab.name} />
      <TabPage tab={tab} props={{ rest: rest.slice(1) }} />
    </section>
  );
}
