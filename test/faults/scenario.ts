/**
 * One fault run from start to figures: bindings created without faults, the injector on the real
 * clients, the workload (./workload.ts), a fault-free drain, the sweeper, the final reads and the
 * judgement (./checks.ts).
 */
import { randomBytes } from 'node:crypto';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { dynamoClient } from '../../lambda/core/storage/client';
import { queueUrl, sqsClient } from '../../lambda/core/adapters/sqs';
import { setRetryWorkflow, StepFunctionsRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { getQueue } from '../../lambda/queues/storage/queues';
import { sweep } from '../../lambda/sweeper/tasks';
import { QUIET_MS, RECONCILE_EVERY_MS } from '../../lambda/queues/sweep';
import { startLocalWebhooks } from '../../local/webhooks';
import { startTestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { ApiClient } from './api';
import { judge, lostCounts, outcomes, unexplained404s, type CounterReads, type Duplicates, type Findings, type Stored } from './checks';
import { FaultInjector } from './injector';
import { LOCAL_STATE_MACHINE_ARN, localSfnClient } from './local-sfn';
import { startFaultReceiver } from './receiver';
import { Workload, type Bindings, type RunOptions } from './workload';
import { LogTrace } from './log-trace';
import { getSubscription } from '../../lambda/subscriptions/storage/subscriptions';

export interface RunResult {
  figures: Record<string, unknown>;
  findings: Findings;
  duplicates: Duplicates;
}

/** SQS's own counts of a queue, read by a client the injector never touches. */
async function sqsCount(clean: SQSClient, url: string) {
  const a = (await clean.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ?? {};
  return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
}

async function expect2xx(api: ApiClient, method: string, path: string, body?: unknown) {
  const a = await api.call(method, path, body);
  if (a.status >= 300) throw new Error(`${method} ${path}: ${a.status} ${a.code}`);
  return a.body?.data;
}

export async function runScenario(name: string, o: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const server = await startTestServer();
  // A short visibility on the delivery queue: a job whose handling failed comes back within the
  // drain (the stack's is 6 minutes).
  const local = await startLocalWebhooks({ queueName: `faults-${randomBytes(4).toString('hex')}`, visibilitySeconds: 8 });
  // StartExecution through a real SFNClient (faults included) to the local runner of the ASL file.
  const sfn = localSfnClient(local.workflow);
  setRetryWorkflow(new StepFunctionsRetryWorkflow(sfn, LOCAL_STATE_MACHINE_ARN));
  // 5 % of deliveries answered 500, so failed attempts go through the retry workflow.
  const receiver = await startFaultReceiver(o.seed ^ 0xbeef, 0.05);
  const ns = await createTestNamespace('faults');
  const api = new ApiClient(server.baseUrl, ns.key);
  const clean = new SQSClient({ region: 'us-east-1', endpoint: process.env.MSG_SQS_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const runId = randomBytes(3).toString('hex');
  const b: Bindings = { root: `f${runId}`, queue: `q-${runId}`, stream: `s-${runId}`, subscription: `u-${runId}`, webhook: `w-${runId}` };
  const filter = `${b.root}/#`;
  const injector = new FaultInjector(o.seed);
  try {
    await expect2xx(api, 'POST', '/queues', { name: b.queue, topic_filter: filter });
    await expect2xx(api, 'POST', '/streams', { name: b.stream, topic_filter: filter, partition_count: 2 });
    await expect2xx(api, 'POST', '/subscriptions', { name: b.subscription, topic_filter: filter });
    await expect2xx(api, 'POST', '/webhooks', { name: b.webhook, url: receiver.url, topic_filter: filter, retry_count: 5, retry_delay: 1, backoff_multiplier: 1 });
    const q = await getQueue(ns.name, b.queue);
    const qUrl = queueUrl(q?.sqs_queue ?? '');

    // FAULT_TRACE_DIR: a run that loses a subscriber message writes the subscription log's trace there (./log-trace.ts).
    const trace = process.env.FAULT_TRACE_DIR ? new LogTrace() : undefined;
    const subId = (await getSubscription(ns.name, b.subscription))?.id ?? '';
    if (trace) {
      trace.watch(subId);
      trace.attach(dynamoClient());
    }
    injector.attach(dynamoClient(), 'dynamodb');
    injector.attach(sqsClient(), 'sqs');
    injector.attach(sfn, 'sfn');
    const w = new Workload(api, injector, b, o, runId);
    // What the drain still waits for when it ends (empty when it ended because all was done), and
    // when each wait changed (seconds into the drain).
    let waitingFor: string[] = [];
    const drainTimeline: string[] = [];
    const ledger = await w.run(async () => {
      const { created } = outcomes(w.ledger);
      const received = new Set(w.ledger.receives.map((r) => r.messageId));
      const ok = new Set(receiver.deliveries.filter((d) => d.status < 300).map((d) => d.messageId));
      const ids = [...created.keys()];
      const conditions: [string, boolean][] = [
        ['queue receives', ids.every((id) => received.has(id))],
        ['webhook 2xx', ids.every((id) => ok.has(id))],
        ['queue empty in SQS', (await sqsCount(clean, qUrl)) === 0],
        ['delivery queue empty', (await sqsCount(clean, local.queueUrl)) === 0],
        ['delivery batches done', local.events.busy === 0],
        ['retry executions done', local.workflow.running === 0],
        ['subscriber idle', w.idleOf('subscriber0') >= 2 && w.idleOf('subscriber1') >= 2],
        ['stream group idle', w.idleOf('stream') >= 2],
      ];
      const now = conditions.filter(([, held]) => !held).map(([what]) => what);
      if (now.join() !== waitingFor.join() || !drainTimeline.length) drainTimeline.push(`${((Date.now() - w.ledger.publishedAt) / 1000).toFixed(1)} s: ${now.join(', ') || 'done'}`);
      waitingFor = now;
      return waitingFor.length === 0;
    });

    // Everything below runs without faults.
    const readCounters = async (): Promise<Omit<CounterReads, 'stream' | 'subscription' | 'webhook'> & Record<string, any>> => ({
      queue: await expect2xx(api, 'GET', `/queues/${b.queue}`),
      stream: await expect2xx(api, 'GET', `/streams/${b.stream}`),
      subscription: await expect2xx(api, 'GET', `/subscriptions/${b.subscription}`),
      webhook: await expect2xx(api, 'GET', `/webhooks/${b.webhook}/status`),
    });
    const marks: Record<string, number> = { drained: Date.now() };
    const before = await readCounters();
    marks.sweep = Date.now();
    // The sweeper as it runs once the queue has been quiet for QUIET_MS (SQS's counts settled).
    const sweepStats = await sweep(Date.now() + QUIET_MS + RECONCILE_EVERY_MS);
    const after = await readCounters();

    // The subscriber and the consumer group once more, after the sweeper: what they get now was
    // held back during the run (by a reservation its publish could not clear, which readers honour
    // for PENDING_SETTLE_MS unless the sweeper settles it first), not skipped. They count as
    // delivered (at least once, later); the figures say how many.
    marks.late = Date.now();
    const late: { messageId: string; marker: string }[] = [];
    for (;;) {
      const page = await expect2xx(api, 'POST', `/subscriptions/${b.subscription}/messages/consume`, { subscriber_id: 'sub-a', max_messages: 100, timeout_seconds: 0 });
      late.push(...page.messages.map((m: { message_id: string; payload: string }) => ({ messageId: m.message_id, marker: JSON.parse(m.payload).m as string })));
      if (!page.messages.length) break;
    }
    marks.lateStream = Date.now();
    const lateStream: string[] = [];
    for (;;) {
      const page = await expect2xx(api, 'POST', `/streams/${b.stream}/messages/consume`, { consumer_group: 'g1', max_messages: 1000, timeout_seconds: 0 });
      lateStream.push(...page.messages.map((m: { payload: string }) => JSON.parse(m.payload).m as string));
      if (!page.messages.length) break;
      await expect2xx(api, 'POST', `/streams/${b.stream}/offsets/commit`, { consumer_group: 'g1', offset: page.next_offset });
    }

    const streamMarkers: string[] = [];
    for (let from = 0; ; ) {
      const page = await expect2xx(api, 'POST', `/streams/${b.stream}/messages/consume`, { consumer_group: 'verify', start_offset: from, max_messages: 1000, timeout_seconds: 0 });
      streamMarkers.push(...page.messages.map((m: { payload: string }) => JSON.parse(m.payload).m as string));
      if (!page.messages.length) break;
      from = page.next_offset;
    }
    marks.verify = Date.now();
    const subscription: Stored['subscription'] = [];
    for (;;) {
      const page = await expect2xx(api, 'POST', `/subscriptions/${b.subscription}/messages/consume`, { subscriber_id: `verify-${runId}`, max_messages: 100, timeout_seconds: 0 });
      subscription.push(...page.messages.map((m: { message_id: string; payload: string }) => ({ messageId: m.message_id, marker: JSON.parse(m.payload).m as string })));
      if (!page.messages.length) break;
    }
    marks.verified = Date.now();
    const okIds = new Set(receiver.deliveries.filter((d) => d.status < 300).map((d) => d.messageId));
    const postedIds = new Set(receiver.deliveries.map((d) => d.messageId));
    const counters: CounterReads = {
      queue: { message_count: after.queue.message_count, truth: await sqsCount(clean, qUrl) },
      stream: { message_count: after.stream.message_count, truth: streamMarkers.length },
      subscription: { message_count: after.subscription.message_count, truth: subscription.length },
      webhook: { success_count: after.webhook.success_count, failure_count: after.webhook.failure_count, truthSuccess: okIds.size, truthFailure: [...postedIds].filter((id) => !okIds.has(id)).length },
    };
    const stored: Stored = { stream: streamMarkers, subscription, webhook: receiver.deliveries };
    ledger.subscribed.push(...late.map((m) => ({ ...m, loop: -1 })));
    ledger.streamRead.push(...lateStream);
    const { findings, duplicates } = judge(ledger, stored, counters, api.violations, (id) => injector.copiesOf(qUrl, id), (id) => injector.copiesOf(local.queueUrl, id));
    const { created, refused, gaveUp, retried } = outcomes(ledger);
    if (trace && (findings.lost.subscriber.length || late.length)) {
      const file = await trace.dump(process.env.FAULT_TRACE_DIR as string, { namespace: ns.name, id: subId, subscriber: 'sub-a', lost: findings.lost.subscriber.length ? findings.lost.subscriber : late.map((m) => m.messageId), label: `seed${o.seed}-${findings.lost.subscriber.length ? 'lost' : 'held'}`, extra: { marks, sweep: sweepStats, lateCount: late.length, ledgerTimes: { started: ledger.startedAt, published: ledger.publishedAt, drained: ledger.drainedAt }, drainTimeline } });
      process.stdout.write(`\nsubscription log trace written: ${file}\n`);
    }
    const s = injector.stats;
    const figures = {
      run: name,
      seed: o.seed,
      seconds: { publishing: (ledger.publishedAt - ledger.startedAt) / 1000, drain: (ledger.drainedAt - ledger.publishedAt) / 1000, total: (Date.now() - started) / 1000 },
      sdk: {
        calls: s.calls,
        callsByCommand: s.commands,
        attemptsFailed: injector.attemptsFailed,
        attemptsFailedBy: s.attempts,
        callsFailedAfterSdkRetries: s.callsFailed,
        absorbedBySdkRetries: s.absorbed,
        ownWriteConflictsAfterLostAnswer: s.ownWriteConflicts,
        callsFailedByCommand: s.failedCommands,
      },
      answers: Object.fromEntries([...api.answers].sort()),
      refusalsByRoute: Object.fromEntries([...api.refusals].sort()),
      publishes: { requests: ledger.publishes.length, created: ledger.publishes.filter((p) => p.ids).length, refused4xx: ledger.publishes.filter((p) => !p.ids).length - gaveUp, gaveUp, retried },
      messages: { answered201: created.size, refused: refused.length, lost: lostCounts(findings) },
      duplicates,
      acks: { ...Object.fromEntries(ledger.ackOutcomes), notFoundBeforeAnyAck: unexplained404s(ledger) },
      counters: {
        queue: { before: before.queue.message_count, after: after.queue.message_count, truth: counters.queue.truth },
        stream: { before: before.stream.message_count, after: after.stream.message_count, truth: counters.stream.truth },
        subscription: { before: before.subscription.message_count, after: after.subscription.message_count, truth: counters.subscription.truth },
        webhook: { success: after.webhook.success_count, failure: after.webhook.failure_count, truthSuccess: counters.webhook.truthSuccess, truthFailure: counters.webhook.truthFailure },
      },
      drainEndedWaitingFor: waitingFor,
      drainTimeline,
      heldBackUntilTheSweeper: { subscriber: late.length, streamGroup: lateStream.length },
      skippedForGood: { subscriber: findings.lost.subscriber.length, streamGroup: findings.lost.streamGroup.length },
      latencyMs: api.latencies(),
      sweeps: { ...ledger.sweeps, final: Object.keys(sweepStats).filter((k) => 'error' in sweepStats[k]) },
      webhookJobsInDlq: await sqsCount(clean, local.deadLetterQueueUrl),
    };
    return { figures, findings, duplicates };
  } finally {
    injector.set(undefined);
    await receiver.close();
    await local.stop();
    await server.close();
    api.close();
    clean.destroy();
  }
}
