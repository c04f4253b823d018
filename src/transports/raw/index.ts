import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Services } from '../../services.ts';
import { storageRawRoutes } from './storage.ts';
import { storageV1Routes } from './storage-v1.ts';
import { siteRoutes } from './sites.ts';
import { functionRoutes } from './functions.ts';
import { webhookRoutes } from './webhooks.ts';
import { peopleRawRoutes } from './people.ts';
import { meetingsRawRoutes } from './meetings.ts';
import { approvalRoutes } from './approvals.ts';
import { oauthRoutes } from './oauth.ts';
import { consoleRoutes } from './console.ts';
import { manualRoutes } from './manual.ts';

/**
 * Routes outside the descriptor registry, for wire shapes a tool cannot have (presigned blob PUT/GET with raw
 * bytes, hosted sites). `early` mounts run before JSON body parsing (they read the raw stream); `fallback`
 * mounts run after every generated route, just before the 404.
 */
export interface RawRoutes {
  early?: (router: Router, services: Services, log: Logger) => void;
  fallback?: (router: Router, services: Services, log: Logger) => void;
  /** The platform's person-facing pages: served on its own host only, never on an app's (see platformHostOnly). */
  platformHostOnly?: true;
}

export const rawRoutes: readonly RawRoutes[] = [storageRawRoutes, storageV1Routes, siteRoutes, functionRoutes, webhookRoutes, meetingsRawRoutes, peopleRawRoutes, approvalRoutes, oauthRoutes, consoleRoutes, manualRoutes];
