/**
 * The renumbering of a webhook's rate slots after a change of `rate_limit`
 * (lambda/storage/webhook-limits.ts) against DynamoDB Local, with one renumbering write landing
 * late, as under load: it must not number the slots a second time once another take numbered
 * them and the count came back to the value it was conditioned on (two schedules at once).
 */
import { randomUUID } from 'node:crypto';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { reserveRateSlots } from '../../lambda/storage/webhook-limits';

jest.setTimeout(30_000);

it('a renumbering that lands after another renumbering and as many takes as it saw leaves one schedule', async () => {
  const ns = `renum${randomUUID().slice(0, 8)}`;
  const id = randomUUID();
  // Five slots under version 1 at 10 a second: the count is 5.
  await reserveRateSlots(ns, id, 10, 5, 1);
  // Version 2 lowers the limit to 1 a second. A's take moves the count to 6 and its renumbering
  // (conditioned on that count) reaches the table 3 s late.
  let first = true;
  const slow = slowDynamoAnswers({
    when: (c) => {
      const hit = first && String(c.input.Key?.pk).includes(id) && /^SET n = /.test(String(c.input.UpdateExpression));
      if (hit) first = false;
      return hit;
    },
    ms: 3000,
    timing: 'before',
  });
  slow.arm();
  try {
    const a = reserveRateSlots(ns, id, 1, 1, 2);
    while (!slow.hits.length) await new Promise((r) => setTimeout(r, 5));
    // Meanwhile B renumbers at the new rate and C takes 5: the count is 6 again when A's write lands.
    const b = await reserveRateSlots(ns, id, 1, 1, 2);
    const c = await reserveRateSlots(ns, id, 1, 5, 2);
    const aTimes = await a;
    const d = await reserveRateSlots(ns, id, 1, 5, 2);
    // Every slot handed out at the new rate, from all four takes, is a whole second from the next.
    const all = [...aTimes, ...b, ...c, ...d].sort((x, y) => x - y);
    const gaps = all.slice(1).map((t, i) => Math.round(t - all[i]));
    expect(gaps.filter((g) => g < 999)).toEqual([]);
  } finally {
    slow.stop();
  }
});

it('a take that could not renumber in its rounds (other takes in between each time) gets no slot rather than one of another numbering', async () => {
  const ns = `renum${randomUUID().slice(0, 8)}`;
  const id = randomUUID();
  await reserveRateSlots(ns, id, 10, 5, 1);
  // A (version 2, 1 a second, 2 slots): each of its renumbering writes reaches the table 1 s late,
  // and meanwhile a take of a batch that read version 1 (10 a second) moves the count.
  const slow = slowDynamoAnswers({ when: (c) => String(c.input.Key?.pk).includes(id) && /^SET n = /.test(String(c.input.UpdateExpression)) && c.input.ExpressionAttributeValues?.[':k'] === 2, ms: 1000, timing: 'before' });
  slow.arm();
  try {
    const a = reserveRateSlots(ns, id, 1, 2, 2);
    for (let round = 1; round <= 3; round++) {
      while (slow.hits.length < round) await new Promise((r) => setTimeout(r, 5));
      await reserveRateSlots(ns, id, 10, 1, 1);
    }
    const aTimes = await a;
    // B (version 2) right after: every slot at the new rate, A's and B's, a whole second apart.
    const b = await reserveRateSlots(ns, id, 1, 3, 2);
    const all = [...aTimes, ...b].sort((x, y) => x - y);
    const gaps = all.slice(1).map((t, i) => Math.round(t - all[i]));
    expect(gaps.filter((g) => g < 999)).toEqual([]);
  } finally {
    slow.stop();
  }
});

it('hands out no slot of a renumbering whose write landed late behind the clock by more than half a slot', async () => {
  const ns = `renum${randomUUID().slice(0, 8)}`;
  const id = randomUUID();
  await reserveRateSlots(ns, id, 10, 5, 1);
  // Version 2 at 2 a second: the renumbering (from the clock before its write was sent) lands 1.5 s late.
  const slow = slowDynamoAnswers({ when: (c) => String(c.input.Key?.pk).includes(id) && /^SET n = /.test(String(c.input.UpdateExpression)), ms: 1500, timing: 'before' });
  slow.arm();
  let times: number[];
  try {
    times = await reserveRateSlots(ns, id, 2, 6, 2);
  } finally {
    slow.stop();
  }
  const learnt = Date.now();
  expect(slow.hits.length).toBeGreaterThanOrEqual(1);
  // Numbered from before the write, the first 3 slots were 1 to 1.5 s behind: they went at once,
  // beside the next ones, 5 requests in one second at 2 a second.
  expect(times.filter((t) => t < learnt - 250)).toEqual([]);
});
