/**
 * A settle's claim on an exhausted message (lambda/queues/leftovers.ts) must never outlive the
 * settle as if it had dead-lettered: a settle whose dead-letter publish failed takes its claim
 * back, and if that fails too (or its function ended midway) the claim is left behind. A later
 * receive that took such a claim for "already dead-lettered" deleted the message unpublished: out
 * of deliveries and never dead-lettered (the simulation's `dead-letter-lost`).
 */
import { getQueueCounters } from '../../lambda/queues/storage/queues';
import { SETTLE_CLAIM_SECONDS, SETTLE_VISIBILITY_SECONDS } from '../../lambda/queues/leftovers';
import { putSettledRecord } from '../../lambda/queues/storage/queue-message-records';
import { ddb } from '../../lambda/core/storage/client';
import { placedFaults } from './placed';
import { poisonKit, sleep, type Consumed } from './poison';

jest.setTimeout(150_000);

const t = placedFaults({ namespace: 'fault-dead-letter-claims', seed: 7, services: ['dynamodb', 'sqs'] });

const { consume, poison } = poisonKit(t);

describe('dead-letter claims', () => {
  it('dead-letters a message whose failed settle could not take its claim back, once the claim is abandoned', async () => {
    const { dead, name, id, queueId } = await poison();

    // The one delivery max_retries 0 allows, left unacknowledged with a 1 s visibility.
    const first = (await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages as Consumed[];
    expect(first.map((m) => m.message_id)).toEqual([id]);
    await sleep(1_200);

    // The next receive finds it out of deliveries: its dead-letter send fails (every attempt),
    // and so does the removal of its claim (the settled record), which is left behind.
    t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes('dlq_source_queue') });
    t.injector.failNext({ service: 'dynamodb', command: 'DeleteItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'before', attempts: Infinity, matches: (input) => JSON.stringify(input).includes(`MSG#${id}`) && JSON.stringify(input).includes('#ACK') });
    expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    expect(t.injector.unused).toBe(0);

    // The settle kept it hidden for its minute; consumers poll until it is settled (gone from SQS).
    const until = Date.now() + (SETTLE_VISIBILITY_SECONDS + 30) * 1000;
    while (Date.now() < until) {
      expect((await consume(name, { visibility_timeout_seconds: 1, timeout_seconds: 1 })).body?.data.messages).toEqual([]);
      if ((await getQueueCounters(t.namespace, queueId)).totals.count === 0) break;
    }

    const copies = (await consume(dead, { max_messages: 100, visibility_timeout_seconds: 300, timeout_seconds: 2 })).body?.data.messages as Consumed[];
    expect(copies.map((m) => m.properties.dlq_message_id)).toEqual([id]);
    const c = await getQueueCounters(t.namespace, queueId);
    expect(c.totals).toEqual({ count: 0, bytes: 0 });
    expect(c.dead_lettered_count).toBe(1);
    expect(t.api.violations).toEqual([]);
  });

  it('leaves the counting to the settle that took its claim over when its dead-lettering outlasted the claim', async () => {
    const { dead, name, id, queueId } = await poison();
    expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toHaveLength(1);
    await sleep(1_200);

    // The settle's publish ends after its claim lapsed: by the time it makes the claim final,
    // another settle has taken the claim over (written here just before, as that settle would).
    let tookOver = false;
    const name_ = 'claim-taken-over';
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { UpdateExpression?: string };
        if (!tookOver && /^Update(Item)?Command$/.test(String(context.commandName)) && /REMOVE claim_until/.test(String(input.UpdateExpression)) && JSON.stringify(input).includes(`MSG#${id}`)) {
          tookOver = true;
          const later = Date.now() + (SETTLE_CLAIM_SECONDS + 1) * 1000;
          expect(await putSettledRecord(t.namespace, queueId, id, later + 600_000, later, 'another-settle', later + SETTLE_CLAIM_SECONDS * 1000)).toBe('won');
        }
        return next(args);
      },
      { step: 'initialize', name: name_ },
    );
    try {
      expect((await consume(name, { visibility_timeout_seconds: 1 })).body?.data.messages).toEqual([]);
    } finally {
      ddb().middlewareStack.remove(name_);
    }
    expect(tookOver).toBe(true);
    // The other settle counts the message when it ends (here it never does): counted by this one
    // too, the message would leave the counters twice.
    const c = await getQueueCounters(t.namespace, queueId);
    expect({ dead_lettered: c.dead_lettered_count, count: c.totals.count }).toEqual({ dead_lettered: 0, count: 1 });
    const copies = (await consume(dead, { max_messages: 100, visibility_timeout_seconds: 300, timeout_seconds: 2 })).body?.data.messages as Consumed[];
    expect(copies.map((m) => m.properties.dlq_message_id)).toEqual([id]);
  });
});
