// docs/guides/agent-approvals.md runs as written (test/e2e/guide-runner.ts): an app proposes a contact (auto) and an
// e-mail draft (approval) to its owner's ledger, cannot approve it itself, a person signed in mints a substrate key and
// approves, and the approved draft reaches the app's function, signed. The person is an owner signed up by invitation;
// the guide is told their sign-in, as its readers set it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { signUpMember } from './e2e-helpers.ts';
import { runGuide } from './guide-runner.ts';

let server: SpawnedServer;

beforeAll(async () => {
  // The guide's webhook is the app's function on this loopback platform, as its readers start it.
  server = await spawnServer({ SVC_OUTBOUND_ALLOW_PRIVATE: 'true' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('docs/guides/agent-approvals.md', () => {
  it('the contact is written at once, the draft waits for the person, and once approved reaches the app', async () => {
    const email = 'person@example.com';
    await signUpMember(server, 'owner', email);
    const run = await runGuide('guides/agent-approvals.md', server, { PERSON_EMAIL: email, PERSON_PASSWORD: 'correct horse battery' });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'contact: auto_approved',
      'draft: requires_approval',
      'agent approving: 403',
      'waiting: send_email_draft Our meeting',
      'decided: executed',
    ]);
    const approved = JSON.parse(lines[5]!.replace(/^approved: /, ''));
    expect(approved).toEqual([{ action_id: expect.stringMatching(/^act_/), recipients: ['ada@example.com'], subject: 'Our meeting' }]);
    expect(lines).toHaveLength(6);
  }, 120_000);
});
