/**
 * The simulated deployment's timers (./world.ts): the drain stops them before its own tick and
 * the final reads, so a stop must wait for the round in flight (a tick still making runs when the
 * schedules are read showed them as never run).
 */
import { repeat } from './world';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('stops only once the round in flight has ended, and starts no other', async () => {
  let rounds = 0;
  let ended = 0;
  const stop = repeat(10, async () => {
    rounds++;
    await sleep(300);
    ended++;
  });
  await sleep(50);
  await stop();
  expect({ rounds, ended }).toEqual({ rounds: 1, ended: 1 });
  await sleep(50);
  expect(rounds).toBe(1);
});
