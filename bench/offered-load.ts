/**
 * A fixed offered publish load on webhooks' topics and the wait for its deliveries, shared by the
 * benches of one webhook beside another (bench/webhooks-neighbours.ts, bench/webhooks-fairness.ts),
 * and the delivery path those benches and bench/webhooks-dead-steady.ts run it through.
 */
import { randomBytes } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import type { LocalRetryWorkflow } from '../local/stepfunctions';
import { expectStatus, type BenchEnv } from './harness';

/** A webhook's topic, the client that publishes to it, and its messages' publish and arrival records. */
export interface OfferTarget {
  topic: string;
  call: BenchEnv['call'];
  /** Publish start of each message, by id (what its latency is measured from). */
  sentAt: Map<string, number>;
  /** Ids of the messages that arrived. */
  received: Set<string>;
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));

/**
 * Publishes `perSecond` messages a second to each target's topic for `seconds`, in batches of
 * 10 on a fixed schedule (a late publish does not shift the next), each publish's messages timed
 * from its start.
 */
export async function offer(targets: OfferTarget[], perSecond: number, seconds: number): Promise<void> {
  const perPublish = 10;
  const every = (1000 * perPublish) / perSecond;
  const n = Math.round((seconds * 1000) / every);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let k = 0; k < n; k++) {
    await sleepUntil(start + k * every);
    for (const t of targets) {
      const sent = performance.now();
      const p = t.call('POST', `/topics/${t.topic}/messages/batch`, { messages: Array.from({ length: perPublish }, (_, i) => ({ payload: `{"n":${k * perPublish + i}}` })) }).then((res) => {
        expectStatus(res, 201, 'batch publish');
        for (const id of (res.body.data as { message_ids: string[] }).message_ids) if (!t.received.has(id)) t.sentAt.set(id, sent);
      });
      // Awaited by Promise.all below, after the schedule: until then a failed publish must not be
      // an unhandled rejection, which ends the process instead of the bench's own error.
      p.catch(() => undefined);
      pending.push(p);
    }
  }
  await Promise.all(pending);
}

/** Waits until every message published to the targets has arrived, looking every `pollMs`; throws after `timeoutMs`. */
export async function drained(targets: OfferTarget[], timeoutMs: number, pollMs: number, what = 'deliveries'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (targets.some((t) => [...t.sentAt.keys()].some((id) => !t.received.has(id)))) {
    if (Date.now() > deadline) throw new Error(`bench: ${what} still missing after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * The stack's webhook delivery path on the local engines: a delivery queue of its own (named from
 * `prefix`) made the service's, its event source as the stack maps it (local/webhooks.ts
 * `deliveryMapping`: pollers scaling as Lambda's, the fair-queue rule of local/fair-queues.ts) handing each batch to the delivery handler once `observe` has seen its
 * records, and the retry workflow (the stack's ASL on aws-local-stepfunctions). Call it after
 * startBenchEnv: the service's modules are imported here, once the environment is set.
 */
export async function startDeliveryPath(prefix: string, observe: (records: SQSRecord[]) => void): Promise<{ workflow: LocalRetryWorkflow; events: { peakBusy: number }; stop(): Promise<void> }> {
  const { resetConfig } = await import('../lambda/core/config');
  const { ensureDeliveryQueues, deliveryMapping } = await import('../local/webhooks');
  const { LocalSqsEventSource } = await import('../local/event-source');
  const { LocalRetryWorkflow } = await import('../local/stepfunctions');
  const { setRetryWorkflow } = await import('../lambda/webhooks/storage/retry-workflow');
  const { closeAgents } = await import('../lambda/webhooks/storage/http-delivery');
  const { processBatch } = await import('../lambda/webhooks/delivery-batch');
  const { runAction } = await import('../lambda/handlers/webhook-attempt');
  const dq = await ensureDeliveryQueues(`${prefix}-${randomBytes(3).toString('hex')}`);
  process.env.MSG_WEBHOOK_QUEUE_URL = dq.url;
  resetConfig();
  const observed: typeof processBatch = (event) => {
    observe(event.Records);
    return processBatch(event);
  };
  const source = new LocalSqsEventSource(observed, deliveryMapping(dq)).start();
  const workflow = new LocalRetryWorkflow(runAction);
  setRetryWorkflow(workflow);
  return {
    workflow,
    events: source,
    async stop() {
      await source.stop();
      await workflow.stop();
      setRetryWorkflow(undefined);
      await closeAgents();
    },
  };
}
