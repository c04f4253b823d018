// Which redirect URIs an MCP client may register (src/transports/raw/oauth-provider.ts): https, http to the person's
// own machine, or a native app's own scheme; nothing a browser or the operating system would act on otherwise.
import { describe, expect, it } from 'vitest';
import { MAX_REDIRECT_URI_LENGTH, redirectUriProblem } from '../../src/transports/raw/oauth-provider.ts';

describe('redirectUriProblem', () => {
  it('accepts https, loopback http and a private-use scheme', () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback',
      'https://client.example:8443/cb?x=1',
      'http://localhost:33418/',
      'http://127.0.0.1:53682/callback',
      'http://[::1]:8080/cb',
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'com.example.app:/oauth2redirect',
    ]) {
      expect(redirectUriProblem(uri), uri).toBeUndefined();
    }
  });

  it('refuses plain http elsewhere, schemes that are not an app own, fragments, credentials and non-URLs', () => {
    const refused: Record<string, RegExp> = {
      'http://client.example/callback': /plain http to another machine/,
      'http://127.0.0.2/cb': /plain http to another machine/,
      'http://localhost.evil.example/cb': /plain http to another machine/,
      'file:///etc/passwd': /uses file:/,
      'FILE:///etc/passwd': /uses file:/,
      'javascript:alert(1)': /uses javascript:/,
      'data:text/html,hi': /uses data:/,
      'blob:https://a.example/x': /uses blob:/,
      'mailto:a@example.com': /uses mailto:/,
      'intent://scan/#Intent;scheme=zxing;end': /fragment|uses intent:/,
      'wss://client.example/cb': /uses wss:/,
      'https://client.example/cb#frag': /has a fragment/,
      'https://client.example/cb#': /has a fragment/,
      'https://claude.ai@evil.example/cb': /user name or password/,
      'not a url': /not a URL/,
    };
    for (const [uri, problem] of Object.entries(refused)) expect(redirectUriProblem(uri), uri).toMatch(problem);
  });

  it(`refuses a URI longer than ${MAX_REDIRECT_URI_LENGTH} characters`, () => {
    const base = 'https://client.example/';
    expect(redirectUriProblem(base + 'a'.repeat(MAX_REDIRECT_URI_LENGTH - base.length))).toBeUndefined();
    expect(redirectUriProblem(base + 'a'.repeat(MAX_REDIRECT_URI_LENGTH - base.length + 1))).toMatch(/longer than/);
  });
});
