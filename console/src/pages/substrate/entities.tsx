// Placeholder until this tab is built (issue 30).
import type { TabProps } from '../../tabs.tsx';

export default function Tab(_: TabProps) {
  return <h2>Entities</h2>;
}
