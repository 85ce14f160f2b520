/**
 * A model of the webhook delivery path (docs/design/0017-webhook-delivery-once.md), checked with
 * fast-check against the local runtime: random publishes to a webhook with a random retry policy, a
 * real HTTP receiver that answers each message's requests by a random script (5xx, a closed
 * connection or an answer slower than the webhook's timeout a number of times, then 2xx, or never
 * 2xx; a slow receiver also moves the webhook to its namespace's slow lane), transaction conflicts
 * and lost answers injected into the DynamoDB calls that end deliveries, faults of the fault
 * suite's injector (test/faults/injector.ts) on SQS (a failed DeleteMessageBatch of the event
 * source, so a batch comes back after its visibility timeout) and on Step Functions (StartExecution
 * throttled, absorbed by the start's retries or outlasting them, so the job waits on the queue with
 * `start_retry`), and jobs redriven from the DLQ after the fact.
 *
 * The model says, per message: the receiver answers 2xx at most once and is never POSTed after
 * it; attempts are 1 + the failures before the 2xx, or 1 + retry_count when none comes; the
 * delivery counts once (success iff a 2xx came); every attempt has one log entry, the last one
 * final. FC_SEED replays a run, FC_RUNS runs more (default 3, bounded for npm test).
 */
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { deferJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { sqsJson } from '../../lambda/core/rules/queue-messages';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { setRetryWorkflow, StepFunctionsRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { FaultInjector } from '../faults/injector';
import { LOCAL_STATE_MACHINE_ARN, localSfnClient } from '../faults/local-sfn';

const RUNS = Number(process.env.FC_RUNS ?? 3);
const SEED = Number(process.env.FC_SEED ?? 22022);
jest.setTimeout(120_000 + RUNS * 60_000);

/**
 * How soon a job whose batch was not deleted comes back: above the longest handler run here (a
 * StartExecution refused 6 times, each after the SDK's throttling backoff, about 10 s on a loaded
 * machine), as the stack's 6 minutes are above the function's timeout.
 */
const VISIBILITY_SECONDS = 20;
const bed = webhookTestbed('whmodel', { visibilitySeconds: VISIBILITY_SECONDS });
/** The webhook's timeout (s), and how long a `slow` answer takes (past it). */
const TIMEOUT_SECONDS = 2;
const SLOW_MS = TIMEOUT_SECONDS * 1000 + 500;

// SQS and Step Functions faults through the fault suite's injector: StartExecution goes through a
// real SFNClient (the product's StepFunctionsRetryWorkflow) to the local runner of the ASL file.
const injector = new FaultInjector(SEED);
beforeAll(() => {
  const sfn = localSfnClient(bed.local.workflow);
  setRetryWorkflow(new StepFunctionsRetryWorkflow(sfn, LOCAL_STATE_MACHINE_ARN));
  injector.attach(sfn, 'sfn');
  injector.attach(sqsClient(), 'sqs');
});

/** How the receiver answers one message: `fails` failures of `kind`, then 2xx (or never). */
interface Script {
  fails: number;
  kind: '500' | 'close' | 'slow';
}

interface Scenario {
  retryCount: number;
  scripts: Script[];
  conflicts: number;
  lostAnswers: number;
  redrive: boolean;
  /** StartExecution calls refused (every attempt): up to 5 the start's own retries absorb, 6 outlast them. */
  startThrottles: 0 | 3 | 6;
  /** Whether the event source's first DeleteMessageBatch fails (its jobs come back after the visibility timeout). */
  deleteFails: boolean;
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  retryCount: fc.integer({ min: 0, max: 2 }),
  scripts: fc.array(fc.record({ fails: fc.integer({ min: 0, max: 3 }), kind: fc.constantFrom('500' as const, 'close' as const, 'slow' as const) }), { minLength: 1, maxLength: 4 }),
  conflicts: fc.integer({ min: 0, max: 4 }),
  lostAnswers: fc.integer({ min: 0, max: 2 }),
  redrive: fc.boolean(),
  startThrottles: fc.constantFrom(0 as const, 3 as const, 6 as const),
  deleteFails: fc.boolean(),
});

/** A receiver that answers by script, keyed by the payload (one script per published message). */
async function scriptedReceiver(scripts: Map<string, Script>) {
  const got = new Map<string, { answers: ('2xx' | 'fail')[]; afterSuccess: number; body: Record<string, any> }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const s = scripts.get(body.payload) ?? { fails: 0, kind: '500' };
      const seen = got.get(body.payload) ?? { answers: [] as ('2xx' | 'fail')[], afterSuccess: 0, body };
      got.set(body.payload, seen);
      if (seen.answers.includes('2xx')) seen.afterSuccess++;
      if (seen.answers.length < s.fails) {
        seen.answers.push('fail');
        if (s.kind === 'close') res.destroy();
        else if (s.kind === 'slow') setTimeout(() => res.writeHead(200).end('too late'), SLOW_MS);
        else res.writeHead(500).end('scripted failure');
      } else {
        seen.answers.push('2xx');
        res.writeHead(200).end('ok');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hook`, got, server, close: () => new Promise<void>((r) => server.close(() => r())) };
}

it('delivers each message as the model says, whatever the faults (fast-check)', async () => {
  await fc.assert(
    fc.asyncProperty(scenario, async (sc) => {
      const topic = unique('t');
      const scripts = new Map(sc.scripts.map((s, i) => [`${topic}-m${i}`, s]));
      const recv = await scriptedReceiver(scripts);
      const faults: { stop(): void }[] = [];
      try {
        const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: sc.retryCount, retry_delay: 1, backoff_multiplier: 1, timeout: TIMEOUT_SECONDS });
        const item = (await getWebhook(bed.ns.name, w.name))!;
        // The write that counts a batch's deliveries: a conditional UpdateItem on this process's
        // writer item (docs/design/0018-webhook-delivery-writes.md); a plain write meeting a
        // transaction fails so in AWS.
        const endsDelivery = (c: RecordedCall) => /^(Update|TransactWrite)/.test(c.command) && JSON.stringify(c.input).includes(`#WEBHOOK#${item.id}`) && JSON.stringify(c.input).includes('#STATUS#W#');
        const conflict = injectDynamoFault({ when: endsDelivery, mode: 'before', times: sc.conflicts, name: 'TransactionConflictException' });
        const lost = injectDynamoFault({ when: endsDelivery, mode: 'after', times: sc.lostAnswers, name: 'TimeoutError' });
        faults.push(conflict, lost);
        conflict.arm();
        lost.arm();
        for (let i = 0; i < sc.startThrottles; i++) {
          injector.failNext({ service: 'sfn', command: 'StartExecutionCommand', kind: { code: 'ThrottlingException', status: 400 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
        }
        if (sc.deleteFails) injector.failNext({ service: 'sqs', command: 'DeleteMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
        for (const payload of scripts.keys()) expect((await bed.call('POST', `/topics/${topic}/messages`, { payload })).status).toBe(201);

        const expectSuccess = [...scripts.values()].filter((s) => s.fails <= sc.retryCount).length;
        const status = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data;
        await until(async () => {
          const s = await status();
          return s.success_count + s.failure_count >= scripts.size;
        }, 60_000, 'every delivery ended');

        if (sc.redrive) {
          // Every message's job again, as a DLQ redrive hands it over (a new message, receive count 1).
          const jobs = [...recv.got.values()].map((g) => ({
            namespace: bed.ns.name, webhook_id: item.id, webhook_name: w.name,
            message: { message_id: g.body.message_id, topic: g.body.topic, payload: g.body.payload, content_type: 'text/plain', properties: g.body.properties ?? {}, published_at: Date.parse(g.body.timestamp), size: Buffer.byteLength(g.body.payload) },
          }));
          await deferJobs(jobs.map((j) => sqsJson(j)), 0);
          await new Promise((r) => setTimeout(r, 1500));
        }
        // Settle: no POST may come later (a redelivery after the visibility timeout would; with a
        // failed delete, its jobs do come back then, and must find their records).
        await new Promise((r) => setTimeout(r, sc.deleteFails ? VISIBILITY_SECONDS * 1000 + 2000 : 1500));
        const s = await status();
        expect({ success: s.success_count, failure: s.failure_count }).toEqual({ success: expectSuccess, failure: scripts.size - expectSuccess });
        for (const [payload, script] of scripts) {
          const seen = recv.got.get(payload);
          const attempts = Math.min(script.fails, sc.retryCount) + 1;
          expect({ payload, requests: seen?.answers.length, afterSuccess: seen?.afterSuccess }).toEqual({ payload, requests: attempts, afterSuccess: 0 });
        }
        // One log entry per attempt, the last of each delivery final (the index is eventually consistent).
        const posts = [...recv.got.values()].reduce((n, g) => n + g.answers.length, 0);
        const log = await until(async () => {
          const l = (await bed.call('GET', `/webhooks/${w.name}/deliveries?limit=100`)).body.data.deliveries as { final: boolean; message_id: string }[];
          return l.length >= posts ? l : undefined;
        }, 15_000, 'a log entry per attempt');
        expect(log).toHaveLength(posts);
        expect(log.filter((e) => e.final)).toHaveLength(scripts.size);
      } finally {
        faults.forEach((f) => f.stop());
        injector.clearOneShots();
        recv.server.closeAllConnections();
        await recv.close();
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});
