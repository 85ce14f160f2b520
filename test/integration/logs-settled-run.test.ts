/**
 * Counts stay exact when a publisher of a dead run wakes up after the run was settled.
 *
 * Before the fix, a dead run of several reservations was settled by ONE record, at the run's
 * first number (`to` covers the rest). The record of a later number of the run was then not
 * refused (its key had no record), so a publisher of that number that wakes up after the settle
 * writes its own record with its own gap on the head (`gaps.{end}`). When it is the run's last
 * number its gap has the run gap's key and replaces it (observed: gaps [{s:2,n:1}] instead of
 * [{s:1,n:2}], message_count 31 for 30 stored); in the middle of the run it is counted twice.
 *
 * A publisher alive 35 s after reserving: the 60 s functions that publish (the scheduler's tick,
 * webhook delivery; lambda/logs/rules/log-horizon.ts says they may outlive a publish's lifetime). Now the
 * settler claims every number of the run first (lambda/logs/storage/log-records.ts `claimRun`): the late put
 * is refused and the publisher answers 503.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { namespaceTestbed } from '../fixtures/testbed';
import { holdSends, sendGate } from '../fixtures/held-sends';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { reserveBlock } from '../../lambda/logs/storage/log-reservations';
import { claimRun, WATERMARK_EVERY, writeRecord } from '../../lambda/logs/storage/log-records';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';

jest.setTimeout(180_000);

const { ns, call } = namespaceTestbed('settledrun');
const logs = logApi(call);

it.each([
  ['last', 0],
  ['middle', 1],
])('a publisher of a run settled as dead that wakes up later (the run\'s %s number) does not recount the gap of its block (the counts stay exact)', async (_, after) => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now())]);
  await append('m0'); // reservation 0
  // Reservation 1: its publish died right after reserving (no chunk, no record).
  await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 2, lastIndex: { 0: 0 } });
  // Reservation 2: its publisher stalls right after its reservation is applied.
  const stall = sendGate();
  holdSends((cmd) => (cmd instanceof UpdateCommand && String(cmd.input.UpdateExpression).includes('lt = :tok') ? stall : undefined), 'after');
  const late = append('late').then(
    () => 'ok',
    (e: { status?: number; code?: string; message?: string }) => `${e.status ?? ''} ${e.code ?? e.message}`,
  );
  while (!stall.held) await new Promise((r) => setTimeout(r, 10));
  // In the middle: reservation 3 died too, the run is 1..3.
  for (let i = 0; i < after; i++) await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 2, lastIndex: { 0: 0 } });
  for (let i = 3 + after; i < WATERMARK_EVERY - 1; i++) await append(`m${i}`);
  // Reservation 31 moves the watermark a settle time later: it settles run 1..2 as dead.
  const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + PENDING_SETTLE_MS + 1_000);
  try {
    await append('m31');
    const settled = (await headOf(ns.name, s.id))!;
    expect(Object.values(settled.gaps)).toEqual([{ s: 1, n: 2 + after, b: expect.any(Number) }]);
    // The stalled publisher wakes: past its write window it writes nothing and records its block.
    stall.release();
    expect(await late).toMatch(/^503/);
  } finally {
    clock.mockRestore();
    jest.restoreAllMocks();
  }
  const read = await logs.read(name);
  expect(read.messages.map((m) => m.payload)).toEqual(['m0', ...Array.from({ length: WATERMARK_EVERY - 3 - after }, (_, i) => `m${i + 3 + after}`)]);
  const head = (await headOf(ns.name, s.id))!;
  // Promised: positions 1 and 2 are one gap, counted once; message_count = the messages stored.
  expect({ message_count: (await logs.getStream(name)).message_count, gaps: Object.values(head.gaps) }).toEqual({ message_count: read.messages.length, gaps: [{ s: 1, n: 2 + after, b: expect.any(Number) }] });
});

it("a claim refuses a publish's record but not the settler's, and a publish's record refuses a claim", async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  const ref = { namespace: ns.name, id: s.id };
  const rec = (seq: number, tok: string, settles?: boolean) => ({ seq, s: seq, n: 1, b: 1, c: seq, tok, ...(settles ? { settles, to: 3 } : {}) });
  // Number 5 recorded by its publish before the settler came: the run is not what it walked.
  expect(await writeRecord(ref, rec(5, 'p5'))).toBe('written');
  expect(await claimRun(ref, { from: 4, to: 6 }, 'run4')).toBe(false);
  // Claims of run 1..3: a late publish of 2 or 3 is refused, the settler's record at 1 is written.
  expect(await claimRun(ref, { from: 1, to: 3 }, 'run1')).toBe(true);
  expect(await claimRun(ref, { from: 1, to: 3 }, 'run1')).toBe(true); // again (a retry): claims may replace claims
  expect(await writeRecord(ref, rec(3, 'p3'))).toBe('taken');
  expect(await writeRecord(ref, rec(2, 'p2'))).toBe('taken');
  expect(await writeRecord(ref, rec(1, 'run1', true))).toBe('written');
  expect(await writeRecord(ref, rec(1, 'p1'))).toBe('taken');
});
