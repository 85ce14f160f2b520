/**
 * The drain's redrive (./actors-redrive.ts): a call that moves nothing while the dead-letter queue
 * still holds messages in SQS (a batch hidden by a failed call of a step, back after the redrive's
 * visibility) is not the end: the drain calls again until the queue is empty or its time is out.
 */
import { newRedriveSeen, redriveAll } from './actors-redrive';
import type { World } from './world';

it('redrives again while the dead-letter queue is not empty, until it is', async () => {
  let hidden = 2; // calls that find nothing visible before the hidden batch comes back
  let left = 3;
  const calls: string[] = [];
  const w = {
    names: { root: 'r', redrive: { dead: 'd' } },
    ledger: {
      call: async (_actor: string, method: string, path: string) => {
        calls.push(`${method} ${path}`);
        const moved = hidden-- > 0 ? 0 : left;
        left -= moved;
        return { status: 200, body: { data: { moved, published_not_removed: 0, remaining: left } } };
      },
    },
  } as unknown as World;
  const seen = newRedriveSeen();
  await redriveAll(w, seen, 0, 10, { empty: async () => left === 0, ms: 10_000, pauseMs: 10 });
  expect(left).toBe(0);
  expect(seen.calls.map((c) => c.moved)).toEqual([0, 0, 3, 0]);
  expect(calls).toHaveLength(4);
});
