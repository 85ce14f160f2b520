/**
 * Bulk replay over pages (docs/design/0022-delivery-log-and-replay.md): a message is queued once
 * however the pages overlap or however many failed entries it has, and `next_since` never passes
 * entries that may still be written (an entry is keyed by its attempt's start and written when it
 * ended, up to the timeout later). Entries are written with the storage functions, the replays are
 * delivered by the local delivery to a real receiver, which counts the POSTs of each message.
 */
import { until } from '../fixtures/receiver';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { putAttempt, putRetained } from '../../lambda/webhooks/storage/delivery-log';
import { claimReplay } from '../../lambda/webhooks/storage/replay-marks';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { ddb } from '../../lambda/core/storage/client';
import { replayFailedSince } from '../../lambda/webhooks/replay';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrp');

const message = (id: string, at: number): PublishedMessage => ({ message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: at, size: 4 });

/** A delivery that ended in failure at `at`: its final attempt entry and its retained copy. */
async function failedAt(webhookId: string, id: string, at: number) {
  await putAttempt(bed.ns.name, webhookId, { message_id: id, attempt: 1, attempted_at: at, duration_ms: 10, status_code: 500, outcome: 'failed', error: 'HTTP 500', final: true, replay: false }, unique('e'));
  await putRetained(bed.ns.name, webhookId, message(id, at), at + 10);
  // Bulk replay finds entries through an index, which lags like AWS's (docs/aws-parity.md); a
  // replay that runs before an entry shows there can be run again. Here: pages, not lag.
  await afterIndexLag();
}

async function replayAll(name: string, since: number, max: number, between?: (page: number) => Promise<void>) {
  let next: number | null = since;
  let queued = 0;
  for (let page = 0; next !== null && page < 50; page++) {
    const r: { queued: number; next_since: string | null } = await replayFailedSince(bed.ns.name, name, next, Date.now(), max);
    queued += r.queued;
    next = r.next_since === null ? null : Date.parse(r.next_since);
    await between?.(page);
  }
  expect(next).toBeNull();
  return queued;
}

/**
 * Two bulk replays of F1–F5 at once, the first claim write of F3 to pass the SDK's retries
 * applied and its answer lost (a fault after the engine answered). `order` says which of the two
 * F3 writes reaches the engine first: the other is held until that one is answered, since which
 * lands first otherwise depends on the machine's load. The caller then sends the replay again (a
 * 503 says it may), and each message must be POSTed once whichever way it went.
 */
async function twoReplaysLosingF3Answer(order: 'faulted-first' | 'other-first') {
  const recv = await bed.receivers.start();
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const now = Date.now();
  const ids = ['F1', 'F2', 'F3', 'F4', 'F5'];
  for (const [i, m] of ids.entries()) await failedAt(id, m, now - 60_000 + i * 1000);
  const isF3Claim = (c: RecordedCall) => c.input.Key?.sk === '#REPLAY_QUEUED' && c.input.Key?.pk?.includes('F3') && /^Update/.test(c.command);
  // One middleware both picks the faulted write and orders the two, so the write it faults is the
  // one it holds or lets go first: two middlewares could see the writes in different orders when
  // another one between them waits (the harsh layer under load), which left the arrangement
  // undone in a loaded CI run. The first F3 write is applied and its answer lost; the second
  // waits for the first to be applied (`faulted-first`), or the first waits for the second's
  // answer (`other-first`).
  const hits: { refusedWith?: string }[] = [];
  let firstApplied!: () => void;
  const firstIn = new Promise<void>((r) => (firstApplied = r));
  let secondAnswered!: () => void;
  const secondOut = new Promise<void>((r) => (secondAnswered = r));
  let f3Writes = 0;
  const arrange = `lose-f3-${unique('m')}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (!isF3Claim({ command: String(context.commandName), input: args.input as Record<string, any> })) return next(args);
      const n = f3Writes++;
      if (n > 0) {
        if (n === 1 && order === 'faulted-first') await firstIn;
        const out = await next(args);
        // The other replay's claim of F3 is written. (Released on its answer, an error included,
        // the held write was applied once in a loaded CI run: the other's write had failed, its
        // claim tried again later, and the held one found F3 free.)
        secondAnswered();
        return out;
      }
      const hit: { refusedWith?: string } = {};
      hits.push(hit);
      // At most 30 s: a claim the other replay never wrote leaves the arrangement undone, and the
      // assertion on the refusal says so, rather than a hang.
      if (order === 'other-first') await Promise.race([secondOut, new Promise((r) => setTimeout(r, 30_000))]);
      try {
        await next(args);
      } catch (e) {
        hit.refusedWith = (e as Error).name;
        throw e;
      } finally {
        firstApplied();
      }
      throw Object.assign(new Error('injected fault (after) on the first F3 claim'), { name: 'InjectedFault' });
    },
    { step: 'initialize', name: arrange },
  );
  const one = () => replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10).then((r) => r.queued, () => 'failed' as const);
  const answers = await Promise.all([one(), one()]).finally(() => ddb().middlewareStack.remove(arrange));
  expect(hits).toHaveLength(1);
  // Both replays wrote F3's claim; more writes when one met a conflict or a slow answer and was
  // sent again or given back (lambda/webhooks/replay-claim.ts CLAIM_RETRIES): a loaded CI run saw 10.
  expect(f3Writes).toBeGreaterThanOrEqual(2);
  const again = await replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10);
  const queued = answers.reduce<number>((n, a) => n + (a === 'failed' ? 0 : a), again.queued);
  await until(async () => recv.requests.length >= 5, 20_000, `5 replays received (queued ${queued}, answers ${answers.join(', ')})`);
  // Long enough for a second copy of any to arrive (the first five took well under this).
  await new Promise((r) => setTimeout(r, 3000));
  expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id).sort()).toEqual(ids);
  return { answers, hit: hits[0], again };
}

describe('bulk replay pages', () => {
  it('queues each message once, including an entry written late behind the first page', async () => {
    const recv = await bed.receivers.start();
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    // A failed twice (its replay failed again earlier): two final entries, one message.
    await failedAt(id, 'A', now - 50_000);
    await failedAt(id, 'B', now - 40_000);
    await failedAt(id, 'C', now - 5_000);
    await failedAt(id, 'A', now - 45_000);
    const queued = await replayAll(w.name, now - 100_000, 1, async (page) => {
      // A delivery that started 55 s ago and ended just now: its entry appears after page 1.
      // (55 s before the write, not before the test's start: on a loaded machine the writes above
      // take seconds, and an attempt cannot end more than LATE_ENTRY_MS after it started.)
      if (page === 0) await failedAt(id, 'L', Date.now() - 55_000);
    });
    expect(queued).toBe(4);
    await recv.waitFor(4, 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    const ids = recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id).sort();
    expect(ids).toEqual(['A', 'B', 'C', 'L']);
  });

  it('does not queue a message again while its queued replay has not failed since', async () => {
    const recv = await bed.receivers.start({ delayMs: 3000 });
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    await failedAt(id, 'X', now - 120_000);
    expect(await replayAll(w.name, now - 200_000, 10)).toBe(1);
    expect(await replayAll(w.name, now - 200_000, 10)).toBe(0);
    await until(async () => recv.requests.length >= 1, 20_000, 'the replay POSTed');
  });

  it('queues each message once when two bulk replays run at once', async () => {
    const recv = await bed.receivers.start();
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    const ids = ['R1', 'R2', 'R3', 'R4', 'R5'];
    for (const [i, m] of ids.entries()) await failedAt(id, m, now - 60_000 + i * 1000);
    const [a, b] = await Promise.all([replayAll(w.name, now - 100_000, 10), replayAll(w.name, now - 100_000, 10)]);
    expect(a + b).toBe(5);
    await recv.waitFor(5, 20_000);
    // Long enough for a second copy of each to arrive (the first five took well under this).
    await new Promise((r) => setTimeout(r, 3000));
    expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id).sort()).toEqual(ids);
  });

  it('counts a claim its own earlier try applied as its own (a retry after a lost answer)', async () => {
    const w = await createWebhook(bed.call, { url: 'http://127.0.0.1:9/never', topic_filter: unique('t'), retry_count: 0 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    // The SDK sends a write again when its answer was lost: the second try meets the first.
    expect(await claimReplay(bed.ns.name, id, 'M1', now - 1000, now, 'claim-a')).toBe(true);
    expect(await claimReplay(bed.ns.name, id, 'M1', now - 1000, now, 'claim-a')).toBe(true);
    expect(await claimReplay(bed.ns.name, id, 'M1', now - 1000, now, 'claim-b')).toBe(false);
  });

  it('delivers each message once when one of two bulk replays at once fails on a claim and is sent again', async () => {
    // The faulted write reaches the engine first: applied, its answer lost.
    const { answers, hit } = await twoReplaysLosingF3Answer('faulted-first');
    expect(hit.refusedWith).toBeUndefined();
    expect(answers.filter((a) => a === 'failed')).toHaveLength(1);
  });

  it('delivers each message once when the lost answer lands on a claim the other bulk replay refused', async () => {
    // The other replay's claim of F3 lands first (as under load): the faulted write is refused,
    // and the refusal, not the fault, reaches its replay, which counts F3 as the other's.
    const { answers, hit, again } = await twoReplaysLosingF3Answer('other-first');
    expect(hit.refusedWith).toBe('ConditionalCheckFailedException');
    expect(answers).not.toContain('failed');
    expect((answers[0] as number) + (answers[1] as number)).toBe(5);
    expect(again.queued).toBe(0);
  });

  it('delivers each message once when a bulk replay\'s send was stored but answered with an error and is sent again', async () => {
    // The receiver answers only after the caller's retry: the stored jobs are delivered at once,
    // and a replay that succeeded is not a failure to replay any more (docs/webhooks.md), so a
    // loaded machine that let them end before the retry read the log made it queue fewer than 3.
    let answer = () => {};
    const recv = await bed.receivers.start({ holdUntil: new Promise<void>((r) => (answer = r)) });
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0, timeout: 30 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    const ids = ['S1', 'S2', 'S3'];
    for (const [i, m] of ids.entries()) await failedAt(id, m, now - 60_000 + i * 1000);
    // SQS stores the batch and its answer is lost (a timeout after the request was applied): the
    // replay answers 503 and gives its marks back, so the caller's retry queues the messages again.
    let left = 1;
    const name = `lost-answer-${unique('m')}`;
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'SendMessageBatchCommand' || left <= 0) return next(args);
        left--;
        await next(args);
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $fault: 'server' });
      },
      { step: 'initialize', name },
    );
    try {
      await expect(replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10)).rejects.toThrow();
    } finally {
      sqsClient().middlewareStack.remove(name);
    }
    expect(left).toBe(0);
    const again = await replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10).finally(answer);
    expect(again.queued).toBe(3);
    await until(async () => recv.requests.length >= 3, 20_000, '3 replays received');
    // Long enough for the second job of each message to arrive and be refused.
    await new Promise((r) => setTimeout(r, 3000));
    expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id).sort()).toEqual(ids);
  });

  it('queues a message again when giving back its mark after a failed send failed once', async () => {
    const recv = await bed.receivers.start();
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const now = Date.now();
    await failedAt(id, 'G1', now - 60_000);
    // SQS refuses the send (nothing stored), and the first try to give the mark back fails: a mark
    // left held would keep every later bulk replay from queueing the message.
    const name = `refuse-${unique('m')}`;
    let refused = 0;
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'SendMessageBatchCommand' || refused > 0) return next(args);
        refused++;
        throw Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
      },
      { step: 'initialize', name },
    );
    const fault = injectDynamoFault({ when: (c) => /^Delete/.test(c.command) && c.input.Key?.sk === '#REPLAY_QUEUED', mode: 'before', times: 1, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
    fault.arm();
    try {
      await expect(replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10)).rejects.toThrow();
    } finally {
      sqsClient().middlewareStack.remove(name);
      fault.stop();
    }
    expect(fault.hits).toHaveLength(1);
    expect((await replayFailedSince(bed.ns.name, w.name, now - 100_000, Date.now(), 10)).queued).toBe(1);
    await recv.waitFor(1, 20_000);
  });
});
