/**
 * The dead-letter fault files' shared setup: queues created through the API of a placed-faults
 * namespace, a consume that does not wait, and the message that a receive finds out of deliveries.
 */
import { unique } from '../fixtures/queues';
import { getQueue } from '../../lambda/queues/storage/queues';
import type { PlacedFaults } from './placed';

export type Consumed = { message_id: string; receipt_handle: string; properties: Record<string, string> };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function poisonKit(t: PlacedFaults) {
  const consume = (name: string, body: Record<string, unknown> = {}) => t.api.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 0, ...body });
  async function createQueue(body: Record<string, unknown>) {
    const name = unique('q');
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, ...body })).status).toBe(201);
    return name;
  }
  /** A poison queue (max_retries 0) and its dead-letter queue, one message published to the first. */
  async function poison() {
    const dead = await createQueue({});
    const name = await createQueue({ max_retries: 0, dead_letter_topic: `${dead}/dead` });
    const published = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'poison' });
    expect(published.status).toBe(201);
    const q = await getQueue(t.namespace, name);
    return { dead, name, id: published.body?.data.message_id as string, queueId: q!.id };
  }
  return { consume, createQueue, poison };
}
