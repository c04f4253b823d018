// The cloned CRM's workspace, membership and integrations functions (issue 29), against the fake vendors, as its end
// users call them: a workspace with its owner and pipeline; invitations (only a hash stored, bound to the invited
// address, single use, expiring, e-mailed from the inviter's Gmail); roles and the last owner; the home page's
// overview; the caller's integrations (connect through the hosted page, status, disconnect); and workspace isolation
// through the data API with supabase-js.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_ORIGIN, startCrm, type CrmRig, type EndUser } from '../helpers/crm.ts';
import { followLikeABrowser } from '../fakes/composio.ts';

let rig: CrmRig;
let ann: EndUser; // owner of workspace A
let ben: EndUser; // member, then admin, of A
let cat: EndUser; // member of A, then leaves
let dan: EndUser; // owner of workspace B
let eve: EndUser; // in no workspace
let wsA: string;
let wsB: string;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const errorOf = (res: { status: number; json: any }) => [res.status, res.json?.error?.code];

beforeAll(async () => {
  rig = await startCrm();
  const user = (name: string) => rig.signUp(`${name}@acme.example`);
  [ann, ben, cat, dan, eve] = await Promise.all([user('ann'), user('ben'), user('cat'), user('dan'), user('eve')]);
}, 420_000);

afterAll(async () => {
  await rig?.stop();
});

describe('workspaces', () => {
  it('the clone is ready in under a minute', () => {
    console.log(`CRM clone ready in ${rig.cloneMs} ms`);
    expect(rig.cloneMs).toBeLessThan(60_000);
  });

  it("the manifest says what the CRM makes and what its new owner supplies: toolkits, paid services, AI, secrets, setup", async () => {
    const manifest = (await rig.platform('GET', `/v1/templates/${rig.templateAppId}`)).json;
    expect(manifest.creates.functions).toHaveLength(56);
    expect(manifest.creates.tables.map((t: { name: string }) => t.name)).toContain('workspace_members');
    expect(manifest.creates).toMatchObject({ uses: ['people', 'meetings'], integrations: ['gmail', 'googlecalendar', 'linkedin'], ai: { default_model: 'openai/gpt-4o-mini' }, substrate_link: true });
    expect(manifest.creates.site).toMatchObject({ framework: 'static' });
    const todo = manifest.owner_must_supply as Array<{ kind: string; name?: string; tool: string }>;
    expect(todo.filter((t) => t.kind === 'secret').map((t) => t.name).sort()).toEqual(['MEETINGS_WEBHOOK_SECRET', 'OUTBOX_SECRET']);
    expect(todo.filter((t) => t.kind === 'integration').map((t) => t.name)).toEqual(['gmail', 'googlecalendar', 'linkedin']);
    expect(todo.filter((t) => t.kind === 'setup').map((t) => t.tool)).toEqual(['substrate_app_link', 'meetings_webhook_set', 'substrate_outbox_target_set', 'functions_env_update']);
  });

  it('workspace-create makes the workspace, its owner and the default pipeline; refuses the anonymous and a missing name', async () => {
    expect(errorOf(await rig.fn('workspace-create', { body: { name: 'Acme' } }))).toEqual([401, 'sign_in_required']);
    expect(errorOf(await rig.fn('workspace-create', { token: ann.token, body: {} }))).toEqual([400, 'missing_field']);
    expect(errorOf(await rig.fn('workspace-create', { token: ann.token, body: 'not json' }))).toEqual([400, 'invalid_json']);

    const res = await rig.fn('workspace-create', { token: ann.token, body: { name: '  Acme sales ' } });
    expect(res.status, res.text).toBe(201);
    wsA = res.json.workspace.id;
    expect(res.json.workspace).toMatchObject({ name: 'Acme sales' });
    expect(await rig.serviceRows('workspaces', `id=eq.${wsA}`)).toHaveLength(1);
    expect(await rig.serviceRows('workspace_members', `workspace_id=eq.${wsA}&select=user_id,email,display_name,role`)).toEqual([
      { user_id: ann.userId, email: ann.email, display_name: 'ann', role: 'owner' },
    ]);
    const stages = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${wsA}&select=name,position,probability,kind&order=position`);
    expect(stages).toEqual([
      { name: 'Lead', position: 0, probability: 10, kind: 'open' },
      { name: 'Qualified', position: 1, probability: 25, kind: 'open' },
      { name: 'Proposal', position: 2, probability: 50, kind: 'open' },
      { name: 'Negotiation', position: 3, probability: 75, kind: 'open' },
      { name: 'Won', position: 4, probability: 100, kind: 'won' },
      { name: 'Lost', position: 5, probability: 0, kind: 'lost' },
    ]);
    wsB = await rig.workspace(dan, 'Other co');
  });
});

let benToken: string;

describe('invitations', () => {
  it('member-invite stores only the token hash and returns the link; refuses non-members, bad input and a role it may not grant', async () => {
    expect(errorOf(await rig.fn('member-invite', { token: eve.token, body: { workspace_id: wsA, email: ben.email } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('member-invite', { token: dan.token, body: { workspace_id: wsA, email: ben.email } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: 'not an address' } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('member-invite', { token: ann.token, body: { workspace_id: 'nope', email: ben.email } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: ben.email, role: 'owner' } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: ann.email } }))).toEqual([409, 'already_member']);

    const res = await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: 'BEN@acme.example' } });
    expect(res.status, res.text).toBe(201);
    benToken = res.json.token;
    expect(benToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // SITE_URL is empty in a fresh clone: the link is the site's own route, and nothing was e-mailed.
    expect(res.json).toMatchObject({ link: `/#/invite/${benToken}`, emailed: false, invitation: { email: ben.email, role: 'member', invited_by: ann.userId } });
    expect(res.json.invitation.token_hash).toBeUndefined();
    const [stored] = await rig.serviceRows('invitations', `workspace_id=eq.${wsA}&email=eq.${ben.email}`);
    expect(stored.token_hash).toBe(sha256(benToken));
    expect(JSON.stringify(stored)).not.toContain(benToken);
    const days = (Date.parse(stored.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);
  });

  it('invite-accept is bound to the invited address, single use, and refuses unknown and expired links', async () => {
    expect(errorOf(await rig.fn('invite-accept', { body: { token: benToken } }))).toEqual([401, 'sign_in_required']);
    expect(errorOf(await rig.fn('invite-accept', { token: cat.token, body: { token: benToken } }))).toEqual([403, 'email_mismatch']);
    expect(errorOf(await rig.fn('invite-accept', { token: ben.token, body: { token: 'x'.repeat(43) } }))).toEqual([404, 'invitation_not_found']);
    expect(errorOf(await rig.fn('invite-accept', { token: ben.token, body: {} }))).toEqual([400, 'missing_field']);

    const res = await rig.fn('invite-accept', { token: ben.token, body: { token: benToken } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ workspace_id: wsA, already: false, member: { user_id: ben.userId, role: 'member', email: ben.email } });
    const again = await rig.fn('invite-accept', { token: ben.token, body: { token: benToken } });
    expect([again.status, again.json.already]).toEqual([200, true]);
    const [used] = await rig.serviceRows('invitations', `token_hash=eq.${sha256(benToken)}`);
    expect(used).toMatchObject({ accepted_by: ben.userId, accepted_at: expect.any(String) });

    // An expired link: the invitation's expiry moved into the past with the service key.
    const invite = await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: cat.email } });
    expect(invite.status).toBe(201);
    const expired = await rig.supabase().from('invitations').update({ expires_at: new Date(Date.now() - 1000).toISOString() }).eq('id', invite.json.invitation.id).select();
    expect(expired.error).toBeNull();
    expect(errorOf(await rig.fn('invite-accept', { token: cat.token, body: { token: invite.json.token } }))).toEqual([409, 'invitation_expired']);
    // A new invitation replaces the pending one; the old link no longer works.
    const fresh = await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: cat.email } });
    expect(await rig.serviceRows('invitations', `workspace_id=eq.${wsA}&email=eq.${cat.email}&select=id`)).toEqual([{ id: fresh.json.invitation.id }]);
    expect(errorOf(await rig.fn('invite-accept', { token: cat.token, body: { token: invite.json.token } }))).toEqual([404, 'invitation_not_found']);
    expect((await rig.fn('invite-accept', { token: cat.token, body: { token: fresh.json.token } })).status).toBe(200);
  });
});

describe('roles', () => {
  it('member-role: members may not, admins manage members only, owners anything; the last owner stays', async () => {
    const role = (who: EndUser, userId: string, r: string) => rig.fn('member-role', { token: who.token, body: { workspace_id: wsA, user_id: userId, role: r } });
    expect(errorOf(await role(cat, ben.userId, 'admin'))).toEqual([403, 'role_required']);
    expect(errorOf(await role(eve, ben.userId, 'admin'))).toEqual([403, 'not_a_member']);
    expect(errorOf(await role(ann, ben.userId, 'boss'))).toEqual([400, 'invalid_field']);
    expect(errorOf(await role(ann, eve.userId, 'admin'))).toEqual([404, 'not_found']);
    expect(errorOf(await role(ann, ann.userId, 'admin'))).toEqual([409, 'last_owner']);

    const promoted = await role(ann, ben.userId, 'admin');
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.json).toMatchObject({ changed: true, member: { user_id: ben.userId, role: 'admin' } });
    // An admin manages members but not the owner, and grants no admin or owner role.
    expect(errorOf(await role(ben, ann.userId, 'member'))).toEqual([403, 'role_required']);
    expect(errorOf(await role(ben, cat.userId, 'admin'))).toEqual([403, 'role_required']);
    expect(errorOf(await rig.fn('member-invite', { token: ben.token, body: { workspace_id: wsA, email: eve.email, role: 'admin' } }))).toEqual([403, 'role_required']);
    expect((await rig.fn('member-invite', { token: ben.token, body: { workspace_id: wsA, email: 'gus@acme.example' } })).status).toBe(201);
    expect(errorOf(await rig.fn('member-invite', { token: cat.token, body: { workspace_id: wsA, email: 'hal@acme.example' } }))).toEqual([403, 'role_required']);

    // Two owners: either may step down, not both.
    expect((await role(ann, cat.userId, 'owner')).json.member.role).toBe('owner');
    expect((await role(cat, cat.userId, 'member')).json.member.role).toBe('member');
    const roles = await rig.serviceRows('workspace_members', `workspace_id=eq.${wsA}&select=user_id,role&order=created_at`);
    expect(roles).toEqual([
      { user_id: ann.userId, role: 'owner' },
      { user_id: ben.userId, role: 'admin' },
      { user_id: cat.userId, role: 'member' },
    ]);
  });

  it('member-remove: a member leaves, an admin removes members only, the last owner can neither leave nor be removed', async () => {
    const remove = (who: EndUser, userId: string) => rig.fn('member-remove', { token: who.token, body: { workspace_id: wsA, user_id: userId } });
    expect(errorOf(await remove(cat, ben.userId))).toEqual([403, 'role_required']);
    expect(errorOf(await remove(ben, ann.userId))).toEqual([403, 'role_required']);
    expect(errorOf(await remove(ann, ann.userId))).toEqual([409, 'last_owner']);
    expect(errorOf(await remove(dan, cat.userId))).toEqual([403, 'not_a_member']);
    expect(errorOf(await remove(ann, eve.userId))).toEqual([404, 'not_found']);

    const left = await remove(cat, cat.userId);
    expect(left.status, left.text).toBe(200);
    expect(left.json).toEqual({ removed: { user_id: cat.userId, role: 'member' }, left: true });
    expect(await rig.serviceRows('workspace_members', `workspace_id=eq.${wsA}&user_id=eq.${cat.userId}`)).toEqual([]);
    // Back in through a new invitation, then removed by the admin.
    await rig.join(wsA, ann, cat);
    const removed = await remove(ben, cat.userId);
    expect([removed.status, removed.json.left]).toEqual([200, false]);
    expect(errorOf(await rig.fn('workspace-overview', { token: cat.token, query: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
  });
});

describe('the overview and isolation', () => {
  it('workspace-overview counts what the workspace has and weights the open pipeline; members see no pending invitations', async () => {
    const db = rig.supabase(ann.token);
    const contact = await db.from('contacts').insert({ workspace_id: wsA, full_name: 'Olive Buyer', email: 'olive@client.example' }).select().single();
    expect(contact.error).toBeNull();
    const stages = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${wsA}&order=position`);
    const deals = await db
      .from('deals')
      .insert([
        { workspace_id: wsA, title: 'Big', stage_id: stages[2].id, amount: 1000, contact_id: contact.data.id },
        { workspace_id: wsA, title: 'Done', stage_id: stages[4].id, amount: 500 },
      ])
      .select();
    expect(deals.error).toBeNull();
    const task = await db.from('tasks').insert({ workspace_id: wsA, title: 'Call Olive', due_at: new Date(Date.now() + 86_400_000).toISOString() }).select();
    expect(task.error).toBeNull();

    const res = await rig.fn('workspace-overview', { token: ann.token, query: { workspace_id: wsA } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      workspace: { id: wsA, name: 'Acme sales' },
      role: 'owner',
      counts: { contacts: 1, companies: 0, deals: 2 },
      open_pipeline: { deals: 1, totals: [{ currency: 'USD', amount: 1000, weighted: 500 }] },
      tasks_due: [{ title: 'Call Olive' }],
    });
    expect(res.json.members.map((m: any) => [m.email, m.role])).toEqual([
      [ann.email, 'owner'],
      [ben.email, 'admin'],
    ]);
    expect(res.json.pending_invitations.map((i: any) => i.email)).toEqual(['gus@acme.example']);
    const asAdmin = await rig.fn('workspace-overview', { token: ben.token, query: { workspace_id: wsA } });
    expect(asAdmin.json.pending_invitations).toHaveLength(1);
    expect(errorOf(await rig.fn('workspace-overview', { token: ann.token }))).toEqual([400, 'missing_field']);
    expect(errorOf(await rig.fn('workspace-overview', { token: dan.token, query: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('workspace-overview', { query: { workspace_id: wsA } }))).toEqual([401, 'sign_in_required']);
  });

  it("a member of workspace B sees none of A's rows through the data API, and cannot write into A", async () => {
    const dandb = rig.supabase(dan.token);
    for (const table of ['workspaces', 'workspace_members', 'invitations', 'pipeline_stages', 'contacts', 'deals', 'tasks']) {
      const { data, error } = await dandb.from(table).select('*').eq(table === 'workspaces' ? 'id' : 'workspace_id', wsA);
      expect(error, table).toBeNull();
      expect(data, table).toEqual([]);
    }
    // Their own workspace's rows, and only those.
    const mine = await dandb.from('workspaces').select('id');
    expect(mine.data).toEqual([{ id: wsB }]);
    const insert = await dandb.from('contacts').insert({ workspace_id: wsA, full_name: 'Intruder' }).select();
    expect(insert.error).not.toBeNull();
    expect(await rig.serviceRows('contacts', `workspace_id=eq.${wsA}&full_name=eq.Intruder`)).toEqual([]);
    // Members of A see A's contact; nobody writes a service table (workspaces, memberships) directly.
    const anns = await rig.supabase(ann.token).from('contacts').select('full_name').eq('workspace_id', wsA);
    expect(anns.data).toEqual([{ full_name: 'Olive Buyer' }]);
    const selfPromote = await rig.supabase(ben.token).from('workspace_members').update({ role: 'owner' }).eq('user_id', ben.userId).select();
    expect(selfPromote.data ?? []).toEqual([]);
    expect((await rig.serviceRows('workspace_members', `user_id=eq.${ben.userId}&select=role`))[0].role).toBe('admin');
    // An outsider's token reads nothing at all.
    const outsider = await rig.supabase(eve.token).from('contacts').select('id');
    expect(outsider.data).toEqual([]);
  });
});

describe('integrations', () => {
  let connectionId: string;

  it('integration-connect starts the hosted connect; the browser comes back; integrations-status shows the caller connected', async () => {
    const before = await rig.fn('integrations-status', { token: ann.token, query: { workspace_id: wsA } });
    expect(before.status, before.text).toBe(200);
    expect(before.json.toolkits.map((t: any) => [t.toolkit, t.connected])).toEqual([
      ['gmail', false],
      ['googlecalendar', false],
      ['linkedin', false],
    ]);

    expect(errorOf(await rig.fn('integration-connect', { body: { toolkit: 'gmail', redirect_url: `${SITE_ORIGIN}/` } }))).toEqual([401, 'sign_in_required']);
    expect(errorOf(await rig.fn('integration-connect', { token: ann.token, body: { toolkit: 'slack', redirect_url: `${SITE_ORIGIN}/` } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('integration-connect', { token: ann.token, body: { toolkit: 'gmail', redirect_url: 'javascript:alert(1)' } }))).toEqual([400, 'invalid_field']);
    // The platform's own check: redirects only to the app's allowed origins.
    expect((await rig.fn('integration-connect', { token: ann.token, body: { toolkit: 'gmail', redirect_url: 'https://evil.example/' } })).status).toBe(400);

    const started = await rig.fn('integration-connect', { token: ann.token, body: { toolkit: 'gmail', redirect_url: `${SITE_ORIGIN}/#/settings` } });
    expect(started.status, started.text).toBe(200);
    expect(started.json).toMatchObject({ toolkit: 'gmail', auth_url: expect.stringContaining(rig.fakes.composio.url), connection_request_id: expect.any(String) });
    const { location } = await followLikeABrowser(started.json.auth_url, SITE_ORIGIN);
    expect(location.searchParams.get('status')).toBe('success');
    connectionId = location.searchParams.get('connectionId')!;

    const after = await rig.fn('integrations-status', { token: ann.token, query: { workspace_id: wsA } });
    const gmail = after.json.toolkits.find((t: any) => t.toolkit === 'gmail');
    expect(gmail).toMatchObject({ connected: true, connections: [{ id: connectionId, status: 'active' }], members: [{ user_id: ann.userId, syncing: false }] });
    // Another member sees that Ann connected Gmail, but not her accounts.
    const bens = await rig.fn('integrations-status', { token: ben.token, query: { workspace_id: wsA } });
    expect(bens.json.toolkits.find((t: any) => t.toolkit === 'gmail')).toEqual({
      toolkit: 'gmail',
      purpose: expect.any(String),
      connected: false,
      connections: [],
      members: [{ user_id: ann.userId, display_name: expect.anything(), email: ann.email, syncing: false, last_synced_at: null, last_error: null }],
    });
    expect(errorOf(await rig.fn('integrations-status', { token: dan.token, query: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
  });

  it('member-invite e-mails the link from the inviter\'s Gmail once SITE_URL is set', async () => {
    const env = await rig.platform('PATCH', `/v1/${rig.appId}/functions/member-invite/env`, { SITE_URL: `${SITE_ORIGIN}/` });
    expect(env.status, env.text).toBe(200);
    const res = await rig.fn('member-invite', { token: ann.token, body: { workspace_id: wsA, email: 'ivy@acme.example', role: 'admin' } });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ emailed: true, link: expect.stringMatching(new RegExp(`^${SITE_ORIGIN}/#/invite/[A-Za-z0-9_-]{43}$`)) });
    expect(res.json.token).toBeUndefined();
    const sent = rig.fakes.composio.requestsTo('/api/v3/tools/execute/GMAIL_SEND_EMAIL').at(-1)!;
    expect(sent.body).toMatchObject({ user_id: `${rig.appId}:${ann.userId}`, arguments: { recipient_email: 'ivy@acme.example', subject: expect.stringContaining('Acme sales') } });
    expect(sent.body.arguments.body).toContain(res.json.link);
    const [stored] = await rig.serviceRows('invitations', `email=eq.ivy@acme.example`);
    expect(stored.token_hash).toBe(sha256(res.json.link.split('#/invite/')[1]));
    // Ben (admin) has no Gmail: his invitation is only returned, as a full link.
    const bens = await rig.fn('member-invite', { token: ben.token, body: { workspace_id: wsA, email: 'jo@acme.example' } });
    expect(bens.json).toMatchObject({ emailed: false, link: expect.stringContaining(`${SITE_ORIGIN}/#/invite/`) });
  });

  it('integration-disconnect removes the caller\'s account at the vendor; another person\'s is not found', async () => {
    expect(errorOf(await rig.fn('integration-disconnect', { token: ann.token, body: { connection_id: 'x' } }))).toEqual([400, 'invalid_field']);
    expect((await rig.fn('integration-disconnect', { token: ben.token, body: { connection_id: connectionId } })).status).toBe(404);
    const res = await rig.fn('integration-disconnect', { token: ann.token, body: { connection_id: connectionId } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ connection_id: connectionId, disconnected: true });
    const accounts = [...rig.fakes.composio.accounts.values()].filter((a) => a.userId === `${rig.appId}:${ann.userId}` && a.toolkit === 'gmail');
    expect(accounts.map((a) => a.deleted)).toEqual([true]);
    const after = await rig.fn('integrations-status', { token: ann.token, query: { workspace_id: wsA } });
    expect(after.json.toolkits.find((t: any) => t.toolkit === 'gmail')).toMatchObject({ connected: false, connections: [], members: [] });
    expect((await rig.fn('integration-disconnect', { token: ann.token, body: { connection_id: connectionId } })).status).toBe(404);
  });
});
