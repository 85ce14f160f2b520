/**
 * The renumbering of a webhook's rate slots after a change of `rate_limit`
 * (lambda/webhooks/storage/webhook-limits.ts) against DynamoDB Local, with one renumbering write landing
 * late, as under load: it must not number the slots a second time once another take numbered
 * them and the count came back to the value it was conditioned on (two schedules at once).
 */
import { randomUUID } from 'node:crypto';
import { slowDynamoAnswers, type RecordedCall } from '../fixtures/dynamo-calls';
import { reserveRateSlots } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(30_000);

/** A new webhook id in a new namespace with five slots taken under version 1 at 10 a second: the count is 5. */
async function fiveSlotsAtTen(): Promise<{ ns: string; id: string }> {
  const ns = `renum${randomUUID().slice(0, 8)}`;
  const id = randomUUID();
  await reserveRateSlots(ns, id, 10, 5, 1);
  return { ns, id };
}

/** Whether a DynamoDB call is a renumbering write of webhook `id`'s rate slots. */
const isRenumbering = (c: RecordedCall, id: string) => String(c.input.Key?.pk).includes(id) && /^SET n = /.test(String(c.input.UpdateExpression));

/** The gaps (ms, rounded) between slot times, in time order. */
function slotGaps(times: number[]): number[] {
  const all = [...times].sort((x, y) => x - y);
  return all.slice(1).map((t, i) => Math.round(t - all[i]));
}

it('a renumbering that lands after another renumbering and as many takes as it saw leaves one schedule', async () => {
  const { ns, id } = await fiveSlotsAtTen();
  // Version 2 lowers the limit to 1 a second. A's take moves the count to 6 and its renumbering
  // (conditioned on that count) reaches the table 3 s late.
  let first = true;
  const slow = slowDynamoAnswers({
    when: (c) => {
      const hit = first && isRenumbering(c, id);
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
    const gaps = slotGaps([...aTimes, ...b, ...c, ...d]);
    expect(gaps.filter((g) => g < 999)).toEqual([]);
  } finally {
    slow.stop();
  }
});

it('a take that could not renumber in its rounds (other takes in between each time) gets no slot rather than one of another numbering', async () => {
  const { ns, id } = await fiveSlotsAtTen();
  // A (version 2, 1 a second, 2 slots): each of its renumbering writes reaches the table 1 s late,
  // and meanwhile a take of a batch that read version 1 (10 a second) moves the count.
  const slow = slowDynamoAnswers({ when: (c) => isRenumbering(c, id) && c.input.ExpressionAttributeValues?.[':k'] === 2, ms: 1000, timing: 'before' });
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
    const gaps = slotGaps([...aTimes, ...b]);
    expect(gaps.filter((g) => g < 999)).toEqual([]);
  } finally {
    slow.stop();
  }
});

it('hands out no slot of a renumbering whose write landed late behind the clock by more than half a slot', async () => {
  const { ns, id } = await fiveSlotsAtTen();
  // Version 2 at 2 a second: the renumbering (from the clock before its write was sent) lands 1.5 s late.
  const slow = slowDynamoAnswers({ when: (c) => isRenumbering(c, id), ms: 1500, timing: 'before' });
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
