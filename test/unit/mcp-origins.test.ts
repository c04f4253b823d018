import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { mcpOriginAllowed } from '../../src/transports/mcp-origins.ts';

describe('SVC_MCP_ALLOWED_ORIGINS', () => {
  it('defaults to the base URL origin and loopback origins on any port', () => {
    const { mcp } = loadConfig({ SVC_BASE_URL: 'https://api.example.com/' });
    expect(mcp).toEqual({ allowedOrigins: ['https://api.example.com'], allowLoopbackOrigins: true, allowAnyOrigin: false });
    for (const origin of ['https://api.example.com', 'http://localhost:5173', 'https://127.0.0.1:1', 'http://[::1]:8080', 'http://localhost']) {
      expect(mcpOriginAllowed(origin, mcp), origin).toBe(true);
    }
    for (const origin of ['http://api.example.com', 'https://evil.example', 'null', 'file://', 'http://127.0.0.2', 'chrome-extension://abc', 'http://localhost.evil.example']) {
      expect(mcpOriginAllowed(origin, mcp), origin).toBe(false);
    }
  });

  it('a list replaces the loopback default; the base URL stays allowed; * allows every origin', () => {
    const { mcp } = loadConfig({ PORT: '9000', SVC_MCP_ALLOWED_ORIGINS: ' https://a.example.com , HTTP://B.example.com:8443/' });
    expect(mcp).toEqual({
      allowedOrigins: ['http://localhost:9000', 'https://a.example.com', 'http://b.example.com:8443'],
      allowLoopbackOrigins: false,
      allowAnyOrigin: false,
    });
    expect(mcpOriginAllowed('http://b.example.com:8443', mcp)).toBe(true);
    expect(mcpOriginAllowed('http://localhost:5173', mcp)).toBe(false);
    const any = loadConfig({ SVC_MCP_ALLOWED_ORIGINS: '*' }).mcp;
    expect(mcpOriginAllowed('https://anything.example', any)).toBe(true);
  });

  it.each(['example.com', 'https://a.example.com/path', 'ftp://a.example.com', 'https://user@a.example.com'])('%s is refused at start', (value) => {
    expect(() => loadConfig({ SVC_MCP_ALLOWED_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SVC_MCP_ALLOWED_ORIGINS: value })).toThrow(/SVC_MCP_ALLOWED_ORIGINS: '.*' is not an origin/);
  });
});
