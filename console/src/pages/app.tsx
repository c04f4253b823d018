// One app's page: its name, then the tab the route names (#/apps/<id>/<tab>/...; the overview when none).
import { apps } from '../api.ts';
import { TabNav, TabPage } from '../tabs.tsx';
import { Loading, useLoad } from '../ui.tsx';
import { APP_TABS } from './app/tabs.ts';

export function AppPage({ appId, rest }: { appId: string; rest: string[] }) {
  const app = useLoad(() => apps.get(appId), [appId]);
  const tab = APP_TABS.find((t) => t.name === rest[0]) ?? APP_TABS[0]!;
  return (
    <Loading loaded={app}>
      {(a) => (
        <section aria-labelledby="app-title">
          <p>
            <a href="#/apps">All apps</a>
          </p>
          <h1 id="app-title" tabIndex={-1}>
            {a.name}
          </h1>
          <TabNav label="App" base={['apps', appId]} tabs={APP_TABS} current={tab.name} />
          {/* Keyed by the app: another app's page starts afresh instead of showing this one's data while it loads. */}
          <TabPage key={appId} tab={tab} props={{ app: a, rest: rest.slice(1) }} />
        </section>
      )}
    </Loading>
  );
}
