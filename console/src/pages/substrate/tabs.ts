// The tabs of the signed-in person's own substrate (#/substrate/<tab>/...), each in its own file and chunk; the
// approvals inbox has its own section.
import type { Tab, TabProps } from '../../tabs.tsx';

export const SUBSTRATE_TABS: ReadonlyArray<Tab<TabProps>> = [
  { name: 'ledger', label: 'Ledger', load: () => import('./ledger.tsx') },
  { name: 'memory', label: 'Memory', load: () => import('./memory.tsx') },
  { name: 'entities', label: 'Entities', load: () => import('./entities.tsx') },
  { name: 'rules', label: 'Attention rules', load: () => import('./rules.tsx') },
  { name: 'outbox', label: 'Outbox', load: () => import('./outbox.tsx') },
];
