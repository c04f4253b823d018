// The tabs of one app's page (#/apps/<id>/<tab>/...), each in its own file and chunk.
import type { AppDetails } from '../../api.ts';
import type { Tab, TabProps } from '../../tabs.tsx';

export interface AppTabProps extends TabProps {
  app: AppDetails;
}

export const APP_TABS: ReadonlyArray<Tab<AppTabProps>> = [
  { name: 'overview', label: 'Overview', load: () => import('./overview.tsx') },
  { name: 'schema', label: 'Schema', load: () => import('./schema.tsx') },
  { name: 'data', label: 'Table editor', load: () => import('./data.tsx') },
  { name: 'users', label: 'Users', load: () => import('./users.tsx') },
  { name: 'files', label: 'Files', load: () => import('./files.tsx') },
  { name: 'functions', label: 'Functions', load: () => import('./functions.tsx') },
  { name: 'sites', label: 'Sites', load: () => import('./sites.tsx') },
  { name: 'branches', label: 'Branches', load: () => import('./branches.tsx') },
  { name: 'ai', label: 'AI', load: () => import('./ai.tsx') },
  { name: 'rag', label: 'RAG', load: () => import('./rag.tsx') },
  { name: 'integrations', label: 'Integrations', load: () => import('./integrations.tsx') },
  { name: 'monetization', label: 'Monetization', load: () => import('./monetization.tsx') },
];
