/**
 * Promise (docs/design/0022-delivery-log-and-replay.md, lambda/webhooks/replay-claim.ts): the
 * claim on a replay's POST counts as held from its first write attempt, since a write that failed
 * may have been applied all the same; a run that makes no POST gives it back, so the job SQS hands
 * out again goes at once instead of waiting out the claim (90 s), and POSTs once.
 *
 * Scenario: the claim's first write is applied by DynamoDB but its answer is lost (an
 * `InternalServerError` after the write) and its 3 retries fail unsent, so the take fails and the delivery throws. The
 * job is then handed again (as SQS does after the visibility timeout). Observed: holds (the claim
 * was given back; the job handed again POSTs at once, once).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { deliverFirst } from '../../lambda/webhooks/deliver';
import { replayJob } from '../../lambda/webhooks/replay';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrcl');

it('gives back a replay claim whose writes were applied with their answers lost, and POSTs once when handed again', async () => {
  const recv = await bed.receivers.start();
  const hook = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
  const w = (await getWebhook(bed.ns.name, hook.name))!;
  const id = unique('M');
  const m: PublishedMessage = { message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 4 };
  const job = replayJob(w, m, unique('R'));
  const claim = metaKeys.webhookSendClaim(bed.ns.name, w.id, `${id}#REPLAY#${job.replay_id}`);
  // The first try is applied and its answer lost; the retries fail unsent (their refusal would
  // show the claim is this run's own).
  const name = `lost-${unique('m')}`;
  let tries = 0;
  ddb().middlewareStack.add(
    (next) => async (args) => {
      const key = (args.input as { Key?: { pk?: string; sk?: string } }).Key;
      if (!(key?.pk === claim.pk && key.sk === claim.sk) || tries >= 4) return next(args);
      if (++tries === 1) await next(args);
      throw Object.assign(new Error(`injected fault on try ${tries}`), { name: 'InternalServerError', $fault: 'server', $metadata: { httpStatusCode: 500 } });
    },
    { step: 'initialize', name },
  );
  try {
    await expect(deliverFirst(job)).rejects.toThrow(/injected fault/);
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(tries).toBe(4);
  expect(recv.requests).toHaveLength(0);
  const held = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: claim, ConsistentRead: true }));
  expect(held.Item).toBeUndefined();
  expect(await deliverFirst(job)).toBe('success');
  await new Promise((r) => setTimeout(r, 1000));
  expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id)).toEqual([id]);
});
