// The CRM's outreach families against the fake Composio, on one cloned CRM (test/helpers/crm.ts): mail and calendar
// sync (sync-enable, mail-sync, mail-sync-now, mail-send, calendar-sync, calendar-sync-now, calendar-event-create),
// campaigns (campaign-add-recipients, campaign-launch, campaign-send, campaign-pause) and social posting
// (social-draft, social-schedule, social-publish). They share one platform because they share its vendors: a
// campaign is sent through the mail integration and a reply found by the mail sync stops it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { startCrm, type CrmRig, type EndUser } from '../helpers/crm.ts';

let rig: CrmRig;
let db: SupabaseClient;
let ann: EndUser; // workspace owner, with Gmail, Calendar and LinkedIn connected
let bob: EndUser; // a member, nothing connected
let eve: EndUser; // a member of another workspace only
let ws: string;
let carol: { id: string; email: string };
let dave: { id: string }; // a contact without an e-mail address
let dealId: string;

const NOW = Date.now();
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const MINUTE = 60_000;
const DAY = 86_400_000;

/** The arguments each execution of a tool was sent with, and whose account it ran as. */
const executed = (slug: string) => rig.fakes.composio.requestsTo(`/api/v3/tools/execute/${slug}`).map((r) => ({ user: r.body.user_id, args: r.body.arguments }));
const asVendorUser = (u: EndUser) => `${rig.appId}:${u.userId}`;

async function insert(table: string, rows: unknown): Promise<any[]> {
  const { data, error } = await db.from(table).insert(rows as never).select();
  if (error) throw new Error(`${table}: ${error.message}`);
  return data as any[];
}

beforeAll(async () => {
  rig = await startCrm();
  db = rig.supabase();
  [ann, bob, eve] = await Promise.all([rig.signUp('ann@seller.io'), rig.signUp('bob@seller.io'), rig.signUp('eve@other.io')]);
  ws = await rig.workspace(ann, 'Outreach');
  await rig.join(ws, ann, bob);
  await rig.workspace(eve, 'Elsewhere');
  for (const toolkit of ['gmail', 'googlecalendar', 'linkedin']) await rig.connect(ann, toolkit);
  const [c, d] = await insert('contacts', [
    { workspace_id: ws, full_name: 'Carol Client', email: 'carol@client.io' },
    { workspace_id: ws, full_name: 'Dave Noaddress' },
  ]);
  carol = { id: c.id, email: c.email };
  dave = { id: d.id };
  const [stage] = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${ws}&order=position&limit=1`);
  [{ id: dealId }] = await insert('deals', [{ workspace_id: ws, title: 'Client rollout', stage_id: stage.id, contact_id: carol.id }]);
}, 600_000);

afterAll(async () => {
  await rig?.stop();
});

describe('mail sync', () => {
  it('refuses a non-member (403), a bad kind (400), an unconnected mailbox and a sync not turned on (409)', async () => {
    const outsider = await rig.fn('sync-enable', { token: eve.token, body: { workspace_id: ws, kind: 'mail' } });
    expect([outsider.status, outsider.json.error.code]).toEqual([403, 'not_a_member']);
    const badKind = await rig.fn('sync-enable', { token: ann.token, body: { workspace_id: ws, kind: 'fax' } });
    expect([badKind.status, badKind.json.error.code]).toEqual([400, 'invalid_field']);
    const unconnected = await rig.fn('sync-enable', { token: bob.token, body: { workspace_id: ws, kind: 'calendar' } });
    expect([unconnected.status, unconnected.json.error.code]).toEqual([409, 'not_connected']);
    expect(await rig.serviceRows('sync_state', `workspace_id=eq.${ws}`)).toEqual([]);
    const notOn = await rig.fn('mail-sync-now', { token: bob.token, body: { workspace_id: ws } });
    expect([notOn.status, notOn.json.error.code]).toEqual([409, 'sync_not_enabled']);
    const anonymous = await rig.fn('sync-enable', { body: { workspace_id: ws, kind: 'mail' } });
    expect([anonymous.status, anonymous.json.error.code]).toEqual([401, 'sign_in_required']);
  });

  it('logs e-mails with contacts on their timeline once, however often it syncs; a vendor failure is kept on the sync row', async () => {
    const on = await rig.fn('sync-enable', { token: ann.token, body: { workspace_id: ws, kind: 'mail' } });
    expect(on.status).toBe(200);
    expect(on.json).toEqual({ enabled: true, state: expect.objectContaining({ workspace_id: ws, user_id: ann.userId, kind: 'mail', cursor: null, items: 0, last_error: null }) });

    // Gmail lists newest first, a page at a time: both pages are read before the cursor moves.
    rig.fakes.composio.responders.set('GMAIL_FETCH_EMAILS', (args) =>
      args.page_token === 'page-2'
        ? {
            messages: [
              { messageId: 'm-in-1', threadId: 't-1', messageTimestamp: iso(-3 * DAY), sender: 'Carol Client <carol@client.io>', to: 'ann@seller.io', subject: 'Pricing?', messageText: 'What does it cost?', labelIds: ['INBOX'] },
            ],
          }
        : {
            messages: [
              { messageId: 'm-spam', threadId: 't-2', messageTimestamp: iso(-1 * DAY), sender: 'stranger@else.com', to: 'ann@seller.io', subject: 'Offer', messageText: 'Buy now', labelIds: ['INBOX'] },
              { messageId: 'm-out-1', threadId: 't-1', messageTimestamp: iso(-2 * DAY), sender: 'ann@seller.io', to: 'Carol <carol@client.io>', subject: 'Re: Pricing?', messageText: '$10 a seat.', labelIds: ['SENT'] },
            ],
            nextPageToken: args.page_token ? undefined : 'page-2',
          },
    );
    const now = await rig.fn('mail-sync-now', { token: ann.token, body: { workspace_id: ws } });
    expect(now.status).toBe(200);
    const cursor = String(Math.floor(new Date(iso(-1 * DAY)).getTime() / 1000));
    expect(now.json).toEqual({ logged: 2, state: expect.objectContaining({ items: 2, cursor, last_error: null, last_synced_at: expect.any(String) }) });
    expect(executed('GMAIL_FETCH_EMAILS')).toEqual([
      { user: asVendorUser(ann), args: { query: 'newer_than:30d', max_results: 50, include_payload: false } },
      { user: asVendorUser(ann), args: { query: 'newer_than:30d', max_results: 50, include_payload: false, page_token: 'page-2' } },
    ]);
    const logged = await rig.serviceRows('activities', `workspace_id=eq.${ws}&kind=eq.email&order=occurred_at`);
    expect(logged.map((a) => [a.external_id, a.direction, a.thread_id, a.contact_id, a.user_id, a.subject, a.body])).toEqual([
      ['m-in-1', 'inbound', 't-1', carol.id, ann.userId, 'Pricing?', 'What does it cost?'],
      ['m-out-1', 'outbound', 't-1', carol.id, ann.userId, 'Re: Pricing?', '$10 a seat.'],
    ]);

    // The cron syncs every syncing member from their cursor; the same messages again log nothing new.
    const cron = await rig.cron('mail-sync');
    expect([cron.status, cron.error, cron.body]).toEqual([200, null, { members: 1, logged: 0, failed: 0 }]);
    expect(executed('GMAIL_FETCH_EMAILS')[2]).toEqual({ user: asVendorUser(ann), args: { query: `after:${cursor}`, max_results: 50, include_payload: false } });
    expect(await rig.serviceRows('activities', `workspace_id=eq.${ws}&kind=eq.email`)).toHaveLength(2);

    rig.fakes.composio.faults.set('GMAIL_FETCH_EMAILS', '5xx');
    try {
      const down = await rig.fn('mail-sync-now', { token: ann.token, body: { workspace_id: ws } });
      expect([down.status, down.json.error.code]).toEqual([502, 'INTEGRATIONS_EXECUTION_FAILED']);
      const [state] = await rig.serviceRows('sync_state', `workspace_id=eq.${ws}&kind=eq.mail`);
      expect(state).toMatchObject({ cursor, items: 2, last_error: expect.stringContaining('INTEGRATIONS_EXECUTION_FAILED') });
    } finally {
      rig.fakes.composio.faults.delete('GMAIL_FETCH_EMAILS');
    }
  });

  it('mail-send sends from the caller’s Gmail and logs it on the contact and deal; refuses bad input and unreachable contacts', async () => {
    rig.fakes.composio.responders.set('GMAIL_SEND_EMAIL', () => ({ response_data: { id: 'sent-1', threadId: 't-sent-1', labelIds: ['SENT'] } }));
    const sent = await rig.fn('mail-send', { token: ann.token, body: { contact_id: carol.id, subject: 'Proposal', body: 'Attached.', deal_id: dealId } });
    expect(sent.status).toBe(201);
    expect(sent.json.activity).toMatchObject({ kind: 'email', direction: 'outbound', external_id: 'sent-1', thread_id: 't-sent-1', contact_id: carol.id, deal_id: dealId, user_id: ann.userId });
    expect(executed('GMAIL_SEND_EMAIL')).toEqual([{ user: asVendorUser(ann), args: { recipient_email: 'carol@client.io', subject: 'Proposal', body: 'Attached.' } }]);
    const [contact] = await rig.serviceRows('contacts', `id=eq.${carol.id}`);
    expect(contact.last_contacted_at).not.toBeNull();

    const noSubject = await rig.fn('mail-send', { token: ann.token, body: { contact_id: carol.id, body: 'x' } });
    expect([noSubject.status, noSubject.json.error.code]).toEqual([400, 'missing_field']);
    const noEmail = await rig.fn('mail-send', { token: ann.token, body: { contact_id: dave.id, subject: 'Hi', body: 'x' } });
    expect([noEmail.status, noEmail.json.error.code]).toEqual([409, 'no_email']);
    const outsider = await rig.fn('mail-send', { token: eve.token, body: { contact_id: carol.id, subject: 'Hi', body: 'x' } });
    expect([outsider.status, outsider.json.error.code]).toEqual([404, 'not_found']);
    // Bob has no Gmail connected: the platform's refusal is the answer, and nothing is logged.
    const unconnected = await rig.fn('mail-send', { token: bob.token, body: { contact_id: carol.id, subject: 'Hi', body: 'x' } });
    expect([unconnected.status, unconnected.json.error.code]).toEqual([400, 'INTEGRATIONS_NOT_CONNECTED']);
    expect(executed('GMAIL_SEND_EMAIL')).toHaveLength(1);
  });
});

describe('calendar sync', () => {
  it('turns events with a video link into meetings linked to contacts, by the caller and by the cron', async () => {
    rig.fakes.composio.responders.set('GOOGLECALENDAR_EVENTS_LIST', () => ({
      items: [
        {
          id: 'ev-1',
          summary: 'Demo with Carol',
          start: { dateTime: iso(DAY) },
          end: { dateTime: iso(DAY + 30 * MINUTE) },
          hangoutLink: 'https://meet.google.com/abc-defg-hij',
          attendees: [{ email: 'ann@seller.io' }, { email: 'Carol@Client.io' }],
        },
        { id: 'ev-2', summary: 'Lunch', start: { dateTime: iso(2 * DAY) }, end: { dateTime: iso(2 * DAY + 60 * MINUTE) }, location: 'Cafe' },
        { id: 'ev-3', summary: 'Partner sync', start: { dateTime: iso(3 * DAY) }, end: { dateTime: iso(3 * DAY + 60 * MINUTE) }, location: 'https://zoom.us/j/123456789', attendees: [{ email: 'x@partner.io' }] },
      ],
    }));
    const off = await rig.fn('calendar-sync-now', { token: ann.token, body: { workspace_id: ws } });
    expect([off.status, off.json.error.code]).toEqual([409, 'sync_not_enabled']);
    expect((await rig.fn('sync-enable', { token: ann.token, body: { workspace_id: ws, kind: 'calendar' } })).status).toBe(200);

    const now = await rig.fn('calendar-sync-now', { token: ann.token, body: { workspace_id: ws } });
    expect(now.status).toBe(200);
    expect(now.json).toEqual({ logged: 2, state: expect.objectContaining({ kind: 'calendar', items: 2, last_error: null }) });
    const [call] = executed('GOOGLECALENDAR_EVENTS_LIST');
    expect(call).toEqual({
      user: asVendorUser(ann),
      args: { calendarId: 'primary', timeMin: expect.any(String), timeMax: expect.any(String), singleEvents: true, orderBy: 'startTime', maxResults: 100 },
    });
    expect(new Date(call!.args.timeMax).getTime() - new Date(call!.args.timeMin).getTime()).toBe(14 * DAY + 3_600_000);
    const meetings = await rig.serviceRows('meetings', `workspace_id=eq.${ws}&order=starts_at`);
    expect(meetings.map((m) => [m.calendar_event_id, m.title, m.meeting_url, m.contact_id, m.user_id, new Date(m.starts_at).toISOString()])).toEqual([
      ['ev-1', 'Demo with Carol', 'https://meet.google.com/abc-defg-hij', carol.id, ann.userId, iso(DAY)],
      ['ev-3', 'Partner sync', 'https://zoom.us/j/123456789', null, ann.userId, iso(3 * DAY)],
    ]);

    // The cron: the same events update the same rows (one per event and workspace).
    const cron = await rig.cron('calendar-sync');
    expect([cron.status, cron.body]).toEqual([200, { members: 1, logged: 2, failed: 0 }]);
    expect(await rig.serviceRows('meetings', `workspace_id=eq.${ws}`)).toHaveLength(2);

    // Turned off, the cron no longer reads this calendar; the meetings stay.
    const off2 = await rig.fn('sync-enable', { token: ann.token, body: { workspace_id: ws, kind: 'calendar', enabled: false } });
    expect([off2.status, off2.json]).toEqual([200, { enabled: false, state: null }]);
    expect((await rig.cron('calendar-sync')).body).toEqual({ members: 0, logged: 0, failed: 0 });
    expect(executed('GOOGLECALENDAR_EVENTS_LIST')).toHaveLength(2);
  });

  it('calendar-event-create books a Meet on the caller’s calendar with the contact and records the meeting on the deal', async () => {
    rig.fakes.composio.responders.set('GOOGLECALENDAR_CREATE_EVENT', (args) => ({
      response_data: { id: 'ev-new', summary: args.summary, hangoutLink: 'https://meet.google.com/new-abcd-efg', start: { dateTime: args.start_datetime }, end: { dateTime: iso(5 * DAY + 30 * MINUTE) } },
    }));
    const body = { contact_id: carol.id, title: 'Contract review', starts_at: iso(5 * DAY), ends_at: iso(5 * DAY + 90 * MINUTE), deal_id: dealId };
    const made = await rig.fn('calendar-event-create', { token: ann.token, body });
    expect(made.status).toBe(201);
    expect(executed('GOOGLECALENDAR_CREATE_EVENT')).toEqual([
      {
        user: asVendorUser(ann),
        args: {
          calendar_id: 'primary',
          summary: 'Contract review',
          description: '',
          start_datetime: iso(5 * DAY),
          timezone: 'UTC',
          event_duration_hour: 1,
          event_duration_minutes: 30,
          attendees: ['carol@client.io'],
          create_meeting_room: true,
        },
      },
    ]);
    expect(made.json.meeting_url).toBe('https://meet.google.com/new-abcd-efg');
    const [row] = await rig.serviceRows('meetings', `calendar_event_id=eq.ev-new`);
    expect(row).toMatchObject({ workspace_id: ws, title: 'Contract review', deal_id: dealId, contact_id: carol.id, meeting_url: 'https://meet.google.com/new-abcd-efg', user_id: ann.userId });

    const backwards = await rig.fn('calendar-event-create', { token: ann.token, body: { ...body, ends_at: iso(4 * DAY) } });
    expect([backwards.status, backwards.json.error.code]).toEqual([400, 'invalid_field']);
    const foreignDeal = await rig.fn('calendar-event-create', { token: ann.token, body: { ...body, deal_id: carol.id } });
    expect([foreignDeal.status, foreignDeal.json.error.code]).toEqual([400, 'invalid_field']);
    expect(executed('GOOGLECALENDAR_CREATE_EVENT')).toHaveLength(1);
  });
});

describe('campaigns', () => {
  let campaignId: string;
  let erin: { id: string };

  it('adds recipients to a draft: contacts without an address skipped, foreign contacts refused (400), outsiders 404', async () => {
    [erin] = await insert('contacts', [{ workspace_id: ws, full_name: 'Erin Bounce', email: 'erin@bounce.io' }]);
    [{ id: campaignId }] = await insert('campaigns', [{ workspace_id: ws, name: 'Spring', user_id: bob.userId }]);
    await insert('campaign_steps', [
      { workspace_id: ws, campaign_id: campaignId, position: 0, delay_days: 0, subject: 'Hi {{first_name}}', body: 'A note for {{full_name}}.' },
      { workspace_id: ws, campaign_id: campaignId, position: 1, delay_days: 3, subject: 'Following up', body: 'Any thoughts, {{first_name}}?' },
    ]);
    const [foreign] = await insert('contacts', [{ workspace_id: (await rig.serviceRows('workspaces', 'name=eq.Elsewhere'))[0].id, full_name: 'Far Away', email: 'far@away.io' }]);

    const added = await rig.fn('campaign-add-recipients', { token: bob.token, body: { campaign_id: campaignId, contact_ids: [carol.id, dave.id, erin!.id] } });
    expect([added.status, added.json]).toEqual([201, { added: 2, skipped_no_email: [dave.id] }]);
    const again = await rig.fn('campaign-add-recipients', { token: bob.token, body: { campaign_id: campaignId, contact_ids: [carol.id] } });
    expect([again.status, again.json]).toEqual([201, { added: 0, skipped_no_email: [] }]);
    const mixed = await rig.fn('campaign-add-recipients', { token: bob.token, body: { campaign_id: campaignId, contact_ids: [carol.id, foreign.id] } });
    expect([mixed.status, mixed.json.error.code]).toEqual([400, 'unknown_contacts']);
    const notIds = await rig.fn('campaign-add-recipients', { token: bob.token, body: { campaign_id: campaignId, contact_ids: 'all' } });
    expect([notIds.status, notIds.json.error.code]).toEqual([400, 'invalid_field']);
    const outsider = await rig.fn('campaign-add-recipients', { token: eve.token, body: { campaign_id: campaignId, contact_ids: [carol.id] } });
    expect([outsider.status, outsider.json.error.code]).toEqual([404, 'not_found']);
    const recipients = await rig.serviceRows('campaign_recipients', `campaign_id=eq.${campaignId}&order=contact_id`);
    expect(recipients.map((r) => [r.contact_id, r.status, r.next_step, r.next_send_at]).sort()).toEqual(
      [
        [carol.id, 'pending', 0, null],
        [erin!.id, 'pending', 0, null],
      ].sort(),
    );
  });

  it('launch asks a person to approve the first send through the substrate; the campaign waits for it', async () => {
    const launched = await rig.fn('campaign-launch', { token: bob.token, body: { campaign_id: campaignId } });
    expect(launched.status).toBe(202);
    expect(launched.json.campaign).toMatchObject({ id: campaignId, status: 'pending_approval', sender_user_id: bob.userId });
    const [proposal] = await rig.serviceRows('proposals', `campaign_id=eq.${campaignId}`);
    expect(proposal).toMatchObject({
      workspace_id: ws,
      user_id: bob.userId,
      kind: 'campaign_launch',
      status: 'pending',
      action_id: launched.json.proposal.action_id,
      summary: 'Launch campaign "Spring": first e-mail "Hi {{first_name}}" to 2 recipients',
      payload: { to: ['carol@client.io', 'erin@bounce.io'], subject: 'Hi {{first_name}}', body: 'A note for {{full_name}}.', recipients: 2, sender_user_id: bob.userId },
    });
    const action = (await rig.control.query('select capability, payload, status, source_app_id from substrate_actions where id = $1', [proposal.action_id])).rows[0];
    expect(action).toEqual({
      capability: 'send_email_draft',
      payload: { to: ['carol@client.io', 'erin@bounce.io'], subject: 'Hi {{first_name}}', body: 'A note for {{full_name}}.' },
      status: 'proposed',
      source_app_id: rig.appId,
    });
    const [campaign] = await rig.serviceRows('campaigns', `id=eq.${campaignId}`);
    expect(campaign.status).toBe('pending_approval');

    const twice = await rig.fn('campaign-launch', { token: bob.token, body: { campaign_id: campaignId } });
    expect([twice.status, twice.json.error.code]).toEqual([409, 'wrong_status']);
    const addLate = await rig.fn('campaign-add-recipients', { token: bob.token, body: { campaign_id: campaignId, contact_ids: [carol.id] } });
    expect([addLate.status, addLate.json.error.code]).toEqual([409, 'wrong_status']);
    // Nothing is sent before the approval.
    expect((await rig.cron('campaign-send')).body).toEqual({ sent: 0, completed: 0, failed: 0 });
  });

  it('approved, it sends due steps from the sender’s mailbox, pauses and resumes, fails a bounced recipient, and a reply stops the sequence', async () => {
    await rig.connect(bob, 'gmail');
    const [proposal] = await rig.serviceRows('proposals', `campaign_id=eq.${campaignId}`);
    const decided = await rig.fn('approval-decide', { token: ann.token, body: { proposal_id: proposal.id, decision: 'approve' } });
    expect(decided.status).toBe(200);
    const [active] = await rig.serviceRows('campaigns', `id=eq.${campaignId}`);
    expect(active).toMatchObject({ status: 'active', approved_at: expect.any(String) });
    expect((await rig.serviceRows('campaign_recipients', `campaign_id=eq.${campaignId}`)).map((r) => r.status)).toEqual(['active', 'active']);

    // Paused, the cron leaves it alone; resumed, it goes on.
    const paused = await rig.fn('campaign-pause', { token: bob.token, body: { campaign_id: campaignId, paused: true } });
    expect([paused.status, paused.json.campaign.status]).toEqual([200, 'paused']);
    expect((await rig.cron('campaign-send')).body).toEqual({ sent: 0, completed: 0, failed: 0 });
    const pausedAgain = await rig.fn('campaign-pause', { token: bob.token, body: { campaign_id: campaignId, paused: true } });
    expect([pausedAgain.status, pausedAgain.json.error.code]).toEqual([409, 'wrong_status']);
    const badFlag = await rig.fn('campaign-pause', { token: bob.token, body: { campaign_id: campaignId, paused: 'yes' } });
    expect([badFlag.status, badFlag.json.error.code]).toEqual([400, 'invalid_field']);
    const resumed = await rig.fn('campaign-pause', { token: bob.token, body: { campaign_id: campaignId, paused: false } });
    expect([resumed.status, resumed.json.campaign.status]).toEqual([200, 'active']);

    const sendsBefore = executed('GMAIL_SEND_EMAIL').length;
    rig.fakes.composio.responders.set('GMAIL_SEND_EMAIL', (args) => {
      if (args.recipient_email === 'erin@bounce.io') throw new Error('Recipient address rejected: mailbox unavailable');
      return { id: 'camp-1', threadId: 'camp-thread-1' };
    });
    const run = await rig.cron('campaign-send');
    expect(run.body).toEqual({ sent: 1, completed: 0, failed: 1 });
    const sends = executed('GMAIL_SEND_EMAIL').slice(sendsBefore);
    expect(sends.sort((a, b) => a.args.recipient_email.localeCompare(b.args.recipient_email))).toEqual([
      { user: asVendorUser(bob), args: { recipient_email: 'carol@client.io', subject: 'Hi Carol', body: 'A note for Carol Client.' } },
      { user: asVendorUser(bob), args: { recipient_email: 'erin@bounce.io', subject: 'Hi Erin', body: 'A note for Erin Bounce.' } },
    ]);
    const [carolR] = await rig.serviceRows('campaign_recipients', `campaign_id=eq.${campaignId}&contact_id=eq.${carol.id}`);
    expect(carolR).toMatchObject({ status: 'active', next_step: 1, thread_id: 'camp-thread-1', last_sent_at: expect.any(String), error: null });
    expect(new Date(carolR.next_send_at).getTime() - new Date(carolR.last_sent_at).getTime()).toBe(3 * DAY);
    const [erinR] = await rig.serviceRows('campaign_recipients', `campaign_id=eq.${campaignId}&contact_id=eq.${erin.id}`);
    expect(erinR).toMatchObject({ status: 'failed', next_step: 0, next_send_at: null, error: expect.stringContaining('Recipient address rejected') });
    const [logged] = await rig.serviceRows('activities', `external_id=eq.camp-1`);
    expect(logged).toMatchObject({ kind: 'email', direction: 'outbound', contact_id: carol.id, user_id: bob.userId, subject: 'Hi Carol', thread_id: 'camp-thread-1' });
    // Not due again for three days.
    expect((await rig.cron('campaign-send')).body).toEqual({ sent: 0, completed: 0, failed: 0 });

    // Carol answers in the campaign's thread: bob's mail sync logs it and stops her sequence; nobody is left, so the
    // campaign completes.
    expect((await rig.fn('sync-enable', { token: bob.token, body: { workspace_id: ws, kind: 'mail' } })).status).toBe(200);
    rig.fakes.composio.responders.set('GMAIL_FETCH_EMAILS', () => ({
      messages: [{ messageId: 'reply-1', threadId: 'camp-thread-1', messageTimestamp: new Date().toISOString(), sender: 'carol@client.io', to: 'bob@seller.io', subject: 'Re: Hi Carol', messageText: 'Interested!', labelIds: ['INBOX'] }],
    }));
    const sync = await rig.cron('mail-sync');
    expect(sync.body).toEqual({ members: 2, logged: 1, failed: 0 });
    const [replied] = await rig.serviceRows('campaign_recipients', `campaign_id=eq.${campaignId}&contact_id=eq.${carol.id}`);
    expect(replied).toMatchObject({ status: 'replied', next_send_at: null, next_step: 1 });
    expect((await rig.cron('campaign-send')).body).toEqual({ sent: 0, completed: 0, failed: 0 });
    const [done] = await rig.serviceRows('campaigns', `id=eq.${campaignId}`);
    expect(done.status).toBe('completed');
  });
});

describe('social posting', () => {
  it('drafts with the AI gateway, schedules (author or admin only) and publishes due posts through the author’s LinkedIn', async () => {
    const outsider = await rig.fn('social-draft', { token: eve.token, body: { workspace_id: ws, topic: 'x', network: 'linkedin' } });
    expect([outsider.status, outsider.json.error.code]).toEqual([403, 'not_a_member']);
    const badNetwork = await rig.fn('social-draft', { token: ann.token, body: { workspace_id: ws, topic: 'x', network: 'myspace' } });
    expect([badNetwork.status, badNetwork.json.error.code]).toEqual([400, 'invalid_field']);

    const chatsBefore = rig.fakes.openai.requests.filter((r) => r.path === '/chat/completions').length;
    const drafted = await rig.fn('social-draft', { token: ann.token, body: { workspace_id: ws, topic: 'Our spring pricing', network: 'linkedin' } });
    expect(drafted.status).toBe(201);
    expect(drafted.json.post).toMatchObject({ workspace_id: ws, user_id: ann.userId, network: 'linkedin', topic: 'Our spring pricing', body: 'echo: Our spring pricing', status: 'draft' });
    const chats = rig.fakes.openai.requests.filter((r) => r.path === '/chat/completions').slice(chatsBefore);
    expect(chats).toHaveLength(1);
    expect(chats[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Our spring pricing' });
    const tweet = await rig.fn('social-draft', { token: ann.token, body: { workspace_id: ws, topic: 'Short one', network: 'twitter' } });
    expect(tweet.status).toBe(201);

    const byMember = await rig.fn('social-schedule', { token: bob.token, body: { post_id: drafted.json.post.id, scheduled_at: iso(-MINUTE) } });
    expect([byMember.status, byMember.json.error.code]).toEqual([403, 'not_author']);
    const badTime = await rig.fn('social-schedule', { token: ann.token, body: { post_id: drafted.json.post.id, scheduled_at: 'tomorrow-ish' } });
    expect([badTime.status, badTime.json.error.code]).toEqual([400, 'invalid_field']);
    const scheduled = await rig.fn('social-schedule', { token: ann.token, body: { post_id: drafted.json.post.id, scheduled_at: iso(-MINUTE), body: 'Spring pricing is live.' } });
    expect(scheduled.status).toBe(200);
    expect(scheduled.json.post).toMatchObject({ status: 'scheduled', body: 'Spring pricing is live.', scheduled_at: expect.any(String) });
    expect((await rig.fn('social-schedule', { token: ann.token, body: { post_id: tweet.json.post.id, scheduled_at: iso(-MINUTE) } })).status).toBe(200);
    const later = await rig.fn('social-draft', { token: ann.token, body: { workspace_id: ws, topic: 'Later', network: 'linkedin' } });
    expect((await rig.fn('social-schedule', { token: ann.token, body: { post_id: later.json.post.id, scheduled_at: iso(DAY) } })).status).toBe(200);

    rig.fakes.composio.responders.set('LINKEDIN_GET_MY_INFO', () => ({ response_dict: { author_id: 'urn:li:person:ann-1', name: 'Ann' } }));
    rig.fakes.composio.responders.set('LINKEDIN_CREATE_LINKED_IN_POST', () => ({ response_data: { id: 'urn:li:share:42' } }));
    const run = await rig.cron('social-publish');
    // The X post fails: the CRM's clone has no twitter toolkit enabled, and the reason is kept on the post.
    expect(run.body).toEqual({ due: 2, published: 1, failed: 1 });
    expect(executed('LINKEDIN_CREATE_LINKED_IN_POST')).toEqual([
      { user: asVendorUser(ann), args: { author: 'urn:li:person:ann-1', commentary: 'Spring pricing is live.', visibility: 'PUBLIC', lifecycleState: 'PUBLISHED' } },
    ]);
    const posts = await rig.serviceRows('social_posts', `workspace_id=eq.${ws}&order=created_at`);
    expect(posts.map((p) => [p.network, p.status, p.external_id, Boolean(p.published_at), p.error === null])).toEqual([
      ['linkedin', 'published', 'urn:li:share:42', true, true],
      ['twitter', 'failed', null, false, false],
      ['linkedin', 'scheduled', null, false, true],
    ]);
    expect(posts[1].error).toMatch(/^INTEGRATIONS_/);
    const republish = await rig.fn('social-schedule', { token: ann.token, body: { post_id: drafted.json.post.id, scheduled_at: iso(DAY) } });
    expect([republish.status, republish.json.error.code]).toEqual([409, 'wrong_status']);
  });
});
