// Storage end to end: the server as `npm start` runs it, the MCP SDK client and REST side by side, and the
// bytes PUT to and fetched from the URLs exactly as returned (SVC_BASE_URL defaults to http://localhost:<port>).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, UUID, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;
let serviceKey: string;

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Storage E2E' } });
  expect(created.status).toBe(201);
  appId = created.json.app_id;
  serviceKey = created.json.service_key.key;
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

describe('storage over MCP and REST', () => {
  it('upload over MCP, PUT to the returned URL, then list/download/delete agree on both transports', async () => {
    const bytes = Buffer.from('%PDF-1.7 pretend\n');
    const up = await callTool(mcp.client, 'storage_upload', { app_id: appId, filename: 'doc.pdf', contentType: 'application/pdf', sizeBytes: bytes.length });
    expect(up.isError).toBeFalsy();
    const ticket = resultJson(up) as { uploadUrl: string; objectKey: string; objectId: string; expiresIn: number };
    expect(ticket).toEqual({ uploadUrl: expect.stringMatching(/^http:\/\/localhost:\d+\/blob\/storage\//), objectKey: `${appId}/service/${ticket.objectId}_doc.pdf`, objectId: expect.stringMatching(UUID), expiresIn: 300 });
    expect(resultJson(up)).toEqual(ticket);

    const put = await fetch(ticket.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/pdf' }, body: bytes });
    expect(put.status).toBe(200);

    const rest = await request(server.url, `/storage/${appId}/objects`, { key: serviceKey });
    expect(rest.status).toBe(200);
    expect(Array.isArray(rest.json)).toBe(true);
    expect(rest.json).toHaveLength(1);
    const viaMcp = await callTool(mcp.client, 'storage_list', { app_id: appId });
    expect(resultJson(viaMcp)).toEqual({ objects: rest.json });

    const dl = await callTool(mcp.client, 'storage_download', { app_id: appId, object_id: ticket.objectId });
    const { downloadUrl, filename, expiresIn } = resultJson(dl) as { downloadUrl: string; filename: string; expiresIn: number };
    expect({ filename, expiresIn }).toEqual({ filename: 'doc.pdf', expiresIn: 3600 });
    const got = await fetch(downloadUrl);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);

    const restLimits = await request(server.url, `/storage/${appId}/limits`, { key: server.platformKey });
    const mcpLimits = await callTool(mcp.client, 'storage_limits_get', { app_id: appId });
    expect(resultJson(mcpLimits)).toEqual(restLimits.json);
    expect(restLimits.json.usage).toEqual({ used_bytes: bytes.length, pending_bytes: 0 });

    const del = await callTool(mcp.client, 'storage_delete', { app_id: appId, object_id: ticket.objectId });
    expect(resultJson(del)).toEqual({ deleted: true, id: ticket.objectId });
    const again = await callTool(mcp.client, 'storage_delete', { app_id: appId, object_id: ticket.objectId });
    expect(again.isError).toBe(true);
    const restAgain = await request(server.url, `/storage/${appId}/${ticket.objectId}`, { method: 'DELETE', key: serviceKey });
    expect(restAgain.status).toBe(404);
    expect(resultJson(again)).toEqual({ status: 404, ...restAgain.json });
    expect((await fetch(downloadUrl)).status).toBe(404);
  });

  it('refusals carry the same envelope on both transports', async () => {
    const args = { app_id: appId, filename: 'huge.bin', contentType: 'application/octet-stream', sizeBytes: 20 * 1024 * 1024 };
    const rest = await request(server.url, `/storage/${appId}/upload`, { method: 'POST', key: serviceKey, body: args });
    expect(rest.status).toBe(400);
    expect(rest.json.error.code).toBe('FILE_TOO_LARGE');
    const viaMcp = await callTool(mcp.client, 'storage_upload', args);
    expect(viaMcp.isError).toBe(true);
    expect(resultJson(viaMcp)).toEqual({ status: 400, ...rest.json });
  });

  it('buckets: list, create or update (set), delete (emptied first on request) agree on both transports; the standard envelope for refusals', async () => {
    const files = { id: 'files', access: 'owner', public: false, file_size_limit: null, allowed_mime_types: null, created_at: expect.any(String), updated_at: expect.any(String) };
    const rest = await request(server.url, `/storage/${appId}/buckets`, { key: serviceKey });
    expect(rest.status).toBe(200);
    expect(rest.json).toEqual({ buckets: [files] });
    expect(resultJson(await callTool(mcp.client, 'storage_buckets_list', { app_id: appId }))).toEqual(rest.json);

    const made = await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'PUT', key: serviceKey, body: { access: 'public', file_size_limit: 1024, allowed_mime_types: ['image/png'] } });
    expect(made.status).toBe(200);
    expect(made.json).toEqual({ id: 'photos', access: 'public', public: true, file_size_limit: 1024, allowed_mime_types: ['image/png'], created_at: expect.any(String), updated_at: expect.any(String) });
    // An update over MCP: omitted fields stay, null clears.
    const updated = await callTool(mcp.client, 'storage_buckets_set', { app_id: appId, bucket_id: 'photos', access: 'authenticated', file_size_limit: null });
    expect(updated.isError).toBeFalsy();
    expect(resultJson(updated)).toEqual({ ...made.json, access: 'authenticated', public: false, file_size_limit: null, updated_at: expect.any(String) });
    expect((await request(server.url, `/storage/${appId}/buckets`, { key: server.platformKey })).json.buckets.map((b: { id: string }) => b.id)).toEqual(['files', 'photos']);

    for (const [body, status, code] of [
      [{ access: 'everyone' }, 400, 'VALIDATION_FAILED'],
      [{ acess: 'public' }, 400, 'VALIDATION_FAILED'],
      [{ file_size_limit: 1024 * 1024 * 1024 }, 400, 'VALIDATION_FAILED'],
      [{ allowed_mime_types: ['not a type'] }, 400, 'VALIDATION_FAILED'],
    ] as const) {
      const refused = await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'PUT', key: serviceKey, body });
      expect([refused.status, refused.json?.error?.code], JSON.stringify(body)).toEqual([status, code]);
      expect(refused.json.error.message).toEqual(expect.any(String));
    }
    const reserved = await request(server.url, `/storage/${appId}/buckets/list`, { method: 'PUT', key: serviceKey, body: {} });
    expect([reserved.status, reserved.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);

    // A viewer reads, and changes nothing.
    const viewer = await request(server.url, '/dashboard/keys', { method: 'POST', key: server.platformKey, body: { name: 'bucket viewer', role: 'viewer' } });
    expect(viewer.status).toBe(201);
    expect((await request(server.url, `/storage/${appId}/buckets`, { key: viewer.json.key })).status).toBe(200);
    const denied = await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'PUT', key: viewer.json.key, body: { access: 'public' } });
    expect([denied.status, denied.json.error.code]).toEqual([403, 'FORBIDDEN_ROLE']);
    expect((await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'DELETE', key: viewer.json.key })).status).toBe(403);

    // A file in it (storage-js's route): the delete is refused until asked to empty the bucket first.
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const put = await request(server.url, `/v1/${appId}/storage/v1/object/photos/a.png`, { method: 'POST', key: serviceKey, headers: { 'content-type': 'image/png' }, body: png });
    expect(put.status).toBe(200);
    const full = await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'DELETE', key: serviceKey });
    expect([full.status, full.json.error.code]).toEqual([409, 'CONFLICT']);
    const emptied = await callTool(mcp.client, 'storage_buckets_delete', { app_id: appId, bucket_id: 'photos', empty: true });
    expect(resultJson(emptied)).toEqual({ deleted: true, id: 'photos' });
    expect((await request(server.url, `/storage/${appId}/limits`, { key: server.platformKey })).json.usage).toEqual({ used_bytes: 0, pending_bytes: 0 });
    const gone = await request(server.url, `/storage/${appId}/buckets/photos`, { method: 'DELETE', key: serviceKey });
    expect([gone.status, gone.json.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);

    // 'files' stays, with its files, even when asked to empty it (over REST, empty in the query).
    const kept = await callTool(mcp.client, 'storage_upload_inline', { app_id: appId, filename: 'keep.txt', contentType: 'text/plain', content: 'keep', encoding: 'utf8' });
    const keptId = resultJson(kept).objectId as string;
    const refusedFiles = await request(server.url, `/storage/${appId}/buckets/files?empty=true`, { method: 'DELETE', key: serviceKey });
    expect([refusedFiles.status, refusedFiles.json.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect((await request(server.url, `/storage/${appId}/objects`, { key: serviceKey })).json.map((o: { id: string }) => o.id)).toEqual([keptId]);
    // The spec's DELETE /storage/{app_id}/{object_id} has one segment fewer than the bucket route: still the file's.
    expect((await request(server.url, `/storage/${appId}/${keptId}`, { method: 'DELETE', key: serviceKey })).json).toEqual({ deleted: true, id: keptId });
    expect((await request(server.url, `/storage/${appId}/buckets`, { method: 'DELETE', key: serviceKey })).status).toBe(404);
  });

  it('the generated OpenAPI document lists every storage route', async () => {
    const doc = (await request(server.url, '/openapi.json')).json as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(doc.paths['/storage/{app_id}/upload']!.post!.operationId).toBe('storage_upload');
    expect(doc.paths['/storage/{app_id}/objects']!.get!.operationId).toBe('storage_list');
    expect(doc.paths['/storage/{app_id}/download/{object_id}']!.get!.operationId).toBe('storage_download');
    expect(doc.paths['/storage/{app_id}/{object_id}']!.delete!.operationId).toBe('storage_delete');
    expect(doc.paths['/storage/{app_id}/limits']!.put!.operationId).toBe('storage_limits_set');
    expect(doc.paths['/storage/{app_id}/buckets']!.get!.operationId).toBe('storage_buckets_list');
    expect(doc.paths['/storage/{app_id}/buckets/{bucket_id}']!.put!.operationId).toBe('storage_buckets_set');
    expect(doc.paths['/storage/{app_id}/buckets/{bucket_id}']!.delete!.operationId).toBe('storage_buckets_delete');
  });
});
