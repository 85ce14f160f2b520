/**
 * A reader never passes a block whose publish then answers 201, when reservations land late.
 *
 * lambda/logs/rules/log-records.ts bounded (before the fix) a run without a later record by the head's last reservation
 * token's time + PUBLISH_LIFETIME_MS (29 s): "every reservation landed before the last one, which
 * landed within its publish's lifetime". The token's time is taken before the UpdateItem is sent,
 * so the premise holds only if the request lands within 29 s of that. The scheduler's tick and
 * webhook delivery publish too and live 60 s (lib/constructs/scheduler.ts TICK_TIMEOUT,
 * webhook-delivery.ts DELIVERY_TIMEOUT); the client sets no request timeout, so their reservation
 * can land 36 s after its token (a slow socket, the SDK's backoff on throttling). Then:
 *
 *   T0       L (a 60 s publisher) makes its token; its UpdateItem is slow to arrive
 *   T0+36    J (an HTTP publish) reserves number 1; its chunk write is slow (BatchWrite retries)
 *   T0+36    K (an HTTP publish) reserves number 2, stores its message at offset 2, its record
 *   T0+36    L's reservation lands: number 3, the head's `lt` = L's token (time T0)
 *   T0+64.5  a follower at offset 1 (it had read 'a'): run {1} has time
 *            min(ra of records 2 and 3 = T0+36, lt + 29 s = T0+29) = T0+29, 35.5 s old: passed as
 *            dead; the follower gets K at offset 2, next_offset 3
 *   T0+64.5  J's chunk lands, its record is written; J is 28.5 s old, its record written: 201
 *
 * Observed before the fix: J answered success at offset 1; the follower's next_offset was 3 and
 * it never saw J. The bound is now the longest lifetime of a function that reserves
 * (lambda/logs/rules/log-horizon.ts `RESERVATION_LANDING_MS`).
 */
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { namespaceTestbed } from '../fixtures/testbed';
import { holdSends, sendGate, type SendGate } from '../fixtures/held-sends';
import { logApi, published, streamBinding } from '../fixtures/logs';
import { tableName } from '../../lambda/core/storage/client';
import { getHead } from '../../lambda/logs/storage/log-heads';
import { settleDead } from '../../lambda/logs/storage/log-reservations';

jest.setTimeout(180_000);

const { ns, call } = namespaceTestbed('latersv');
const logs = logApi(call);

const outcome = (p: Promise<void>) => p.then(() => 'ok', (e: { status?: number; code?: string; message?: string }) => `${e.status ?? ''} ${e.code ?? e.message}`);

it('a reader never passes a block whose publish then answers success', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now())]);
  await append('a'); // number 0, offset 0

  const realNow = Date.now.bind(Date);
  let shift = 0;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  const gates: Record<string, SendGate> = {};
  const gate = (key: string) => (gates[key] = sendGate());
  gate('L-reservation');
  // Slow to arrive: held before it is sent.
  holdSends((cmd) =>
    cmd instanceof UpdateCommand && String(cmd.input.UpdateExpression).includes('lt = :tok')
      ? gates['L-reservation']
      : cmd instanceof BatchWriteCommand && Object.keys(cmd.input.RequestItems ?? {}).includes(tableName('streamLog'))
        ? gates['J-chunk']
        : undefined,
  );
  const until = async (f: () => boolean) => {
    while (!f()) await new Promise((r) => setTimeout(r, 10));
  };
  // The scenario's times are read from L's token (T0): anchored to it before each step that
  // judges an age, so the real time a loaded machine takes between steps does not age J past its
  // lifetime (a CI run saw J answer 503).
  const t0 = realNow();
  const at = (ms: number) => {
    shift = t0 + ms - realNow();
  };
  try {
    const L = outcome(append('L')); // token at T0
    await until(() => gates['L-reservation'].held);
    shift = 36_000;
    gate('J-chunk');
    const J = outcome(append('J')); // reserves number 1 at T0+36
    await until(() => gates['J-chunk'].held);
    expect(await outcome(append('K'))).toBe('ok'); // number 2 at T0+36, stored at offset 2
    gates['L-reservation'].release(); // lands as number 3, lt = L's token (T0)
    expect(await L).toMatch(/^503/); // past its write window: a gap, not stored
    at(64_300);
    // A follower that had read 'a' (next_offset 1) reads on from 1 (run {1} passed as dead).
    const first = await logs.read(name, { consumer_group: 'follower', start_offset: 1 });
    at(64_300); // J's own check: T0+64.3 s, J 28.3 s old at most
    gates['J-chunk'].release();
    expect(await J).toBe('ok'); // J answers 201

    const all = await logs.read(name, { consumer_group: 'audit' });
    const j = all.messages.find((m) => m.payload === 'J')!;
    expect(j).toBeDefined();
    // Promised: a reader following next_offset never skips a message answered 201.
    const seen = first.messages.some((m) => m.payload === 'J');
    expect(first.next_offset > j.offset && !seen ? `skipped J at offset ${j.offset}: the follower's next_offset was ${first.next_offset}` : 'not skipped').toBe('not skipped');
  } finally {
    clock.mockRestore();
    jest.restoreAllMocks();
  }
});

it('a publish whose block was settled as dead before its record answers 503, not 201, whatever its own clock says', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref = { namespace: ns.name, id: s.id };
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now())]);
  await append('a'); // number 0

  const realNow = Date.now.bind(Date);
  let shift = 0;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
  const chunk = sendGate();
  holdSends((cmd) => (cmd instanceof BatchWriteCommand && Object.keys(cmd.input.RequestItems ?? {}).includes(tableName('streamLog')) ? chunk : undefined));
  try {
    const J = outcome(append('J')); // number 1, its chunk write slow
    while (!chunk.held) await new Promise((r) => setTimeout(r, 10));
    expect(await outcome(append('K'))).toBe('ok'); // number 2, its record dates run {1}
    // A settler whose clock is 40 s ahead of J's (two containers) settles run {1} as dead: nothing stored there.
    shift = 40_000;
    const head = (await getHead(ref))!;
    const [token] = Object.keys(head.pending);
    expect(token).toBeDefined();
    await settleDead(ref, head, token);
    // J's clock: 20 s after its reservation, within its lifetime. Its chunk lands, its record is refused.
    shift = 20_000;
    chunk.release();
    expect(await J).toMatch(/^503/);
  } finally {
    clock.mockRestore();
    jest.restoreAllMocks();
  }
});
