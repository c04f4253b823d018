// Placeholder until this tab is built (issue 30).
import type { AppTabProps } from './tabs.ts';

export default function Tab(_: AppTabProps) {
  return <h2>Files</h2>;
}
