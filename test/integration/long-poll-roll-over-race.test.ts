/**
 * A long-poll slot item's roll-over to a new period (lambda/queues/storage/long-poll-slots.ts) is
 * conditional on the item being as the refused take saw it; writes between that refusal and the
 * roll-over must make it try again, not count what the item no longer holds. Here a slot of two
 * periods ago is given back late (its container stalled past its lease) and a container whose
 * clock is a period behind takes one in the last period: the count of slots stays the same, so a
 * condition on the count alone let the roll-over subtract the late slot a second time, one slot
 * fewer counted than held (a consume over the namespace's limit could then wait).
 */
import { randomUUID } from 'node:crypto';
import { dynamoClient } from '../../lambda/core/storage/client';
import { namespaceSlotsInUse, releaseSlot, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;

it('a roll-over raced by a late give-back and a take of the last period counts every slot still held', async () => {
  const ns = `lpr-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 5, total: 1000, pool: `race-${randomUUID()}`, shards: 1 };
  // Explicit clocks in three consecutive periods, ahead of the machine's.
  const g = Math.floor(Date.now() / PERIOD_MS) + 10;
  const [old, last, now] = [g, g + 1, g + 2].map((p) => p * PERIOD_MS + 1);
  const x = await takeSlot(ns, limits, PERIOD_MS, old); // its container stalls past its lease
  const y = await takeSlot(ns, limits, PERIOD_MS, last);
  if (!x.taken || !y.taken) throw new Error('two slots expected');

  // Before the first roll-over of the namespace's item to `now` is sent (after the take it
  // follows was refused with the item as it was), x is given back late and a container a period
  // behind takes a slot.
  const name = `race-${randomUUID()}`;
  let raced = false;
  let w: Awaited<ReturnType<typeof takeSlot>> | undefined;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const body = args.input as { Key?: { pk?: { S?: string } | string }; UpdateExpression?: string };
      const pk = typeof body.Key?.pk === 'string' ? body.Key.pk : (body.Key?.pk?.S ?? '');
      if (!raced && /^Update(Item)?Command$/.test(context.commandName ?? '') && pk.startsWith(`NS#${ns}#`) && /^SET #p = :p/.test(body.UpdateExpression ?? '')) {
        raced = true;
        await releaseSlot(x.slot);
        w = await takeSlot(ns, limits, PERIOD_MS, last);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  let z: Awaited<ReturnType<typeof takeSlot>>;
  try {
    z = await takeSlot(ns, limits, PERIOD_MS, now);
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
  expect(raced).toBe(true);
  expect(w?.taken).toBe(true);
  expect(z.taken).toBe(true);
  // y, w and z are held: three slots, however the writes interleaved.
  expect(await namespaceSlotsInUse(ns, 1, PERIOD_MS, now)).toBe(3);
});
