// The platform beyond one machine, under faults: two api processes behind a round-robin load balancer, one worker
// process, app databases on two PostgreSQL clusters, files on S3 (test/helpers/topology.ts). A mixed workload runs
// through the load balancer while an api process and the worker are killed with SIGKILL and restarted, every
// platform connection on one app cluster is ended and the S3 server is stopped for a few seconds. Afterwards every
// acknowledged write is there, every job ran once in effect, credits add up, streams came back and the sign-up limit
// held across both processes; the test prints what it checked, with counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND_REGION, startTopology, type Topology } from '../helpers/topology.ts';
import { AiCalls, RagIngestion, verifyCredits } from './topology/ai.ts';
import { createApp, DataWrites, signupBurst, type TopologyApp } from './topology/data.ts';
import { runFaults, type FaultRecord } from './topology/faults.ts';
import { McpAgent } from './topology/mcp.ts';
import { FileUploads } from './topology/files.ts';
import { CronSlots, deployNoteFunction } from './topology/functions.ts';
import { OutboxReceiver, Proposals, StreamSocket } from './topology/substrate.ts';

const SIGNUP_LIMIT = 12;
/** Between faults; the workload runs through all of them (about 34 s in all). */
const FAULT_GAP_MS = 4000;

let t: Topology;
let local: TopologyApp;
let eu: TopologyApp;
const receiver = new OutboxReceiver();
const proposals = new Proposals();
let sockets: StreamSocket[] = [];
const agent = new McpAgent();

beforeAll(async () => {
  t = await startTopology({ SVC_AUTH_RATE_LIMIT_PER_MINUTE: String(SIGNUP_LIMIT) });
  local = await createApp(t, 'Local notes', 'local', 3);
  eu = await createApp(t, 'EU notes', SECOND_REGION, 3);
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  await agent.close();
  await t?.close();
  await receiver.close();
});

describe('two api processes, a worker, two clusters and S3, under faults', () => {
  it('keeps every acknowledged write, runs every job once in effect, and holds limits across processes', { timeout: 300_000 }, async () => {
    const report: string[] = [];
    const t0 = Date.now();
    // Progress on stderr as it happens: when something hangs, the last step says where.
    const step = (what: string) => process.stderr.write(`[topology ${((Date.now() - t0) / 1000).toFixed(1)}s] ${what}\n`);
    const servedBefore = [...t.proxy.served];
    const limited = await signupBurst(t, local, SIGNUP_LIMIT, 2 * SIGNUP_LIMIT + 3);
    const burstServed = t.proxy.served.map((n, i) => n - servedBefore[i]!);
    // Nothing else runs yet: the balancer alternated the burst between the two processes.
    expect(Math.min(...burstServed)).toBeGreaterThanOrEqual(SIGNUP_LIMIT);
    expect(limited.limited).toBeGreaterThan(0);
    report.push(`sign-up limit: ${limited.accepted} accepted, ${limited.limited} refused 429, answered ${burstServed.join(' + ')} by api-1 + api-2 counting in one row per window (${limited.windows} window(s), limit ${SIGNUP_LIMIT})`);

    step('setting up functions, cron, RAG, substrate, sockets');
    await deployNoteFunction(t, local);
    await deployNoteFunction(t, eu);
    const cron = new CronSlots(eu);
    await cron.deploy(t);
    const rag = new RagIngestion(eu);
    await rag.createCollection(t);
    const substrateKey = await proposals.setUp(t, await receiver.start());
    // One socket on each api process, and one through the balancer (its websocket upgrade), which lands on either.
    sockets = [...t.apis.map((api) => new StreamSocket(`http://127.0.0.1:${api.port}`)), new StreamSocket(t.url)];
    await Promise.all(sockets.map((s) => s.open(t, substrateKey)));
    await agent.connect(t);

    step('workload and faults');
    const data = new DataWrites([local, eu]);
    const files = new FileUploads(local);
    const ai = new AiCalls(local);
    let running = true;
    const started = Date.now();
    await cron.tick(t, 2);
    const workload = Promise.all([
      data.run(t, () => running),
      files.run(t, () => running),
      ai.run(t, () => running),
      rag.run(t, () => running, 1500),
      proposals.run(t, () => running),
      agent.run(() => running, local, data),
    ]);
    let cutSlots: string[] = [];
    let workerKilledAt = 0;
    let faults: FaultRecord[] = [];
    try {
      faults = await runFaults(t, started, FAULT_GAP_MS, {
        beforeWorkerKill: async () => {
          await cron.tick(t, 4);
          const held = await cron.running(t);
          cutSlots = held.slots;
          return `${held.jobs} job(s), ${held.slots.length} of them cron slots mid-run`;
        },
        whileWorkerDown: () => {
          // Once it is gone: a slot recorded after this was recorded by its successor.
          workerKilledAt = Date.now();
          return cron.tick(t, 6);
        },
      });
    } finally {
      // Also when a fault step fails: the loops would otherwise run on against a closing topology.
      running = false;
      step('workload stopping');
      await workload;
    }
    const workloadSeconds = (Date.now() - started) / 1000;

    step('verifying notes');
    const rows = await data.verify(t);
    report.push(`data API writes (RLS, both clusters): ${data.tally}`);
    report.push(`function writes (ctx.data as the end user): ${data.functionTally}`);
    report.push(`MCP data_insert in one session through the balancer: ${agent.tally}`);
    report.push(`  ${rows.rows} notes of ${rows.users} users present: every acknowledged one, each only to its owner`);
    expect(await agent.stillServes(local)).toBe(true);
    step('verifying files');
    const stored = await files.verify(t);
    report.push(`S3 uploads: ${files.tally}; ${stored.files} listed and read back byte for byte`);
    step('verifying RAG');
    const ingested = await rag.verify(t);
    report.push(`RAG ingestion: ${rag.tally}; ${ingested.documents} documents ready once, ${ingested.chunks} chunks, ${ingested.embeddingCalls} embedding calls`);
    step('verifying cron');
    const slots = await cron.verify(t, cutSlots, workerKilledAt);
    report.push(`cron: ${slots.slots} slots recorded once each; ${slots.rerun} of the ${cutSlots.length} mid-run when the worker died were recorded after it, by its successor; ${slots.runs} runs logged (${slots.again} found their slot already done)`);
    // A slot takes 4 s and the kill follows its lock within a poll: the kill cuts it.
    expect(slots.rerun).toBeGreaterThanOrEqual(1);
    step('verifying outbox');
    const outbox = await proposals.verify(t, receiver);
    report.push(`substrate proposals: ${proposals.tally}, ${proposals.retries} resent with their idempotency key; ${outbox.actions} actions, ${outbox.deliveries} outbox deliveries delivered and signed (${outbox.repeated} received more than once)`);
    step('verifying credits');
    const credits = await verifyCredits(t, local.appId, ai);
    report.push(`AI chat: ${ai.tally}; credits: ${credits.charges} charges (${credits.spentNanos} nano-dollars), balance = ledger, ${credits.open} reservation(s) still held (of calls a kill cut), released when they expire`);

    step('verifying streams');
    const last = await proposals.proposeOne(t, 'after the faults');
    await Promise.all(sockets.map((s) => s.sees(last)));
    report.push(`change stream: sockets on api-1, api-2 and through the balancer connected ${sockets.map((s) => s.connects).join(', ')} times, each got the frame written after the faults (${sockets.map((s) => s.frames.length).join(' + ')} frames)`);
    expect(sockets[0]!.connects).toBeGreaterThanOrEqual(2);

    report.push(`faults: ${faults.map((f) => `${f.at}s ${f.what}`).join('; ')}; workload ${workloadSeconds.toFixed(0)} s`);
    report.push(`load balancer: ${t.proxy.served.join(' + ')} answers by api-1 + api-2, ${t.proxy.retried} refused connections sent to the other, ${t.proxy.failed} cut by a dying backend`);
    console.log(`topology report\n  ${report.join('\n  ')}`);

    // Refusals are only the passing outages the faults cause, each a 503 a client retries.
    for (const tally of [data.tally, data.functionTally, agent.tally, files.tally, rag.tally, ai.tally, proposals.tally]) {
      for (const refusal of tally.refused.keys()) expect(refusal).toMatch(/^503 /);
    }
  });
});
