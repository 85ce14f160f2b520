/**
 * What the subscription cursor-move fault files share: a subscription on a fresh topic, with one
 * subscriber id's consume (its status and payloads, or its error code) and a publish that must be
 * answered 201.
 */
import { unique } from '../fixtures/queues';
import type { PlacedFaults } from './placed';

/** Whether a DynamoDB input writes a subscriber's cursor record (its key names `CURSOR#`). */
export const isCursorMove = (input: Record<string, unknown>) => JSON.stringify(input).includes('"CURSOR#');

/** A new subscription and subscriber `a`'s consume of it, through the API of `t`. */
export async function newSubscription(t: PlacedFaults) {
  const topic = unique('t');
  const sub = unique('u');
  expect((await t.api.call('POST', '/subscriptions', { name: sub, topic_filter: topic })).status).toBe(201);
  const consume = async (max: number) => {
    const a = await t.api.call('POST', `/subscriptions/${sub}/messages/consume`, { subscriber_id: 'a', max_messages: max, timeout_seconds: 0 });
    return [a.status, a.body?.data?.messages?.map((m: { payload: string }) => m.payload) ?? a.body?.error?.code];
  };
  const publish = async (...payloads: string[]) => {
    for (const payload of payloads) expect((await t.api.call('POST', `/topics/${topic}/messages`, { payload })).status).toBe(201);
  };
  return { consume, publish };
}
