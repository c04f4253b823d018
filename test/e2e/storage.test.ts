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

  it('the generated OpenAPI document lists every storage route', async () => {
    const doc = (await request(server.url, '/openapi.json')).json as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(doc.paths['/storage/{app_id}/upload']!.post!.operationId).toBe('storage_upload');
    expect(doc.paths['/storage/{app_id}/objects']!.get!.operationId).toBe('storage_list');
    expect(doc.paths['/storage/{app_id}/download/{object_id}']!.get!.operationId).toBe('storage_download');
    expect(doc.paths['/storage/{app_id}/{object_id}']!.delete!.operationId).toBe('storage_delete');
    expect(doc.paths['/storage/{app_id}/limits']!.put!.operationId).toBe('storage_limits_set');
  });
});
