/**
 * Dead-lettered once (DESIGN.md section 6) where the settle cannot know what happened:
 * - a dead-letter send that SQS applied but whose answer was lost fails the settle, which takes its
 *   claim back; the next settle publishes again. SendMessageBatch on a standard queue cannot be
 *   made idempotent, so the copy must be the same message both times (the same `message_id`),
 *   never a second dead-lettering with a new id;
 * - an ack whose SQS delete comes after its delivery's visibility keeps its record for a moment
 *   and then answers 409; a settle of the message's next delivery that took that record for a
 *   finished ack deleted the message as a copy: neither acknowledged nor dead-lettered.
 *
 * Each case waits about a minute for the settle's visibility (SETTLE_VISIBILITY_SECONDS), so the
 * two run at once (`it.concurrent`, after the file's `beforeAll`), on queues of their own; each
 * fault matches only its own case's calls (its message id, its queue's SQS URL), and the first
 * case checks that its own fault was taken (a one-shot is dropped once a call matches it).
 */
import { getQueueCounters } from '../../lambda/queues/storage/queues';
import { SETTLE_VISIBILITY_SECONDS } from '../../lambda/queues/leftovers';
import { placedFaults } from './placed';
import { poisonKit, sleep, type Consumed } from './poison';

jest.setTimeout(180_000);

const t = placedFaults({ namespace: 'fault-dead-letter-once', seed: 11, services: ['dynamodb', 'sqs'] });

const { consume, poison } = poisonKit(t);


/** Consumers poll the source queue until its counter says the message is settled (held for the settle's minute first). */
async function pollUntilSettled(name: string, queueId: string) {
  const until = Date.now() + (SETTLE_VISIBILITY_SECONDS + 30) * 1000;
  while (Date.now() < until) {
    expect((await consume(name, { visibility_timeout_seconds: 1, timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    if ((await getQueueCounters(t.namespace, queueId)).totals.count === 0) break;
  }
}

describe('dead-lettered once', () => {
  it.concurrent('publishes the same dead-letter message again after a send whose answer was lost', async () => {
    const { dead, name, id, queueId } = await poison();
    const first = (await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages as Consumed[];
    expect(first.map((m) => m.message_id)).toEqual([id]);
    await sleep(1_200);

    // The next receive finds it out of deliveries: SQS stores its dead-letter copy, but every
    // answer is lost, so the settle sees a failed publish and takes its claim back.
    // Taken by this case's dead-letter send only (its message id): the other case runs meanwhile.
    let taken = false;
    const ours = (input: Record<string, unknown>) => JSON.stringify(input).includes('dlq_source_queue') && JSON.stringify(input).includes(id);
    t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'after', attempts: Infinity, matches: (input) => (taken ||= ours(input)) });
    expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    expect(taken).toBe(true);

    await pollUntilSettled(name, queueId);

    // SQS holds copies (one per applied attempt): one message, as SQS's own duplicates are.
    const copies = (await consume(dead, { max_messages: 100, visibility_timeout_seconds: 300, timeout_seconds: 2 })).body?.data.messages as Consumed[];
    expect(copies.map((m) => m.properties.dlq_message_id)).toEqual([id]);
    expect(copies[0].message_id).not.toBe(id);
    const c = await getQueueCounters(t.namespace, queueId);
    expect(c.totals).toEqual({ count: 0, bytes: 0 });
    expect(c.dead_lettered_count).toBe(1);
    expect(t.api.violations).toEqual([]);
  });

  it.concurrent('does not take a late ack still in progress for a finished one', async () => {
    const { dead, name, id, queueId } = await poison();
    const first = (await consume(name, { visibility_timeout_seconds: 5 })).body?.data.messages as Consumed[];
    expect(first.map((m) => m.message_id)).toEqual([id]);

    // The ack writes its record at once, well inside the delivery's sure visibility (so its delete
    // goes without a visibility check), but its SQS delete arrives after the 5 s visibility.
    t.injector.failNext({ service: 'sqs', command: 'DeleteMessageBatchCommand', timing: 'before', attempts: 0, delayMs: 6_500, matches: (input) => String(input.QueueUrl).endsWith(queueId) });
    const ack = t.api.call('POST', `/queues/${name}/messages/${id}/ack`, { receipt_handle: first[0].receipt_handle });
    await sleep(5_300);
    // Meanwhile the message's next delivery: out of deliveries, while the ack's record stands.
    expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    const late = await ack;
    expect([late.status, late.body?.error?.code]).toEqual([409, 'INVALID_RECEIPT_HANDLE']);

    // Not acknowledged, so dead-lettered once the ack has taken its record back.
    await pollUntilSettled(name, queueId);
    const copies = (await consume(dead, { max_messages: 100, visibility_timeout_seconds: 300, timeout_seconds: 2 })).body?.data.messages as Consumed[];
    expect(copies.map((m) => m.properties.dlq_message_id)).toEqual([id]);
    const c = await getQueueCounters(t.namespace, queueId);
    expect(c.totals).toEqual({ count: 0, bytes: 0 });
    expect(c.dead_lettered_count).toBe(1);
    expect(t.api.violations).toEqual([]);
  });
});
