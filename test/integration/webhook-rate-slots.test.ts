/**
 * The slots of a webhook's `rate_limit` (lambda/webhooks/storage/webhook-limits.ts) against DynamoDB Local,
 * with the reservation's request slowed on its way to the table, as under load: no slot is handed
 * out behind the clock of the moment the caller learns of it.
 */
import { randomUUID } from 'node:crypto';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { reserveRateSlots } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(30_000);

it('numbers an idle webhook\'s slots from when the reservation was applied, not from when it was sent', async () => {
  const ns = `slots${randomUUID().slice(0, 8)}`;
  const id = randomUUID();
  // An earlier reservation, long enough ago that the slots are behind the clock (the webhook idle).
  await reserveRateSlots(ns, id, 10, 1, 1, () => Date.now() - 60_000);
  const slow = slowDynamoAnswers({ when: (c) => /^Update(Item)?Command$/.test(c.command) && String(c.input.Key?.pk).includes(id) && /^ADD n/.test(String(c.input.UpdateExpression)), ms: (i) => (i === 0 ? 1500 : 0), timing: 'before' });
  slow.arm();
  try {
    const times = await reserveRateSlots(ns, id, 10, 10, 1);
    const learnt = Date.now();
    // One slow reservation; a loaded run may take a second, prompt one (the renumbering's write
    // took longer than half a slot, so its first slot was late: reserveRateSlots goes round again).
    expect(slow.hits.length).toBeGreaterThanOrEqual(1);
    // 10 slots 100 ms apart, the first not before the answer came, but for the renumbering's own
    // write (a few ms idle; 110 ms in a loaded CI run). Numbered from when the slow reservation
    // was sent, the first slot was 1.5 s behind.
    expect(times[0]).toBeGreaterThanOrEqual(learnt - 500);
    expect(times[9] - times[0]).toBe(900);
  } finally {
    slow.stop();
  }
});
