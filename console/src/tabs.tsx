// A page's tabs: links under one hash route (#/apps/<id>/<tab>, #/substrate/<tab>), each tab's code loaded the first
// time it is opened (its own chunk), so the first page's script stays small however many pages the console has.
import type { ComponentType } from 'preact';
import { href } from './router.ts';
import { Loading, useLoad } from './ui.tsx';

/** What every tab gets: the route's segments after the tab's own name (a table, a function, a rule). */
export interface TabProps {
  rest: string[];
}

export interface Tab<P extends TabProps> {
  name: string;
  label: string;
  load: () => Promise<{ default: ComponentType<P> }>;
}

export function TabNav({ label, base, tabs, current }: { label: string; base: string[]; tabs: ReadonlyArray<{ name: string; label: string }>; current: string }) {
  return (
    <nav aria-label={label} class="tabs">
      {tabs.map((t) => (
        <a key={t.name} href={href(...base, t.name)} aria-current={t.name === current ? 'page' : undefined}>
          {t.label}
        </a>
      ))}
    </nav>
  );
}

/** The tab's page, loaded on first use. */
export function TabPage<P extends TabProps>({ tab, props }: { tab: Tab<P>; props: P }) {
  const mod = useLoad(tab.load, [tab]);
  return <Loading loaded={mod}>{(m) => <m.default {...props} />}</Loading>;
}
