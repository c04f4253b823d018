import { pipeline } from 'node:stream/promises';
import type { Request, Response, Router } from 'express';
import { roleAtLeast, type Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { screenInput, toAppError } from '../../core/invoke.ts';
import type { Services } from '../../services.ts';
import { rawPath } from '../../frontend/serve.ts';
import { BUCKET_ID_RE, bucketErrors, bucketView, type BucketInput } from '../../storage/buckets.ts';
import { MultipartForm } from '../../storage/multipart.ts';
import { mimeEssence } from '../../storage/names.ts';
import { pathErrors, type Accessor, type ListOptions, type UploadBody, type UploadHeaders } from '../../storage/paths.ts';
import { LIST_MAX } from '../../storage/objects.ts';
import { appIdFromHost } from '../app-host.ts';
import { resolveRequestCaller } from '../credentials.ts';
import { errorsInArea, sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';
import { settleUnreadBody } from './unread-body.ts';

export const PATH_ROUTE = /^\/v1\/([a-z0-9]{16})\/storage\/v1\/(.+)$/;
const SHORT_ROUTE = /^\/storage\/v1\/(.+)$/;
/** The longest a signed URL lasts: a week. */
const MAX_SIGNED_SECONDS = 7 * 24 * 3600;
/** JSON bodies of the bucket, list and remove calls. */
const MAX_JSON_BYTES = 256 * 1024;

/**
 * storage-js's routes (Supabase Storage's API) at /v1/{app_id}/storage/v1/... and /storage/v1/... on the app's own
 * host: buckets (list, get, create, update, empty, delete) and objects by bucket and path (upload, update, download,
 * the public URL, signed URLs and signed upload URLs, info, list, move, copy, remove). Mounted early (before JSON parsing): uploads stream their raw bodies. Errors in
 * Supabase Storage's shape ({ statusCode, code, error, message }).
 */
export const storageV1Routes: RawRoutes = {
  early: (router: Router, services: Services) => {
    router.use((req, res, next) => {
      const path = rawPath(req);
      const long = PATH_ROUTE.exec(path);
      const short = long ? undefined : SHORT_ROUTE.exec(path);
      if (!long && !short) return next();
      const appId = long ? Promise.resolve(long[1]) : appIdFromHost(req.headers.host, services);
      appId.then(
        (id) => {
          if (!id) return next();
          errorsInArea(res, 'storage');
          // Storage's shape, and none of the headers a data-API route of the same pattern would add to its errors.
          Object.assign(res.locals, { errorShape: 'storage', errorHeaders: undefined });
          void serve(req, res, services, id, long ? long[2]! : short![1]!);
        },
        (err: unknown) => sendError(res, toAppError(err, req.log, 'storage_v1')),
      );
    });
  },
};

async function serve(req: Request, res: Response, services: Services, appId: string, rest: string): Promise<void> {
  let form: MultipartForm | undefined;
  const uploadBody = (): UploadBody => {
    const h = uploadHeaders(req);
    if (h.contentType === undefined || mimeEssence(h.contentType) !== 'multipart/form-data') return { kind: 'raw', headers: h, stream: req, idleMs: services.config.storage.uploadIdleMs };
    form = new MultipartForm(req, services.config.storage.uploadIdleMs);
    return { kind: 'form', form, contentLength: h.contentLength };
  };
  try {
    const segments = rest.split('/').map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw bucketErrors.invalid('The path is not valid percent-encoding.');
      }
    });
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const [head, ...tail] = segments;
    const q = req.query as Record<string, unknown>;

    // The public URL needs no credential: the bucket's being public is the grant.
    if (method === 'GET' && head === 'object' && tail[0] === 'public' && tail.length >= 3) {
      const app = await services.apps.get(appId);
      if (!app) throw bucketErrors.noSuchBucket();
      await admit(services, app, req, res, 'read');
      return await sendObject(req, res, services, appId, { kind: 'anon' }, tail[1]!, tail.slice(2).join('/'), { publicOnly: true });
    }
    // A signed URL: its token is the grant.
    if (method === 'GET' && head === 'object' && tail[0] === 'sign' && tail.length >= 3) {
      const app = await services.apps.get(appId);
      if (!app) throw pathErrors.noSuchKey();
      await admit(services, app, req, res, 'read');
      if (typeof q.token !== 'string') throw pathErrors.badSignature();
      return await sendObject(req, res, services, appId, { kind: 'anon' }, tail[1]!, tail.slice(2).join('/'), { publicOnly: false, token: q.token });
    }

    // A signed upload URL: its token names the uploader (the signer).
    if (method === 'PUT' && head === 'object' && tail[0] === 'upload' && tail[1] === 'sign' && tail.length >= 4) {
      const app = await services.apps.get(appId);
      if (!app) throw pathErrors.noSuchKey();
      await admit(services, app, req, res, 'write');
      if (typeof q.token !== 'string') throw pathErrors.badSignature();
      const name = tail.slice(3).join('/');
      const grant = services.storage.paths.uploadGrant(appId, tail[2]!, name, q.token);
      const out = await services.storage.paths.upload(appId, grant.who, tail[2]!, name, grant.upsert ? 'upsert' : 'create', uploadBody());
      return void res.json(out);
    }

    const caller = (await resolveRequestCaller(req, services, undefined)).caller;
    const app = await services.admission.resolve(appId, caller);
    const who = accessorOf(caller);
    const { storage } = services;

    if (head === 'bucket') {
      if (tail.length === 0 && method === 'GET') {
        await admit(services, app, req, res, 'read');
        const search = typeof q.search === 'string' && q.search !== '' ? q.search : undefined;
        if (search !== undefined && (search.length > 100 || !BUCKET_ID_RE.test(search))) throw bucketErrors.invalid('search must be part of a bucket id.');
        return void res.json(await storage.buckets.list(appId, { limit: intParam(q.limit, 'limit', 1000), offset: intParam(q.offset, 'offset'), ...(search ? { search } : {}) }));
      }
      if (tail.length === 1 && method === 'GET') {
        await admit(services, app, req, res, 'read');
        return void res.json(bucketView(await storage.buckets.get(appId, tail[0]!)));
      }
      requireManager(caller);
      // Creating, changing or deleting a bucket changes the app, as storage_buckets_set and _delete do: a protected
      // app's is a person's (emptying one removes data, as storage_delete does, and is not governed).
      if (!(tail.length === 2 && tail[1] === 'empty')) await services.apps.guardProtected(app.id, caller, 'changing a bucket (storage-js)');
      await admit(services, app, req, res, 'write', caller);
      if (tail.length === 0 && method === 'POST') {
        const body = bucketBody(await readJson(req));
        return void res.json(await storage.buckets.create(appId, body.id, body.input));
      }
      if (tail.length === 1 && method === 'PUT') return void res.json(await storage.buckets.update(appId, tail[0]!, bucketBody(await readJson(req)).input));
      if (tail.length === 1 && method === 'DELETE') return void res.json(await storage.buckets.delete(appId, tail[0]!));
      if (tail.length === 2 && tail[1] === 'empty' && method === 'POST') return void res.json(await storage.paths.empty(appId, tail[0]!));
      throw routeNotFound();
    }

    if (head === 'object') {
      if (tail[0] === 'list' && tail.length === 2 && method === 'POST') {
        await admit(services, app, req, res, 'read');
        return void res.json(await storage.paths.list(appId, who, tail[1]!, listBody(await readJson(req))));
      }
      if ((tail[0] === 'move' || tail[0] === 'copy') && tail.length === 1 && method === 'POST') {
        await admit(services, app, req, res, 'write', caller);
        const { from, to } = transferBody(await readJson(req));
        return void res.json(tail[0] === 'move' ? await storage.paths.move(appId, who, from, to) : await storage.paths.copy(appId, who, from, to));
      }
      if (tail[0] === 'sign' && tail.length >= 2 && method === 'POST') {
        await admit(services, app, req, res, 'read');
        const body = await readJson(req);
        only(body, tail.length === 2 ? ['expiresIn', 'paths'] : ['expiresIn']);
        const expiresIn = body.expiresIn;
        if (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_SIGNED_SECONDS) {
          throw bucketErrors.invalid(`expiresIn must be a whole number of seconds from 1 to ${MAX_SIGNED_SECONDS}.`);
        }
        if (tail.length > 2) {
          const [signed] = await storage.paths.sign(appId, who, tail[1]!, [tail.slice(2).join('/')], expiresIn);
          if (!signed?.signedURL) throw pathErrors.noSuchKey();
          return void res.json({ signedURL: signed.signedURL });
        }
        const paths = body.paths;
        if (!Array.isArray(paths) || paths.length > LIST_MAX || !paths.every((p) => typeof p === 'string')) throw bucketErrors.invalid(`paths must be a list of at most ${LIST_MAX} paths.`);
        return void res.json(await storage.paths.sign(appId, who, tail[1]!, paths as string[], expiresIn));
      }
      if (tail[0] === 'upload' && tail[1] === 'sign' && tail.length >= 4 && method === 'POST') {
        await admit(services, app, req, res, 'write', caller);
        only(await readJson(req), []);
        return void res.json(await storage.paths.signUpload(appId, who, tail[2]!, tail.slice(3).join('/'), upsertHeader(req)));
      }
      if (tail[0] === 'info' && tail.length >= 3 && method === 'GET') {
        await admit(services, app, req, res, 'read');
        return void res.json(await storage.paths.info(appId, who, tail[1]!, tail.slice(2).join('/')));
      }
      if (tail[0] === 'authenticated' && tail.length >= 3 && method === 'GET') {
        await admit(services, app, req, res, 'read');
        return await sendObject(req, res, services, appId, who, tail[1]!, tail.slice(2).join('/'), { publicOnly: false });
      }
      if (tail.length === 1 && method === 'DELETE') {
        await admit(services, app, req, res, 'write', caller);
        return void res.json(await storage.paths.remove(appId, who, tail[0]!, prefixesBody(await readJson(req))));
      }
      if (tail.length >= 2 && !['list', 'sign', 'move', 'copy', 'info', 'upload', 'public', 'authenticated'].includes(tail[0]!)) {
        const bucket = tail[0]!;
        const name = tail.slice(1).join('/');
        if (method === 'GET') {
          await admit(services, app, req, res, 'read');
          return await sendObject(req, res, services, appId, who, bucket, name, { publicOnly: false });
        }
        if (method === 'POST' || method === 'PUT') {
          await admit(services, app, req, res, 'write', caller);
          const mode = method === 'PUT' ? 'update' : upsertHeader(req) ? 'upsert' : 'create';
          const out = await storage.paths.upload(appId, who, bucket, name, mode, uploadBody());
          return void res.json(out);
        }
      }
    }
    throw routeNotFound();
  } catch (err) {
    form?.abandon();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const appErr = toAppError(err, req.log, 'storage_v1');
    // A stalled client is not waited for again: it is answered, and its connection closed.
    if (appErr.code === 'REQUEST_TIMEOUT') res.setHeader('Connection', 'close');
    else await settleUnreadBody(req, res);
    if (appErr.code === 'RANGE_NOT_SATISFIABLE') res.setHeader('Content-Range', `bytes */${(appErr.details as { size_bytes: number }).size_bytes}`);
    sendError(res, appErr);
  }
}

async function sendObject(req: Request, res: Response, services: Services, appId: string, who: Accessor, bucket: string, name: string, grant: { publicOnly: boolean; token?: string }): Promise<void> {
  const q = req.query as Record<string, unknown>;
  const out = await services.storage.paths.download(appId, who, bucket, name, {
    ...grant,
    range: typeof req.headers.range === 'string' ? req.headers.range : undefined,
    head: req.method === 'HEAD',
    download: typeof q.download === 'string' ? q.download : undefined,
  });
  res.status(out.status);
  for (const [k, v] of Object.entries(out.headers)) res.setHeader(k, v);
  if (!out.body) return void res.end();
  await pipeline(out.body, res);
}

const upsertHeader = (req: Request) => String(req.headers['x-upsert'] ?? '').toLowerCase() === 'true';

function uploadHeaders(req: Request): UploadHeaders {
  const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
  return { contentType: header('content-type'), contentLength: header('content-length'), cacheControl: header('cache-control') };
}

/** The app's keys act on every object; an end user as themselves; a publishable key or nothing is anonymous. */
function accessorOf(caller: Caller): Accessor {
  if (caller.kind === 'service' || caller.kind === 'platform') return { kind: 'service' };
  if (caller.kind === 'user') return { kind: 'user', userId: caller.userId };
  if (caller.kind === 'none') return { kind: 'anon' };
  throw pathErrors.denied();
}

/** Bucket management: the app's service key, or a platform caller of at least the developer role. */
function requireManager(caller: Caller): void {
  if (caller.kind === 'service' || (caller.kind === 'platform' && roleAtLeast(caller.role, 'developer'))) return;
  throw bucketErrors.manageDenied();
}

/**
 * The app's state and the account's billing for a read or a write; a write by a platform caller also needs the
 * developer role, as every writing tool does (a viewer's key reads).
 */
async function admit(services: Services, app: Parameters<Services['billing']['gate']['check']>[0], req: Request, res: Response, access: 'read' | 'write', caller?: Caller): Promise<void> {
  if (access === 'write' && caller?.kind === 'platform' && !roleAtLeast(caller.role, 'developer')) throw errors.roleTooLow('developer', caller.role);
  await services.billing.gate.check(app, access);
  services.billing.traffic.touch(app.id);
  services.billing.traffic.meterResponse(app.id, req.socket, (done) => res.once('close', done));
}

const routeNotFound = () =>
  Object.assign(new AppError(404, 'RESOURCE_NOT_FOUND', 'Route not found', 'See the storage section of /llms.txt for the routes of /storage/v1.'), {
    storage: { code: 'NotFound', error: 'Not Found' },
  });

function intParam(value: unknown, name: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) > max) throw bucketErrors.invalid(`${name} must be a whole number of at most ${max}.`);
  return Number(value);
}

/** A small JSON body, read whole (bounded); none is `{}`. */
async function readJson(req: Request): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BYTES) throw bucketErrors.invalid(`The JSON body is larger than ${MAX_JSON_BYTES} bytes.`);
    chunks.push(chunk);
  }
  if (!size) return {};
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw bucketErrors.invalid('The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bucketErrors.invalid('The body must be a JSON object.');
  try {
    screenInput(value);
  } catch (err) {
    throw bucketErrors.invalid((err as Error).message);
  }
  return value as Record<string, unknown>;
}

function only(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw bucketErrors.invalid(`Unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`);
}

function bucketBody(body: Record<string, unknown>): { id: unknown; input: BucketInput } {
  only(body, ['id', 'name', 'type', 'public', 'access', 'file_size_limit', 'allowed_mime_types', 'versioning_status']);
  if (body.type !== undefined && body.type !== 'STANDARD') throw bucketErrors.invalid("Only buckets of type 'STANDARD' exist here.");
  if (body.versioning_status !== undefined) throw bucketErrors.invalid('Bucket versioning is not supported.');
  if (body.name !== undefined && body.name !== body.id) throw bucketErrors.invalid('name must equal id.');
  const size = body.file_size_limit;
  if (size !== undefined && size !== null && typeof size !== 'number' && typeof size !== 'string') throw bucketErrors.invalid('file_size_limit must be a number or a size such as "20MB".');
  const types = body.allowed_mime_types;
  if (types !== undefined && types !== null && !(Array.isArray(types) && types.every((t) => typeof t === 'string'))) throw bucketErrors.invalid('allowed_mime_types must be a list of MIME types.');
  return {
    id: body.id,
    input: {
      public: body.public as boolean | undefined,
      access: body.access as BucketInput['access'],
      file_size_limit: size as BucketInput['file_size_limit'],
      allowed_mime_types: types as BucketInput['allowed_mime_types'],
    },
  };
}

function listBody(body: Record<string, unknown>): ListOptions {
  only(body, ['prefix', 'limit', 'offset', 'sortBy', 'search']);
  const int = (v: unknown, name: string, dflt: number, max: number) => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw bucketErrors.invalid(`${name} must be a whole number from 0 to ${max}.`);
    return v;
  };
  const str = (v: unknown, name: string) => {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string' || v.length > 1024) throw bucketErrors.invalid(`${name} must be text of at most 1024 characters.`);
    return v;
  };
  const sort = (body.sortBy ?? {}) as Record<string, unknown>;
  if (typeof sort !== 'object' || Array.isArray(sort)) throw bucketErrors.invalid('sortBy must be { column, order }.');
  const column = sort.column ?? 'name';
  const order = String(sort.order ?? 'asc').toLowerCase();
  if (column !== 'name' && column !== 'created_at' && column !== 'updated_at') throw bucketErrors.invalid("sortBy.column must be 'name', 'created_at' or 'updated_at'.");
  if (order !== 'asc' && order !== 'desc') throw bucketErrors.invalid("sortBy.order must be 'asc' or 'desc'.");
  return {
    prefix: str(body.prefix, 'prefix'),
    limit: Math.max(1, int(body.limit, 'limit', 100, LIST_MAX)),
    offset: int(body.offset, 'offset', 0, 1_000_000),
    sortBy: { column, order },
    search: str(body.search, 'search'),
  };
}

/** The body of move and copy: the source in the bucket of the call, the destination in it or another bucket. */
function transferBody(body: Record<string, unknown>): { from: { bucket: string; name: string }; to: { bucket: string; name: string } } {
  only(body, ['bucketId', 'sourceKey', 'destinationKey', 'destinationBucket', 'copyMetadata']);
  if (body.copyMetadata !== undefined && typeof body.copyMetadata !== 'boolean') throw bucketErrors.invalid('copyMetadata must be true or false.');
  const text = (v: unknown, name: string) => {
    if (typeof v !== 'string' || v.length > 1024) throw bucketErrors.invalid(`${name} must be text of at most 1024 characters.`);
    return v;
  };
  const bucket = text(body.bucketId, 'bucketId');
  return {
    from: { bucket, name: text(body.sourceKey, 'sourceKey') },
    to: { bucket: body.destinationBucket === undefined ? bucket : text(body.destinationBucket, 'destinationBucket'), name: text(body.destinationKey, 'destinationKey') },
  };
}

function prefixesBody(body: Record<string, unknown>): string[] {
  only(body, ['prefixes']);
  const list = body.prefixes;
  if (!Array.isArray(list) || list.length > LIST_MAX) throw bucketErrors.invalid(`prefixes must be a list of at most ${LIST_MAX} paths.`);
  return list.map((p) => {
    const path = typeof p === 'string' ? p : typeof p === 'object' && p !== null && typeof (p as { path?: unknown }).path === 'string' ? (p as { path: string }).path : undefined;
    if (path === undefined) throw bucketErrors.invalid('Each prefix is a path, or { path }.');
    return path;
  });
}
