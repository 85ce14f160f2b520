/**
 * Dead-lettering whose settle outlasts the visibility (DESIGN.md section 6): a slow send to the
 * dead-letter topic must not let the message be received and dead-lettered again meanwhile, and
 * the counters move once. SQS answers a delete with a stale handle with success and deletes
 * nothing, so a settle that trusted that answer dead-lettered the message once per visibility.
 */
import { getQueueCounters } from '../../lambda/queues/storage/queues';
import { placedFaults } from './placed';
import { poisonKit, sleep, type Consumed } from './poison';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-dead-letter', seed: 5, services: ['dynamodb', 'sqs'] });

const { consume, poison } = poisonKit(t);

describe('dead-lettering under latency', () => {
  it('dead-letters once, with the original id, when the dead-letter send outlasts the visibility', async () => {
    const { dead, name, id, queueId } = await poison();

    // The one delivery max_retries 0 allows, left unacknowledged with a 1 s visibility.
    const first = (await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages as Consumed[];
    expect(first.map((m) => m.message_id)).toEqual([id]);
    await sleep(1_200);

    // Every dead-letter send takes 1.5 s, longer than the 1 s visibility of the receives.
    for (let i = 0; i < 20; i++) {
      t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', timing: 'before', attempts: 0, delayMs: 1_500, matches: (input) => JSON.stringify(input).includes('dlq_source_queue') });
    }
    // Two consumers poll the source queue for 6 s, each receive with a 1 s visibility.
    const until = Date.now() + 6_000;
    const poll = async () => {
      while (Date.now() < until) expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    };
    await Promise.all([poll(), poll()]);
    t.injector.clearOneShots();

    const copies = (await consume(dead, { max_messages: 100, visibility_timeout_seconds: 300 })).body?.data.messages as Consumed[];
    expect(copies).toHaveLength(1);
    expect(copies[0].properties).toMatchObject({ dlq_source_queue: name, dlq_message_id: id, dlq_receive_count: '1' });

    const c = await getQueueCounters(t.namespace, queueId);
    expect(c.totals).toEqual({ count: 0, bytes: 0 });
    expect(c.dead_lettered_count).toBe(1);

    // The first delivery's handle: the message is gone, not merely re-delivered.
    const ack = await t.api.call('POST', `/queues/${name}/messages/${id}/ack`, { receipt_handle: first[0].receipt_handle });
    expect([ack.status, ack.body?.error?.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
    expect(t.api.violations).toEqual([]);
  });
});
