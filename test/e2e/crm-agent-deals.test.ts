// The cloned CRM's agent and search, deal proposals and substrate proxy functions (issue 29), on one clone of the
// template with the fake vendors: notes, e-mails, calls and transcripts indexed as RAG documents with their workspace
// in the metadata (re-indexed when changed, removed when their entry is gone), search and the streamed agent answer
// citing them and nothing of another workspace; deals mirrored as substrate entities, stage changes, next steps and
// forecasts proposed in the owner's ledger and applied once whoever decides (an admin through approval-decide, the
// owner on the platform through the signed outbox webhook), the pipeline's totals, and the change stream's ticket.
import { createHmac } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrm, type CrmRig, type EndUser } from '../helpers/crm.ts';
import { request, substrateKeyOf, type RawResponse } from './e2e-helpers.ts';

let rig: CrmRig;
let ann: EndUser; // owner of workspace A
let ben: EndUser; // member of A
let cat: EndUser; // admin of A
let dan: EndUser; // owner of workspace B, in nothing of A
let wsA: string;
let wsB: string;
let substrateKey: string; // the owner's, acting as the human on REST
let stages: Record<string, string>; // A's stage ids by name
let contactId: string; // Dana Lee, in A
let noteId: string;
let dealId: string;

const OUTBOX_SECRET = 'crm-outbox-secret-for-tests';
const POLL = { timeout: 30_000, interval: 250 };
const errorOf = (res: { status: number; json: any }) => [res.status, res.json?.error?.code];
const sign = (body: string, secret = OUTBOX_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const ok = (res: RawResponse, what: string, status = 200): any => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 800)}`);
  return res.json;
};

/** The owner's substrate over REST, as a person with their substrate key. */
const owner = (method: string, route: string, body?: unknown) => request(rig.url, route, { method, key: substrateKey, ...(body === undefined ? {} : { body }) });
const ragDocument = (id: string) => request(rig.url, `/v1/${rig.appId}/rag/collections/crm/documents/${id}`, { key: rig.serviceKey });
const insertRows = async (table: string, rows: object) => {
  const { data, error } = await rig.supabase().from(table).insert(rows).select();
  if (error) throw new Error(`${table}: ${error.message}`);
  return data as any[];
};
const updateRows = async (table: string, patch: object, column: string, value: string) => {
  const { error } = await rig.supabase().from(table).update(patch).eq(column, value);
  if (error) throw new Error(`${table}: ${error.message}`);
};
/** Waits for the RAG document's ingestion (asynchronous) to finish. */
const waitReady = (documentId: string) => expect.poll(async () => (await ragDocument(documentId)).json?.status, POLL).toBe('ready');

/** An SSE response read as it arrives: the frames in order, each with the time it was read. */
async function readEvents(res: Response): Promise<Array<{ event: string; data: any; at: number }>> {
  const frames: Array<{ event: string; data: any; at: number }> = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
    const parts = buffer.split('\n\n');
    buffer = parts.pop() ?? '';
    for (const part of parts) {
      const event = /^event: (.*)$/m.exec(part)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(part)?.[1];
      frames.push({ event, data: data === undefined ? undefined : JSON.parse(data), at: Date.now() });
    }
    if (done) return frames;
  }
}

beforeAll(async () => {
  rig = await startCrm();
  const user = (name: string) => rig.signUp(`${name}@deals.example`);
  [ann, ben, cat, dan] = await Promise.all([user('ann'), user('ben'), user('cat'), user('dan')]);
  [wsA, wsB] = await Promise.all([rig.workspace(ann, 'Acme'), rig.workspace(dan, 'Globex')]);
  await rig.join(wsA, ann, ben, 'member');
  await rig.join(wsA, ann, cat, 'admin');
  stages = Object.fromEntries((await rig.serviceRows('pipeline_stages', `workspace_id=eq.${wsA}`)).map((s) => [s.name, s.id]));
  [{ id: contactId }] = await insertRows('contacts', { workspace_id: wsA, full_name: 'Dana Lee', email: 'dana@initech.example', title: 'VP Operations' });

  // The owner's setup from the clone's to-do: the outbox secret, and the outbox target of update_entity.
  substrateKey = (await substrateKeyOf(rig, rig.ownerPerson, 'crm owner')).key;
  // Signed in: the owner let the CRM's end users decide, and a change of its functions by a key would end that.
  ok(await request(rig.url, `/v1/${rig.appId}/functions/substrate-events/env`, { method: 'PATCH', body: { OUTBOX_SECRET }, headers: rig.ownerPerson.headers }), 'outbox secret');
  ok(
    await owner('PUT', '/v1/me/substrate/outbox-targets/update_entity', {
      webhook_url: `${rig.url}/v1/${rig.appId}/fn/substrate-events`,
      signing_secret: OUTBOX_SECRET,
      source_app_id: rig.appId,
    }),
    'outbox target',
  );
}, 420_000);

afterAll(async () => {
  await rig?.stop();
});

describe('search and indexing', () => {
  it('note-add writes the note and indexes it with its workspace in the metadata; refuses non-members and foreign links', async () => {
    expect(errorOf(await rig.fn('note-add', { token: dan.token, body: { workspace_id: wsA, body: 'x' } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('note-add', { token: ann.token, body: { workspace_id: wsA } }))).toEqual([400, 'missing_field']);
    const [foreign] = await insertRows('contacts', { workspace_id: wsB, full_name: 'Other Person' });
    expect(errorOf(await rig.fn('note-add', { token: ann.token, body: { workspace_id: wsA, body: 'x', contact_id: foreign.id } }))).toEqual([400, 'invalid_field']);

    const res = await rig.fn('note-add', {
      token: ann.token,
      body: { workspace_id: wsA, contact_id: contactId, body: 'Dana said the pilot budget is 40k and their legal review takes two weeks.' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.json.indexed).toBe(true);
    noteId = res.json.activity.id;
    const [row] = await rig.serviceRows('activities', `id=eq.${noteId}`);
    expect(row).toMatchObject({ kind: 'note', user_id: ann.userId, contact_id: contactId, rag_document_id: res.json.activity.rag_document_id });
    expect(row.indexed_at).not.toBeNull();
    await waitReady(row.rag_document_id);
    const doc = (await ragDocument(row.rag_document_id)).json;
    expect(doc.metadata).toEqual({ workspace_id: wsA, kind: 'note', activity_id: noteId, contact_id: contactId });
    expect(await rig.serviceRows('search_documents', `activity_id=eq.${noteId}&select=document_id,workspace_id,kind`)).toEqual([
      { document_id: row.rag_document_id, workspace_id: wsA, kind: 'note' },
    ]);

    // Workspace B has a note on the same subject: nothing of it may reach A, nor A's reach B.
    const other = await rig.fn('note-add', { token: dan.token, body: { workspace_id: wsB, body: 'Globex pilot budget is secret: 99k, legal review done.' } });
    expect(other.status, other.text).toBe(201);
    await waitReady(other.json.activity.rag_document_id);
  });

  it('search answers the workspace’s matching entries only; refuses a non-member and bad input', async () => {
    const res = await rig.fn('search', { token: ben.token, query: { workspace_id: wsA, q: 'pilot budget legal review' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.results[0]).toMatchObject({ n: 1, kind: 'note', activity_id: noteId, contact_id: contactId });
    expect(res.json.results[0].snippet).toContain('40k');
    expect(JSON.stringify(res.json)).not.toContain('Globex');

    expect(errorOf(await rig.fn('search', { token: dan.token, query: { workspace_id: wsA, q: 'pilot budget' } }))).toEqual([403, 'not_a_member']);
    const theirs = await rig.fn('search', { token: dan.token, query: { workspace_id: wsB, q: 'pilot budget legal review 40k Dana' } });
    expect(theirs.status).toBe(200);
    expect(theirs.json.results.length).toBeGreaterThan(0);
    expect(JSON.stringify(theirs.json.results)).not.toContain(noteId);
    expect(JSON.stringify(theirs.json.results)).not.toContain('40k');
    expect(errorOf(await rig.fn('search', { token: ben.token, query: { workspace_id: wsA } }))).toEqual([400, 'missing_field']);
    expect(errorOf(await rig.fn('search', { token: ben.token, query: { workspace_id: wsA, q: 'x', limit: '500' } }))).toEqual([400, 'invalid_field']);
    expect(errorOf(await rig.fn('search', { query: { workspace_id: wsA, q: 'x' } }))).toEqual([401, 'sign_in_required']);
  });

  it('index-activity indexes an entry, keeps an unchanged one and replaces the document of a changed one', async () => {
    // indexed_at set: the clone's own index-pending (every 5 minutes) leaves it to this test.
    const [mail] = await insertRows('activities', {
      workspace_id: wsA,
      kind: 'email',
      contact_id: contactId,
      subject: 'Security questionnaire',
      body: 'Dana sent the security questionnaire back.',
      indexed_at: new Date().toISOString(),
    });
    expect(errorOf(await rig.fn('index-activity', { token: dan.token, body: { activity_id: mail.id } }))).toEqual([404, 'not_found']);
    const first = await rig.fn('index-activity', { token: ben.token, body: { activity_id: mail.id } });
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({ activity_id: mail.id, reindexed: true });
    const again = await rig.fn('index-activity', { token: ben.token, body: { activity_id: mail.id } });
    expect([again.status, again.json]).toEqual([200, { activity_id: mail.id, document_id: first.json.document_id, reindexed: false }]);

    await updateRows('activities', { body: 'Dana sent the signed security questionnaire and the DPA back.' }, 'id', mail.id);
    const changed = await rig.fn('index-activity', { token: ben.token, body: { activity_id: mail.id } });
    expect(changed.status).toBe(202);
    expect(changed.json.document_id).not.toBe(first.json.document_id);
    expect((await ragDocument(first.json.document_id)).status).toBe(404);
    expect((await rig.serviceRows('search_documents', `activity_id=eq.${mail.id}`)).map((l) => l.document_id)).toEqual([changed.json.document_id]);
    expect((await rig.serviceRows('activities', `id=eq.${mail.id}`))[0].rag_document_id).toBe(changed.json.document_id);
    expect((await ragDocument(changed.json.document_id)).json.metadata).toEqual({ workspace_id: wsA, kind: 'email', activity_id: mail.id, contact_id: contactId });

    const [stage] = await insertRows('activities', { workspace_id: wsA, kind: 'stage_change', body: 'moved' });
    expect(errorOf(await rig.fn('index-activity', { token: ben.token, body: { activity_id: stage.id } }))).toEqual([409, 'not_indexed_kind']);
  });

  it('index-pending (cron) indexes new entries and meeting transcripts; index-cleanup (cron) removes the documents of deleted entries', async () => {
    const [call] = await insertRows('activities', { workspace_id: wsA, kind: 'call', contact_id: contactId, body: 'Call with Dana: procurement wants a three-year term.' });
    const [meeting] = await insertRows('meetings', {
      workspace_id: wsA,
      title: 'Initech pilot kickoff',
      contact_id: contactId,
      bot_id: 'bot-crm-agent-1',
      transcript_text: 'Dana Lee: we need single sign-on before the pilot starts.',
    });
    const run = await rig.cron('index-pending');
    expect(run.status, JSON.stringify(run)).toBe(200);
    expect(run.body.failed).toBe(0);
    const [indexed] = await rig.serviceRows('activities', `id=eq.${call.id}`);
    expect(indexed.indexed_at).not.toBeNull();
    const [transcript] = await rig.serviceRows('search_documents', `meeting_id=eq.${meeting.id}`);
    expect(transcript).toMatchObject({ kind: 'transcript', workspace_id: wsA, version: 'bot:bot-crm-agent-1' });
    expect((await ragDocument(transcript.document_id)).json.metadata).toEqual({ workspace_id: wsA, kind: 'transcript', meeting_id: meeting.id, contact_id: contactId });
    expect((await rig.cron('index-pending')).body).toMatchObject({ activities: 0, transcripts: 0, failed: 0 });

    // The call is deleted; its document stays until the cleanup (which leaves documents under ten minutes old alone).
    const { error } = await rig.supabase().from('activities').delete().eq('id', call.id);
    expect(error).toBeNull();
    await updateRows('search_documents', { created_at: new Date(Date.now() - 3_600_000).toISOString() }, 'workspace_id', wsA);
    const cleanup = await rig.cron('index-cleanup');
    expect(cleanup.status, JSON.stringify(cleanup)).toBe(200);
    expect(cleanup.body.removed).toBe(1);
    expect((await ragDocument(indexed.rag_document_id)).status).toBe(404);
    expect(await rig.serviceRows('search_documents', `document_id=eq.${indexed.rag_document_id}`)).toEqual([]);
    expect((await ragDocument((await rig.serviceRows('activities', `id=eq.${noteId}`))[0].rag_document_id)).status).toBe(200);
    expect((await rig.cron('index-cleanup')).body.removed).toBe(0);
  });
});

describe('agent chat', () => {
  it('streams the answer as server-sent events: citations first, tokens, done; both turns stored', async () => {
    await waitReady((await rig.serviceRows('search_documents', `activity_id=eq.${noteId}`))[0].document_id);
    const question = 'What did Dana say about the pilot budget?';
    rig.fakes.openai.reset();
    const res = await fetch(`${rig.url}/v1/${rig.appId}/fn/agent-chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ben.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace_id: wsA, message: question }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = await readEvents(res);
    expect(frames[0]!.event).toBe('citations');
    const citations = frames[0]!.data as any[];
    expect(citations[0]).toMatchObject({ n: 1, kind: 'note', activity_id: noteId });
    expect(JSON.stringify(citations)).not.toContain('Globex');
    const tokens = frames.filter((f) => f.event === 'token');
    expect(tokens.length).toBeGreaterThan(5);
    const answer = tokens.map((f) => f.data.text).join('');
    expect(answer).toContain('[1]');
    const done = frames.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.cited).toContain(1);

    // The model was asked through the AI gateway with the sources numbered and the question last, streamed.
    const chat = rig.fakes.openai.requests.find((r) => r.path === '/chat/completions');
    expect(chat?.body).toMatchObject({ stream: true });
    const last = chat!.body.messages.at(-1).content as string;
    expect(last).toMatch(/^Sources:\n\[1\] \(note\) Dana said the pilot budget is 40k/);
    expect(last.endsWith(`Question: ${question}`)).toBe(true);
    expect(chat!.body.messages[0].content).toContain('[1], [2]');

    const turns = await rig.serviceRows('chat_messages', `workspace_id=eq.${wsA}&user_id=eq.${ben.userId}&order=created_at&select=id,role,content,citations`);
    expect(turns.map((t) => [t.role, t.content])).toEqual([
      ['user', question],
      ['assistant', answer],
    ]);
    expect(turns[1].id).toBe(done.data.message_id);
    expect(turns[1].citations[0]).toMatchObject({ n: 1, activity_id: noteId });
    // The gateway metered the answer to the end user whose token the function passed on.
    const usage = ok(await rig.platform('GET', `/v1/${rig.appId}/ai/usage`), 'ai usage');
    expect(JSON.stringify(usage.byUser)).toContain(ben.userId);
  });

  it('refuses a non-member, and a member of another workspace gets nothing of A', async () => {
    expect(errorOf(await rig.fn('agent-chat', { token: dan.token, body: { workspace_id: wsA, message: 'pilot budget?' } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('agent-chat', { token: ben.token, body: { workspace_id: wsA } }))).toEqual([400, 'missing_field']);
    const res = await rig.fn('agent-chat', { token: dan.token, body: { workspace_id: wsB, message: 'What did Dana say about the pilot budget and legal review?' } });
    expect(res.status).toBe(200);
    expect(res.text).toContain('event: done');
    expect(res.text).not.toContain(noteId);
    expect(res.text).not.toContain('40k');
    expect(res.text).toContain('99k');
  });
});

describe('deals and proposals', () => {
  it('deal-create makes the deal in the first stage, mirrored as a substrate entity; refuses non-members and bad input', async () => {
    expect(errorOf(await rig.fn('deal-create', { token: dan.token, body: { workspace_id: wsA, title: 'x' } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('deal-create', { token: ann.token, body: { workspace_id: wsA, title: 'x', amount: -1 } }))).toEqual([400, 'invalid_field']);
    const bStage = (await rig.serviceRows('pipeline_stages', `workspace_id=eq.${wsB}&limit=1`))[0].id;
    expect(errorOf(await rig.fn('deal-create', { token: ann.token, body: { workspace_id: wsA, title: 'x', stage_id: bStage } }))).toEqual([400, 'invalid_field']);

    const res = await rig.fn('deal-create', { token: ben.token, body: { workspace_id: wsA, title: 'Initech pilot', amount: 40000, contact_id: contactId } });
    expect(res.status, res.text).toBe(201);
    dealId = res.json.deal.id;
    expect(res.json.stage.name).toBe('Lead');
    const [deal] = await rig.serviceRows('deals', `id=eq.${dealId}`);
    expect(deal).toMatchObject({ title: 'Initech pilot', stage_id: stages.Lead, amount: 40000, user_id: ben.userId });
    expect(deal.entity_id).toMatch(/^ent_/);
    const entity = ok(await owner('GET', `/v1/me/substrate/entities/${deal.entity_id}`), 'entity');
    expect(entity).toMatchObject({ type: 'deal', display_name: 'Initech pilot', canonical_keys: { crm_deal_id: dealId } });
    expect(entity.attrs).toMatchObject({ workspace_id: wsA, stage: 'Lead', stage_id: stages.Lead, amount: 40000 });
  });

  it('entities-sync (cron) mirrors contacts and companies as entities', async () => {
    const [company] = await insertRows('companies', { workspace_id: wsA, name: 'Initech', domain: 'initech.example' });
    await updateRows('contacts', { company_id: company.id }, 'id', contactId);
    const run = await rig.cron('entities-sync');
    expect(run.status, JSON.stringify(run)).toBe(200);
    expect(run.body.contacts.failed + run.body.companies.failed + run.body.deals.failed).toBe(0);
    const [contact] = await rig.serviceRows('contacts', `id=eq.${contactId}`);
    const person = ok(await owner('GET', `/v1/me/substrate/entities/${contact.entity_id}`), 'person');
    expect(person).toMatchObject({ type: 'person', display_name: 'Dana Lee', primary_email: 'dana@initech.example', canonical_keys: { crm_contact_id: contactId } });
    const [co] = await rig.serviceRows('companies', `id=eq.${company.id}`);
    expect(ok(await owner('GET', `/v1/me/substrate/entities/${co.entity_id}`), 'company')).toMatchObject({ type: 'company', display_name: 'Initech', attrs: { domain: 'initech.example' } });
    // A second run changes nothing: the same payloads replay.
    const entities = ok(await owner('GET', '/v1/me/substrate/entities?limit=200'), 'entities');
    await rig.cron('entities-sync');
    expect(ok(await owner('GET', '/v1/me/substrate/entities?limit=200'), 'entities').entities.length).toBe(entities.entities.length);
  });

  let moveId: string;
  it('deal-move proposes the stage change in the owner’s ledger, waiting for a person; the deal does not move yet', async () => {
    expect(errorOf(await rig.fn('deal-move', { token: dan.token, body: { deal_id: dealId, stage_id: stages.Qualified } }))).toEqual([404, 'not_found']);
    expect(errorOf(await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Lead } }))).toEqual([409, 'same_stage']);
    const res = await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Qualified } });
    expect(res.status, res.text).toBe(202);
    const proposal = res.json.proposal;
    moveId = proposal.id;
    expect(proposal).toMatchObject({
      kind: 'stage_change',
      deal_id: dealId,
      status: 'pending',
      summary: 'Move Initech pilot from Lead to Qualified',
      payload: { from_stage_id: stages.Lead, to_stage_id: stages.Qualified },
    });
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].stage_id).toBe(stages.Lead);
    const action = ok(await owner('GET', `/v1/me/substrate/actions/${proposal.action_id}`), 'action');
    expect(action).toMatchObject({ capability: 'update_entity', status: 'proposed', requires_approval: true, source_app_id: rig.appId });
    expect(action.payload.attrs).toMatchObject({ stage: 'Qualified', stage_id: stages.Qualified });
    // A retry replays the same proposal.
    const retry = await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Qualified } });
    expect([retry.status, retry.json.proposal.id]).toEqual([202, moveId]);
  });

  it('approvals lists the workspace’s proposals with the substrate’s status and verdict; members only', async () => {
    const res = await rig.fn('approvals', { token: ben.token, query: { workspace_id: wsA } });
    expect(res.status, res.text).toBe(200);
    const listed = res.json.proposals.find((p: any) => p.id === moveId);
    expect(listed.action).toMatchObject({ status: 'proposed', verdict: { result: 'requires_approval' } });
    expect(errorOf(await rig.fn('approvals', { token: dan.token, query: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
    expect(errorOf(await rig.fn('approvals', { token: ben.token, query: { workspace_id: wsA, status: 'maybe' } }))).toEqual([400, 'invalid_field']);
  });

  it('approval-decide: a member may not decide; an admin approves, the change is applied once (also when the outbox delivers it)', async () => {
    expect(errorOf(await rig.fn('approval-decide', { token: ben.token, body: { proposal_id: moveId, decision: 'approve' } }))).toEqual([403, 'role_required']);
    expect(errorOf(await rig.fn('approval-decide', { token: dan.token, body: { proposal_id: moveId, decision: 'approve' } }))).toEqual([404, 'not_found']);
    expect(errorOf(await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: moveId, decision: 'maybe' } }))).toEqual([400, 'invalid_field']);

    const res = await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: moveId, decision: 'approve' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.proposal).toMatchObject({ status: 'applied', decided_by: cat.userId });
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].stage_id).toBe(stages.Qualified);
    const action = ok(await owner('GET', `/v1/me/substrate/actions/${res.json.proposal.action_id}`), 'action');
    expect(action).toMatchObject({ status: 'executed', decided_via: 'app_end_user', decided_by_end_user: cat.userId });
    // The executed action also reaches substrate-events through the outbox: applied already, nothing happens twice.
    await expect
      .poll(async () => ok(await owner('GET', '/v1/me/substrate/outbox-deliveries'), 'deliveries').deliveries.find((d: any) => d.action_id === action.action_id)?.status, POLL)
      .toBe('delivered');
    const entries = await rig.serviceRows('activities', `deal_id=eq.${dealId}&kind=eq.stage_change`);
    expect(entries.map((e) => [e.subject, e.body])).toEqual([['Stage: Lead → Qualified', 'Move Initech pilot from Lead to Qualified']]);
    expect(errorOf(await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: moveId, decision: 'approve' } }))).toEqual([409, 'already_decided']);
  });

  it('approval-decide rejects with a reason: nothing moves', async () => {
    const move = await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Proposal } });
    expect(move.status).toBe(202);
    const res = await rig.fn('approval-decide', { token: ann.token, body: { proposal_id: move.json.proposal.id, decision: 'reject', reason: 'Not before the security review' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.proposal).toMatchObject({ status: 'rejected', decided_by: ann.userId, reason: 'Not before the security review' });
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].stage_id).toBe(stages.Qualified);
    expect(ok(await owner('GET', `/v1/me/substrate/actions/${move.json.proposal.action_id}`), 'action')).toMatchObject({ status: 'rejected', reject_reason: 'Not before the security review' });
  });

  it('substrate-events: the owner approving on the platform reaches the CRM through the signed outbox; a bad signature is 401', async () => {
    const move = await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Negotiation } });
    expect(move.status).toBe(202);
    const actionId = move.json.proposal.action_id;
    ok(await owner('POST', `/v1/me/substrate/actions/${actionId}/approve`), 'owner approves');
    const proposalRow = async () => (await rig.serviceRows('proposals', `id=eq.${move.json.proposal.id}`))[0];
    await expect.poll(async () => (await proposalRow()).status, POLL).toBe('applied');
    expect((await proposalRow()).decided_at).not.toBeNull();
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].stage_id).toBe(stages.Negotiation);

    const delivery = JSON.stringify({ delivery_id: 'dlv_test', action_id: actionId, capability: 'update_entity', payload: {}, result: null });
    const post = (body: string, signature?: string) => rig.fn('substrate-events', { body, headers: signature ? { 'x-svc-signature': signature } : {} });
    expect(errorOf(await post(delivery))).toEqual([401, 'bad_signature']);
    expect(errorOf(await post(delivery, sign(delivery, 'another secret')))).toEqual([401, 'bad_signature']);
    expect(errorOf(await post(`${delivery} `, sign(delivery)))).toEqual([401, 'bad_signature']);
    // Delivered again (a redelivery): acknowledged, applied once.
    const again = await post(delivery, sign(delivery));
    expect([again.status, again.json.proposal.status]).toEqual([200, 'applied']);
    const moves = await rig.serviceRows('activities', `deal_id=eq.${dealId}&kind=eq.stage_change`);
    expect(moves.filter((e) => e.subject === 'Stage: Qualified → Negotiation')).toHaveLength(1);
    const unknown = JSON.stringify({ action_id: 'act_unknown', capability: 'update_entity' });
    expect((await post(unknown, sign(unknown))).json).toEqual({ ignored: 'act_unknown' });
  });

  it('approvals settles a proposal the owner rejected on the platform (the outbox delivers executed actions only)', async () => {
    const move = await rig.fn('deal-move', { token: ben.token, body: { deal_id: dealId, stage_id: stages.Won } });
    expect(move.status).toBe(202);
    ok(await owner('POST', `/v1/me/substrate/actions/${move.json.proposal.action_id}/reject`, { reason: 'Not signed yet' }), 'owner rejects');
    const res = await rig.fn('approvals', { token: ben.token, query: { workspace_id: wsA, status: 'all' } });
    expect(res.status).toBe(200);
    const listed = res.json.proposals.find((p: any) => p.id === move.json.proposal.id);
    expect(listed).toMatchObject({ status: 'rejected', reason: 'Not signed yet', action: { status: 'rejected', reject_reason: 'Not signed yet' } });
    expect((await rig.serviceRows('proposals', `id=eq.${move.json.proposal.id}`))[0]).toMatchObject({ status: 'rejected', reason: 'Not signed yet' });
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].stage_id).toBe(stages.Negotiation);
    expect(errorOf(await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: move.json.proposal.id, decision: 'approve' } }))).toEqual([409, 'already_decided']);
  });

  it('deal-next-step: the AI suggests a step from the timeline, proposed; applied on approval', async () => {
    await rig.fn('note-add', { token: ben.token, body: { workspace_id: wsA, deal_id: dealId, body: 'Procurement asked for a revised quote.' } });
    rig.fakes.openai.reset();
    const res = await rig.fn('deal-next-step', { token: ben.token, body: { deal_id: dealId } });
    expect(res.status, res.text).toBe(202);
    const prompt = rig.fakes.openai.requests.find((r) => r.path === '/chat/completions')!.body.messages.at(-1).content as string;
    expect(prompt).toContain('Deal: Initech pilot (Negotiation, 40000');
    expect(prompt).toContain('Procurement asked for a revised quote.');
    const proposal = res.json.proposal;
    expect(proposal).toMatchObject({ kind: 'next_step', status: 'pending', deal_id: dealId });
    expect(proposal.payload.next_step).toMatch(/^echo: Deal: Initech pilot/);
    expect(ok(await owner('GET', `/v1/me/substrate/actions/${proposal.action_id}`), 'action').payload.attrs.next_step).toBe(proposal.payload.next_step);
    const decided = await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: proposal.id, decision: 'approve' } });
    expect(decided.status, decided.text).toBe(200);
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].next_step).toBe(proposal.payload.next_step);
    expect(errorOf(await rig.fn('deal-next-step', { token: dan.token, body: { deal_id: dealId } }))).toEqual([404, 'not_found']);
  });

  it('deal-forecast proposes the rule’s category for deals whose category changes, once; applied on approval', async () => {
    const soon = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await updateRows('deals', { close_date: soon }, 'id', dealId);
    const res = await rig.fn('deal-forecast', { token: ben.token, body: { workspace_id: wsA } });
    expect(res.status, res.text).toBe(202);
    expect(res.json.proposals).toHaveLength(1);
    const proposal = res.json.proposals[0];
    expect(proposal).toMatchObject({ kind: 'forecast', deal_id: dealId, payload: { from_forecast: 'pipeline', to_forecast: 'commit', probability: 75, close_date: soon } });
    const twice = await rig.fn('deal-forecast', { token: ben.token, body: { workspace_id: wsA } });
    expect([twice.status, twice.json.proposals]).toEqual([200, []]);
    expect((await rig.fn('approval-decide', { token: cat.token, body: { proposal_id: proposal.id, decision: 'approve' } })).status).toBe(200);
    expect((await rig.serviceRows('deals', `id=eq.${dealId}`))[0].forecast).toBe('commit');
    expect(errorOf(await rig.fn('deal-forecast', { token: dan.token, body: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
  });

  it('pipeline-summary: count and total per stage, the weighted forecast and totals by category', async () => {
    const bStages = Object.fromEntries((await rig.serviceRows('pipeline_stages', `workspace_id=eq.${wsB}`)).map((s) => [s.name, s.id]));
    for (const [title, amount, stage] of [
      ['Small', 1000, 'Lead'],
      ['Medium', 3000, 'Proposal'],
      ['Medium two', 2000.5, 'Proposal'],
      ['Closed', 500, 'Won'],
    ] as const) {
      expect((await rig.fn('deal-create', { token: dan.token, body: { workspace_id: wsB, title, amount, stage_id: bStages[stage] } })).status).toBe(201);
    }
    const res = await rig.fn('pipeline-summary', { token: dan.token, query: { workspace_id: wsB } });
    expect(res.status, res.text).toBe(200);
    const byName = Object.fromEntries(res.json.stages.map((s: any) => [s.name, [s.count, s.totals]]));
    expect(byName).toEqual({ Lead: [1, { USD: 1000 }], Qualified: [0, {}], Proposal: [2, { USD: 5000.5 }], Negotiation: [0, {}], Won: [1, { USD: 500 }], Lost: [0, {}] });
    expect(res.json.forecast).toEqual({ open: { USD: 6000.5 }, weighted: { USD: 2600.25 }, by_category: { pipeline: { USD: 6000.5 } } });
    expect(errorOf(await rig.fn('pipeline-summary', { token: ben.token, query: { workspace_id: wsB } }))).toEqual([403, 'not_a_member']);
  });

  it('daily-brief (cron) writes each workspace’s brief from its tasks, moved deals and meetings', async () => {
    const now = Date.now();
    const today = new Date(now).toISOString().slice(0, 10);
    await insertRows('tasks', { workspace_id: wsA, title: 'Send Dana the revised quote', due_at: new Date(now - 3_600_000).toISOString() });
    await insertRows('meetings', { workspace_id: wsA, title: 'Initech security review', starts_at: `${today}T12:00:00.000Z` });
    rig.fakes.openai.reset();
    const run = await rig.cron('daily-brief', { scheduled_at: new Date(now).toISOString() });
    expect(run.status, JSON.stringify(run)).toBe(200);
    expect(run.body.failed).toBe(0);
    expect(run.body.briefed).toBeGreaterThanOrEqual(1);
    const [brief] = await rig.serviceRows('activities', `workspace_id=eq.${wsA}&kind=eq.system&subject=eq.Daily brief`);
    expect(brief.body).toMatch(/^echo: Workspace: Acme/);
    expect(brief.body).toContain('Send Dana the revised quote');
    expect(brief.body).toContain('Move Initech pilot from Qualified to Negotiation');
    expect(brief.body).toContain('Initech security review');
    // A second run of the same day replaces the brief rather than adding one.
    await rig.cron('daily-brief', { scheduled_at: new Date(now).toISOString() });
    expect(await rig.serviceRows('activities', `workspace_id=eq.${wsA}&kind=eq.system&subject=eq.Daily brief`)).toHaveLength(1);
  });
});

describe('substrate proxy', () => {
  it('stream-ticket: a member gets a ticket that opens the change stream; a non-member is refused', async () => {
    expect(errorOf(await rig.fn('stream-ticket', { token: dan.token, body: { workspace_id: wsA } }))).toEqual([403, 'not_a_member']);
    const res = await rig.fn('stream-ticket', { token: ben.token, body: { workspace_id: wsA } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.expires_in).toBe(60);
    const url = new URL(res.json.url);
    expect([url.protocol, url.port, url.pathname, url.searchParams.get('ticket')]).toEqual(['ws:', String(rig.server.port), '/v1/me/substrate/stream', res.json.ticket]);
    const hello = await new Promise<any>((resolve, reject) => {
      const ws = new WebSocket(res.json.url);
      ws.once('message', (data) => {
        resolve(JSON.parse(String(data)));
        ws.close();
      });
      ws.once('error', reject);
    });
    expect(hello).toMatchObject({ type: 'hello' });
  });
});
