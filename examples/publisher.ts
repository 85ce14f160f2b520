/**
 * Example: a publisher. Publishes one message with an `Idempotency-Key` (a retried call with the
 * same key answers the first result instead of storing the message twice) and a batch of
 * messages in one request (all or nothing, ids in request order).
 *
 *   npx tsx examples/publisher.ts orders/eu/created 25      # topic, number of messages
 */
import { randomUUID } from 'node:crypto';
import { unwrap, type MessagingClient } from '../client';
import { clientFromEnv, runAsScript, runMain } from './env';

export interface Order {
  id: number;
  total: number;
}

/**
 * Publishes one order; retrying with the same `idempotencyKey` (e.g. after a timeout) cannot
 * publish it twice within 24 hours.
 */
export async function publishOrder(api: MessagingClient, topic: string, order: Order, idempotencyKey = randomUUID()) {
  return unwrap(
    await api.POST('/topics/{topic}/messages', {
      params: { path: { topic }, header: { 'Idempotency-Key': idempotencyKey } },
      body: { payload: JSON.stringify(order), properties: { kind: 'order' } },
    }),
  );
}

/** Publishes orders 100 to a request (the API's batch limit); returns the message ids in order. */
export async function publishOrders(api: MessagingClient, topic: string, orders: Order[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < orders.length; i += 100) {
    const messages = orders.slice(i, i + 100).map((o) => ({ payload: JSON.stringify(o), properties: { kind: 'order' } }));
    ids.push(...unwrap(await api.POST('/topics/{topic}/messages/batch', { params: { path: { topic } }, body: { messages } })).message_ids);
  }
  return ids;
}

if (runAsScript('publisher.ts')) {
  runMain(async () => {
    const [topic = 'orders/eu/created', count = '10'] = process.argv.slice(2);
    const api = clientFromEnv();
    const orders = Array.from({ length: Number(count) }, (_, i) => ({ id: i + 1, total: (i + 1) * 10 }));
    const [first, ...rest] = orders;
    const single = await publishOrder(api, topic, first);
    const ids = await publishOrders(api, topic, rest);
    console.log(`published ${1 + ids.length} messages to ${topic} (first ${single.message_id})`);
  });
}
