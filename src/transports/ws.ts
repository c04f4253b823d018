// Websocket endpoints on the HTTP server's `upgrade` event (package `ws`): the substrate change stream
// /v1/me/substrate/stream?ticket= (src/substrate/stream.ts); the per-app function socket /v1/{app_id}/ws (and /ws on
// the app's own host: its subdomain or custom domain), where a client, anonymous or holding an end-user JWT of the app
// (`?token=` or Authorization), sends text frames { event, data }; every websocket function of the app whose trigger
// event matches runs (POST, JSON { event, data }) and its response comes back as { event, function, status, data };
// and realtime-js's socket /v1/{app_id}/realtime/v1/websocket (/realtime/v1/websocket on the app's host), whose
// Phoenix channels src/realtime serves. Other endpoints add an entry to ROUTES.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Caller } from '../core/caller.ts';
import { AppError, errors } from '../core/errors.ts';
import type { Services } from '../services.ts';
import type { EndUser } from '../functions/protocol.ts';
import { resolveCaller } from './credentials.ts';
import { appIdFromHost } from './app-host.ts';
import { rawErrorResponse } from './socket-reply.ts';
import { LOST } from '../substrate/stream.ts';
import { credentialKey, credentialOf, KEY_PREFIX, type CredentialRef } from '../auth/keys.ts';
import { VSNS, type Vsn } from '../realtime/protocol.ts';
import type { Outlet, RealtimeSession } from '../realtime/channels.ts';
import type { ChannelRole } from '../realtime/roles.ts';

/** Largest message a client may send. */
export const WS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** Messages of one socket whose functions are still running; more get an error frame. */
export const WS_MAX_IN_FLIGHT = 8;
const PING_MS = 30_000;

interface Route {
  /** The area whose guide section documents the route's refusals (documentation_url). */
  area: string;
  /** The app the request is for, or undefined when the path is not this route's. */
  match(pathname: string, req: http.IncomingMessage, services: Services): Promise<string | undefined>;
  /** Authorizes the upgrade (an AppError refuses it); what it returns serves the socket once it is open. */
  admit(appId: string, url: URL, req: http.IncomingMessage, services: Services): Promise<Admitted>;
}

interface Admitted {
  /** The key the socket was opened with: when it is revoked, the socket closes. */
  credential: CredentialRef | undefined;
  connected(ws: WebSocket, services: Services, log: Logger): void;
}

interface Session {
  appId: string;
  user: EndUser | null;
  token: string | null;
  /** The key the socket was opened with: when it is revoked, the socket closes. */
  credential: CredentialRef | undefined;
}

const FUNCTION_SOCKET = /^\/v1\/([a-z0-9]{16})\/ws\/?$/;
const REALTIME_SOCKET = /^\/v1\/([a-z0-9]{16})\/realtime\/v1\/websocket\/?$/;
const SUBSTRATE_STREAM = /^\/v1\/me\/substrate\/stream\/?$/;
/** Frames a stream socket may have queued unsent; a client that falls further behind is dropped. */
const STREAM_MAX_BUFFERED_BYTES = 1024 * 1024;

/** An app's socket path: /v1/{app_id}/... (`direct`, the app id its group), or `short` on the app's own host. */
function appSocket(direct: RegExp, short: string): Route['match'] {
  return async (pathname, req, services) => {
    const match = direct.exec(pathname);
    if (match) return match[1];
    if (pathname === short || pathname === `${short}/`) return appIdFromHost(req.headers.host, services);
    return undefined;
  };
}

const ROUTES: readonly Route[] = [
  {
    area: 'functions',
    match: appSocket(FUNCTION_SOCKET, '/ws'),
    admit: async (appId, url, req, services) => {
      const session = await authorize(appId, url, req, services);
      return { credential: session.credential, connected: (ws, s, log) => functionSocket(ws, session, s, log) };
    },
  },
  {
    area: 'realtime',
    match: appSocket(REALTIME_SOCKET, '/realtime/v1/websocket'),
    admit: admitRealtime,
  },
];

export interface WebSocketGateway {
  /** Closes every socket (1001 going away) and stops accepting upgrades. */
  close(): Promise<void>;
}

export function attachWebSockets(server: http.Server, services: Services, log: Logger): WebSocketGateway {
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_MESSAGE_BYTES });
  const alive = new WeakMap<WebSocket, boolean>();
  // The credentials of open sockets (those opened with a key, or a function's ticket), rechecked every
  // SVC_WS_RECHECK_SECONDS: a socket does not outlive the revocation of its key, nor the deletion of its app.
  const credentials = new Map<WebSocket, CredentialRef[]>();
  const track = (ws: WebSocket, refs: ReadonlyArray<CredentialRef | undefined>) => {
    const present = refs.filter((r): r is CredentialRef => r !== undefined);
    if (!present.length) return;
    credentials.set(ws, present);
    ws.once('close', () => credentials.delete(ws));
  };
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      log.error({ err }, 'websocket upgrade failed');
      reject(socket, errors.internal(), services.config.baseUrl);
    });
  };

  async function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://upgrade.invalid');
    if (SUBSTRATE_STREAM.test(url.pathname)) {
      // A browser holds no substrate key: the single-use ticket from POST /v1/me/substrate/ws-ticket is the credential.
      const ticket = await services.substrate.stream.consumeTicket(url.searchParams.get('ticket') ?? '');
      if (!ticket) {
        return reject(
          socket,
          new AppError(401, 'AUTH_INVALID_TOKEN', 'The stream ticket is missing, used, expired or unknown.', 'Mint a fresh ticket with POST /v1/me/substrate/ws-ticket (valid 60 s, one connection).').inArea('substrate'),
          services.config.baseUrl,
        );
      }
      // A ticket outlives the key that minted it by at most its 60 s; the socket does not.
      if (ticket.credential && !(await services.keys.stillValid([ticket.credential])).size) {
        const revoked = new AppError(401, 'AUTH_INVALID_TOKEN', 'The key that minted this stream ticket was revoked.', 'Mint a fresh ticket with a current key.');
        return reject(socket, revoked.inArea('substrate'), services.config.baseUrl);
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        alive.set(ws, true);
        ws.on('pong', () => alive.set(ws, true));
        track(ws, [ticket.credential]);
        substrateSocket(ws, ticket.org, ticket.user, services);
      });
      return;
    }
    for (const route of ROUTES) {
      const appId = await route.match(url.pathname, req, services);
      if (!appId) continue;
      let admitted: Admitted;
      try {
        admitted = await route.admit(appId, url, req, services);
      } catch (err) {
        return reject(socket, (err instanceof AppError ? err : errors.internal()).inArea(route.area), services.config.baseUrl);
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        alive.set(ws, true);
        ws.on('pong', () => alive.set(ws, true));
        track(ws, [admitted.credential, { kind: 'app', id: appId }]);
        admitted.connected(ws, services, log);
      });
      return;
    }
    // Not ours: answer 404 unless another upgrade listener may want it.
    if (server.listenerCount('upgrade') <= 1) reject(socket, errors.routeNotFound('GET', url.pathname), services.config.baseUrl);
  }

  server.on('upgrade', onUpgrade);
  const ping = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, PING_MS);
  ping.unref();
  const recheck = setInterval(() => {
    closeRevoked(credentials, services).catch((err: unknown) => log.warn({ err }, 'websocket credential recheck failed'));
  }, services.config.wsRecheckSeconds * 1000);
  recheck.unref();

  return {
    close: async () => {
      server.off('upgrade', onUpgrade);
      clearInterval(ping);
      clearInterval(recheck);
      for (const ws of wss.clients) {
        goingAway.add(ws);
        ws.close(1001, 'server shutting down');
      }
      const deadline = Date.now() + 2000;
      while (wss.clients.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** Closes (1008) every socket whose key was revoked or whose app was deleted since it opened. */
async function closeRevoked(credentials: Map<WebSocket, CredentialRef[]>, services: Services): Promise<void> {
  if (!credentials.size) return;
  // Judged are the sockets open when the query starts: one opened meanwhile holds a key the query did not ask about.
  const checked = [...credentials];
  const all = [...new Map(checked.flatMap(([, refs]) => refs).map((c) => [credentialKey(c), c])).values()];
  const valid = await services.keys.stillValid(all);
  for (const [ws, refs] of checked) {
    if (refs.every((r) => valid.has(credentialKey(r)))) continue;
    credentials.delete(ws);
    revoke(ws);
  }
}

/** Ends a socket whose credential is gone: a close frame, then the connection, whether or not the client answers. */
function revoke(ws: WebSocket): void {
  ws.close(1008, 'credential revoked');
  setTimeout(() => ws.terminate(), 1000).unref();
}

/** An HTTP error answer on a socket that will not be upgraded. */
function reject(socket: Duplex, err: AppError, baseUrl: string): void {
  if (!socket.destroyed) socket.end(rawErrorResponse(err, baseUrl));
}

/**
 * Anyone may connect (functions decide what an anonymous message may do); a credential, when sent, must be
 * valid and for this app: an end-user JWT becomes ctx.user, a service key of the app or its owner's platform
 * key connect without a user.
 */
async function authorize(appId: string, url: URL, req: http.IncomingMessage, services: Services): Promise<Session> {
  const app = await services.apps.get(appId);
  if (!app) throw errors.notFound(`App '${appId}'`, 'Check the app_id in the websocket URL.');
  const queryToken = url.searchParams.get('token');
  const header = queryToken ? `Bearer ${queryToken}` : req.headers.authorization;
  const caller: Caller = await resolveCaller(header, services);
  switch (caller.kind) {
    case 'none':
      return { appId, user: null, token: null, credential: undefined };
    case 'user':
      if (caller.appId !== appId) throw errors.otherApp();
      return { appId, user: { id: caller.userId, claims: caller.claims }, token: /^Bearer\s+(\S+)/i.exec(header!)![1]!, credential: undefined };
    case 'service':
      if (caller.appId !== appId) throw errors.otherApp();
      return { appId, user: null, token: null, credential: credentialOf(caller) };
    case 'platform':
      if (app.account_id !== caller.accountId) throw errors.otherApp();
      return { appId, user: null, token: null, credential: credentialOf(caller) };
    default:
      throw errors.wrongCredential(['end-user JWT', 'service key', 'platform key', 'none']);
  }
}

/**
 * realtime-js's socket: `vsn` 1.0.0 or 2.0.0 (Phoenix's default, 1.0.0, when absent), and `apikey` a publishable or
 * secret key of the app, as supabase-js sends the key it was made with. Each channel acts for the access token of its
 * join, or for this key when the join carries none.
 */
async function admitRealtime(appId: string, url: URL, _req: http.IncomingMessage, services: Services): Promise<Admitted> {
  const vsn = url.searchParams.get('vsn') ?? '1.0.0';
  if (!VSNS.includes(vsn as Vsn)) {
    throw new AppError(400, 'VALIDATION_FAILED', `Unsupported serializer version '${vsn.slice(0, 20)}'.`, "Connect with vsn=2.0.0 (realtime-js's default) or vsn=1.0.0.");
  }
  const app = await services.apps.get(appId);
  if (!app) throw errors.notFound(`App '${appId}'`, 'Check the app_id in the websocket URL.');
  // As for every call of the app: paused (423) or its account suspended (403); then one tenant's share of sockets.
  await services.billing.gate.check(app, 'read');
  services.realtime.checkRoom(appId);
  const key = url.searchParams.get('apikey');
  if (!key) throw new AppError(401, 'AUTH_REQUIRED', 'The realtime socket needs the app\'s key as ?apikey=.', "Pass the app's publishable key (or secret key, on a server) to createClient; supabase-js sends it.");
  const caller = key.startsWith(KEY_PREFIX.publishable) || key.startsWith(KEY_PREFIX.service) ? await services.keys.resolve(key) : undefined;
  if (!caller) throw errors.invalidToken();
  if ((caller.kind !== 'none' && caller.kind !== 'service') || caller.appId !== appId) throw errors.otherApp();
  const keyRole: ChannelRole = caller.kind === 'service' ? { kind: 'service' } : { kind: 'anon' };
  return {
    credential: credentialOf(caller),
    connected: (ws, s) => realtimeSocket(ws, s.realtime.session(appId, vsn as Vsn, keyRole, outletOf(ws, (bytes) => s.billing.traffic.served(appId, bytes))), () => s.billing.traffic.touch(appId)),
  };
}

/** The websocket as a realtime session writes to it; `sent` counts the bytes of each frame (the app's bandwidth). */
function outletOf(ws: WebSocket, sent: (bytes: number) => void): Outlet {
  return {
    get open() {
      return ws.readyState === ws.OPEN;
    },
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    send: (data) => {
      ws.send(data);
      sent(typeof data === 'string' ? Buffer.byteLength(data) : data.length);
    },
    close: (code, reason) => ws.close(code, reason),
    terminate: () => ws.terminate(),
  };
}

/** Sockets this server closed as it stopped: their clients did not choose to leave. */
const goingAway = new WeakSet<WebSocket>();

/** `heard`: the client sent something (its heartbeats keep an app with open sockets from pausing as idle). */
function realtimeSocket(ws: WebSocket, session: RealtimeSession, heard: () => void): void {
  ws.on('message', (raw: RawData, isBinary: boolean) => {
    heard();
    session.receive(rawBytes(raw), isBinary);
  });
  // 1006: no close frame came (a broken connection, a sleeping laptop); or this server closed it going away.
  ws.on('close', (code: number) => session.closed(code === 1006 || goingAway.has(ws)));
  ws.on('error', () => {});
}

function functionSocket(ws: WebSocket, session: Session, services: Services, log: Logger): void {
  let inFlight = 0;
  const abort = new AbortController();
  ws.on('close', () => abort.abort());
  ws.on('error', () => {});
  const send = (frame: unknown) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
  };
  ws.on('message', (raw: RawData, isBinary: boolean) => {
    // A socket being closed (its key revoked, the server stopping) runs nothing more.
    if (ws.readyState !== ws.OPEN) return;
    let message: unknown;
    try {
      if (isBinary) throw new Error('binary');
      message = JSON.parse(rawText(raw));
    } catch {
      return send({ error: 'Messages are JSON text frames: { "event": <name>, "data": <any JSON> }.' });
    }
    const event = (message as { event?: unknown } | null)?.event;
    if (typeof message !== 'object' || message === null || Array.isArray(message) || typeof event !== 'string' || !event || event.length > 100) {
      return send({ error: 'Messages are JSON objects { "event": <name, 1-100 characters>, "data": <any JSON> }.' });
    }
    if (inFlight >= WS_MAX_IN_FLIGHT) {
      return send({ event, error: `Too many messages in flight (at most ${WS_MAX_IN_FLIGHT}); wait for replies before sending more.` });
    }
    inFlight++;
    const data = (message as { data?: unknown }).data ?? null;
    dispatch(event, data)
      .catch((err: unknown) => {
        log.error({ err, app_id: session.appId, event }, 'websocket dispatch failed');
        send({ event, error: 'The message could not be dispatched; retry.' });
      })
      .finally(() => inFlight--);
  });

  async function dispatch(event: string, data: unknown): Promise<void> {
    const targets = await services.functions.websocketTargets(session.appId, event);
    if (!targets.length) return send({ event, error: `No function of this app handles the event '${event}'.` });
    await Promise.all(
      targets.map(async (meta) => {
        const result = await services.functions.runWebsocket(meta, event, data, session.user, session.token, abort.signal);
        send({ event, function: result.function, status: result.status, data: result.data });
      }),
    );
  }
}

/** The change stream of one substrate user of an org: { type: "hello" }, then { org, op, tbl, id } per committed change. */
function substrateSocket(ws: WebSocket, org: string, user: string | null, services: Services): void {
  ws.send(JSON.stringify({ type: 'hello' }));
  const unsubscribe = services.substrate.stream.subscribe(org, user, (frame) => {
    if (ws.readyState !== ws.OPEN) return;
    // 1012 (service restart): frames may have been missed; the client reconnects with a fresh ticket and re-fetches.
    if (frame === LOST) return ws.close(1012, 'change stream interrupted; reconnect and re-fetch');
    // A slow client is dropped rather than buffered without bound; it reconnects with a fresh ticket and re-fetches.
    if (ws.bufferedAmount > STREAM_MAX_BUFFERED_BYTES) return ws.terminate();
    ws.send(JSON.stringify(frame));
  });
  ws.on('close', unsubscribe);
  ws.on('error', () => {});
  ws.on('message', () => {});
}

function rawBytes(raw: RawData): Buffer {
  if (Array.isArray(raw)) return Buffer.concat(raw);
  if (raw instanceof ArrayBuffer) return Buffer.from(raw);
  return raw;
}

function rawText(raw: RawData): string {
  return rawBytes(raw).toString('utf8');
}
