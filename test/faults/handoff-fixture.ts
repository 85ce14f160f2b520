/**
 * The setup the hand-off fault files share (./webhooks-handoff-*.test.ts): the local webhook
 * delivery with fault injection on DynamoDB (and SQS when asked), a webhook whose first attempts
 * fail on a receiver of its own, the faults those files inject into the hand-off (lambda/webhooks/
 * deliver.ts `handToWorkflow`: its note, the take of its counts, its execution), two SQS copies of
 * one job, and a retry workflow whose executions fail. Each file keeps its scenario, its holds
 * and its assertions; only the setup is here.
 */
import { until, type Receiver, type ReceiverOptions } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed, type WebhookTestbed } from '../fixtures/webhook-testbed';
import { dynamoClient } from '../../lambda/core/storage/client';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';
import { setRetryWorkflow, type StartResult } from '../../lambda/webhooks/storage/retry-workflow';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import type { DeliveryJob, RetryState } from '../../lambda/webhooks/rules/delivery';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import { FaultInjector } from './injector';

type Input = Record<string, unknown>;

export interface HandoffFixture {
  bed: WebhookTestbed;
  /** Faults on DynamoDB; its one-shots and latency rules are cleared after each test. */
  injector: FaultInjector;
  /** Faults on SQS, when the file asked for them (`sqsSeed`); cleared likewise. */
  sqsInjector?: FaultInjector;
}

/**
 * One hand-off fault file's bed, made at its top level (it registers the file's hooks): the
 * webhook testbed under `namespace`, its delivery queue's visibility `visibilitySeconds` (how
 * soon a job whose run threw comes back), and injectors seeded with `seed` (and `sqsSeed`).
 */
export function handoffFixture(namespace: string, o: { visibilitySeconds: number; seed: number; sqsSeed?: number }): HandoffFixture {
  const f: HandoffFixture = { bed: webhookTestbed(namespace, { visibilitySeconds: o.visibilitySeconds }), injector: new FaultInjector(o.seed) };
  if (o.sqsSeed !== undefined) f.sqsInjector = new FaultInjector(o.sqsSeed);
  beforeAll(() => {
    f.injector.attach(dynamoClient(), 'dynamodb');
    f.sqsInjector?.attach(sqsClient(), 'sqs');
  });
  afterEach(() => {
    for (const i of [f.injector, f.sqsInjector]) {
      i?.clearOneShots();
      i?.clearLatency();
    }
  });
  return f;
}

export interface HandoffWebhook {
  recv: Receiver;
  topic: string;
  webhookId: string;
  /** The webhook's status counters (GET /webhooks/{name}/status reads them). */
  counts(): ReturnType<typeof statusOf>;
  /** Resolves once a success is counted, or throws after `timeoutMs`. */
  successCounted(timeoutMs: number): Promise<unknown>;
}

const statusOf = async (ns: string, webhookId: string) => (await readWebhookCounters(ns, webhookId)).status;

/**
 * A receiver started with `receiver` and a webhook on `topic` (a new one unless given) that
 * delivers to it, with `fields` (retry_count, retry_delay, hooks...).
 */
export async function handoffWebhook(f: HandoffFixture, receiver: ReceiverOptions, fields: Input, topic = unique('t')): Promise<HandoffWebhook> {
  const { bed } = f;
  const recv = await bed.receivers.start(receiver);
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, ...fields });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  const counts = () => statusOf(bed.ns.name, webhookId);
  return { recv, topic, webhookId, counts, successCounted: (ms) => until(async () => ((await counts()).success_count ?? 0) >= 1, ms, 'the retry succeeded and was counted') };
}

/** Publishes `payload` on `topic` (answered 201): the message's id. */
export async function publish(f: HandoffFixture, topic: string, payload: string): Promise<string> {
  const res = await f.bed.call('POST', `/topics/${topic}/messages`, { payload });
  expect(res.status).toBe(201);
  return res.body.data.message_id as string;
}

/** The delivery record of message `messageId` to webhook `webhookId`. */
export const deliveryOf = (f: HandoffFixture, webhookId: string, messageId: string) => readDelivery({ namespace: f.bed.ns.name, webhookId, messageId });

/** A take of a hand-off's counts of webhook `webhookId` (lambda/webhooks/storage/webhook-delivery-once.ts `takeHandoff`, one TransactWriteItems). */
export const isTake = (webhookId: string) => (input: Input) => JSON.stringify(input).includes('REMOVE handoff_uncounted') && JSON.stringify(input).includes(webhookId);

/** The first hand-off's note of webhook `webhookId` (storage/webhook-deliveries.ts `recordRetrying`, a conditional PutItem of a `retrying` record). */
export const isRetryingPut = (webhookId: string) => (input: Input) => {
  const item = JSON.stringify(input.Item ?? {});
  return item.includes('"retrying"') && item.includes(webhookId);
};

/**
 * The next `calls` DynamoDB calls of `command` that match are applied by the engine and every
 * answer of theirs is lost (500 after the write, every attempt: past the SDK's retries, ./injector.ts).
 */
export function loseAnswers(f: HandoffFixture, command: string, matches: (input: Input) => boolean, calls = 1): void {
  for (let i = 0; i < calls; i++) {
    f.injector.failNext({ service: 'dynamodb', command, kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: Number.POSITIVE_INFINITY, matches });
  }
}

/**
 * Receiver options for two SQS copies of a first job at once (SQS delivers at least once): the
 * job as the publish put it on the delivery queue (caught on its way, which needs `sqsSeed`) is
 * put there again when the first POST arrives, and no POST is answered before the second arrives;
 * the first `failFirst` are answered 500. Call before publishing on `topic`.
 */
export function twoCopies(f: HandoffFixture, topic: string, failFirst: number): ReceiverOptions {
  if (!f.sqsInjector) throw new Error('two copies need the SQS injector: pass sqsSeed');
  let body: string | undefined;
  f.sqsInjector.addLatency({
    service: 'sqs', command: 'SendMessageBatchCommand', ms: 0,
    matches: (input) => {
      for (const e of (input.Entries as { MessageBody?: string }[] | undefined) ?? []) if (!body && e.MessageBody?.includes(topic)) body = e.MessageBody;
      return false;
    },
  });
  let bothArrived!: () => void;
  const arrived = new Promise<void>((r) => (bothArrived = r));
  return {
    failFirst,
    holdUntil: arrived,
    onRequest: (_r, n) => {
      if (n === 1) void enqueueJobs([JSON.parse(body!) as DeliveryJob]);
      if (n === 2) bothArrived();
    },
  };
}

/** A queue of its own that a webhook's on_failure hook (`on_failure`, to pass in its fields) publishes to, and its API to consume it. */
export async function hookQueue(f: HandoffFixture) {
  const alerts = unique('alerts');
  const q = queueApi(f.bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  return { alerts, q, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } };
}

/**
 * The bed's retry workflow replaced by one whose executions fail (the same ASL, its SendMessage
 * to a queue that does not exist, its retries 10 ms apart) and whose failed-execution rule's
 * target is `rule`; `started`: the states its executions started with, `answers`: what each start
 * answered (after ExecutionAlreadyExists, by DescribeExecution). `describeLagMs`: DescribeExecution's
 * lag, instead of the environment's. `restore` stops it and puts the bed's back.
 */
export function failingWorkflow(f: HandoffFixture, rule: ConstructorParameters<typeof LocalRetryWorkflow>[0], o: { describeLagMs?: number } = {}) {
  const broken = new LocalRetryWorkflow(rule, () => undefined, { queueUrl: `${f.bed.local.queueUrl}-missing`, retryIntervalMs: 10, ...o });
  const started: RetryState[] = [];
  const answers: StartResult[] = [];
  const start = broken.start.bind(broken);
  broken.start = async (name, state) => {
    started.push(state);
    const answer = await start(name, state);
    answers.push(answer);
    return answer;
  };
  setRetryWorkflow(broken);
  return {
    broken,
    started,
    answers,
    restore: async () => {
      await broken.stop();
      setRetryWorkflow(f.bed.local.workflow);
    },
  };
}

/** A copy of the first job of a delivery: the retry job an execution started with, without its retry. */
export function firstJob(state: RetryState): DeliveryJob {
  const { retry: _, ...job } = state.job;
  return job;
}
