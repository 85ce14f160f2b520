/**
 * What `consumer_count` costs to read (lambda/queues/storage/queues.ts `countConsumers`): a queue page
 * counts the consumers of every queue on it, so the records read per queue must stay close to
 * the number of consumers, not a multiple of it per minute of the 5-minute window.
 */
import { randomBytes } from 'node:crypto';
import { ddb } from '../../lambda/core/storage/client';
import { countConsumers, recordConsumer } from '../../lambda/queues/storage/queues';
import { consumersPk } from '../../lambda/queues/storage/queue-consumers';
import { afterIndexLag } from '../fixtures/harsh-waits';

jest.setTimeout(60_000);

it('reads at most about two records per consumer active through the whole window', async () => {
  const ns = `cc${randomBytes(3).toString('hex')}`;
  const queueId = `Q${randomBytes(6).toString('hex')}`;
  const consumers = Array.from({ length: 100 }, (_, i) => `c-${i}`);
  const t0 = Date.now() - 6 * 60_000;
  // Every consumer consumes once a minute for 6 minutes (each minute a new container: recorded each time).
  for (let minute = 0; minute <= 6; minute++) {
    const at = t0 + minute * 60_000;
    for (let i = 0; i < consumers.length; i += 25) await Promise.all(consumers.slice(i, i + 25).map((c) => recordConsumer(ns, queueId, `${c}`, at + (minute % 2))));
  }
  await afterIndexLag(); // countConsumers reads eventually consistently
  let scanned = 0;
  const name = `scanned-${randomBytes(3).toString('hex')}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName === 'QueryCommand' && JSON.stringify(args.input).includes(queueId)) scanned += (out.output as { ScannedCount?: number }).ScannedCount ?? 0;
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    expect(await countConsumers(ns, queueId, t0 + 6 * 60_000 + 1)).toBe(100);
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(scanned).toBeLessThanOrEqual(2 * consumers.length);
});

it("writes a queue's consumer records under a partition of that queue's, none under the namespace's", async () => {
  const ns = `cc${randomBytes(3).toString('hex')}`;
  const written: string[] = [];
  const name = `written-${randomBytes(3).toString('hex')}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const pk = (args.input as { Item?: { pk?: string | { S?: string } } }).Item?.pk;
      if (/^Put(Item)?Command$/.test(String(context.commandName))) written.push(typeof pk === 'object' ? String(pk.S) : String(pk));
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await recordConsumer(ns, 'QA', 'c-1', Date.now());
    await recordConsumer(ns, 'QB', 'c-1', Date.now());
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(written).toEqual([consumersPk(ns, 'QA'), consumersPk(ns, 'QB')]);
  expect(new Set(written).size).toBe(2);
  await afterIndexLag(); // countConsumers reads eventually consistently
  expect(await countConsumers(ns, 'QA', Date.now())).toBe(1);
});
