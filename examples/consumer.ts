/**
 * Example: a queue consumer loop. Consumes a batch (long polling), processes each message, and
 * acknowledges the processed ones in one batch ack. It acts only on messages it still holds:
 * once a batch's visibility timeout is about to end, the rest of the batch is left alone (another
 * consumer may receive them) and comes back later, as does any message whose processing failed.
 * Over the rate limit (429) it waits the `Retry-After` seconds the API names, then goes on.
 * Delivery is at least once: make `handle` idempotent.
 *
 *   npx tsx examples/consumer.ts orders          # queue name; Ctrl-C stops after the current batch
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError, unwrap, type MessagingClient, type Schemas } from '../client';
import { clientFromEnv, runAsScript, runMain } from './env';

type QueueMessage = Schemas['QueueMessage'];

export interface ConsumerOptions {
  api: MessagingClient;
  queue: string;
  /** Processes one message; a throw leaves the message unacknowledged (it is delivered again). */
  handle: (message: QueueMessage) => Promise<void>;
  /** Messages per consume (1 to 100). @default 10 */
  batchSize?: number;
  /** Long-poll wait when the queue is empty (0 to 30 s). @default 20 */
  waitSeconds?: number;
  /** How long a received batch stays hidden from other consumers. @default 60 */
  visibilitySeconds?: number;
  /** Stops the loop (after the current batch is acknowledged). */
  signal?: AbortSignal;
  /** Called when the API answered 429, with the seconds it asked to wait. */
  onRateLimited?: (seconds: number) => void;
  /** Waits `ms` (rejects when `signal` aborts). @default node:timers/promises setTimeout */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

export interface ConsumerStats {
  processed: number;
  failed: number;
  /** Messages not processed because the batch's visibility had run out. */
  released: number;
  rateLimited: number;
}

/** Leaves this much of the visibility timeout for the ack itself (at most a quarter of it). */
const ACK_MARGIN_MS = 2_000;

/**
 * Runs `fn`; on 429 waits `Retry-After` seconds and runs it again. Other errors are thrown.
 * Returns undefined when the signal stops the wait.
 */
async function withRetryAfter<T>(fn: () => Promise<T>, o: ConsumerOptions, stats: ConsumerStats): Promise<T | undefined> {
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 429) throw e;
      const seconds = e.retryAfterSeconds ?? 1;
      stats.rateLimited += 1;
      o.onRateLimited?.(seconds);
      try {
        await (o.sleep ?? ((ms, signal) => delay(ms, undefined, { signal })))(seconds * 1000, o.signal);
      } catch {
        return undefined;
      }
    }
  }
}

export async function runConsumer(o: ConsumerOptions): Promise<ConsumerStats> {
  const { api, queue } = o;
  const visibility = o.visibilitySeconds ?? 60;
  const stats: ConsumerStats = { processed: 0, failed: 0, released: 0, rateLimited: 0 };
  const path = { queue_name: queue };
  while (!o.signal?.aborted) {
    const received = await withRetryAfter(
      async () =>
        unwrap(
          await api.POST('/queues/{queue_name}/messages/consume', {
            params: { path },
            body: { max_messages: o.batchSize ?? 10, timeout_seconds: o.waitSeconds ?? 20, visibility_timeout_seconds: visibility },
            signal: o.signal,
          }),
        ),
      o,
      stats,
    ).catch((e: unknown) => {
      if (o.signal?.aborted) return undefined; // stopped during a long poll
      throw e;
    });
    if (!received) break;
    const heldUntil = Date.now() + visibility * 1000 - Math.min(ACK_MARGIN_MS, visibility * 250);
    const done: { message_id: string; receipt_handle: string }[] = [];
    for (const m of received.messages) {
      if (Date.now() > heldUntil) {
        stats.released += 1;
        continue;
      }
      try {
        await o.handle(m);
        done.push({ message_id: m.message_id, receipt_handle: m.receipt_handle });
      } catch {
        stats.failed += 1;
      }
    }
    if (done.length === 0) continue;
    // The ack is not stopped by the signal: processed messages are acknowledged before stopping.
    const acked = await withRetryAfter(async () => unwrap(await api.POST('/queues/{queue_name}/messages/ack', { params: { path }, body: { entries: done } })), { ...o, signal: undefined }, stats);
    // An entry refused here (its visibility ended meanwhile) is delivered again: at least once.
    stats.processed += acked?.acknowledged_count ?? 0;
  }
  return stats;
}

if (runAsScript('consumer.ts')) {
  runMain(async () => {
    const [queue = 'orders'] = process.argv.slice(2);
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    const stats = await runConsumer({
      api: clientFromEnv(),
      queue,
      signal: stop.signal,
      handle: async (m) => console.log(`${m.message_id} (delivery ${m.receive_count}): ${m.payload}`),
      onRateLimited: (s) => console.error(`rate limited, waiting ${s} s`),
    });
    console.error(`stopped: ${JSON.stringify(stats)}`);
  });
}
