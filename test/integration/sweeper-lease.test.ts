/**
 * One sweep at a time without reserved concurrency (docs/operate.md): the sweeper handler takes
 * the lease of lambda/sweeper/storage/sweeper-lease.ts (a conditional write with an expiry in the meta
 * table) before it sweeps, on DynamoDB Local. The sweep itself is a stand-in the test controls,
 * so these tests never touch the data of other test files. Only this file uses the lease item.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { sweeperHandler, type SweepResult } from '../../lambda/handlers/sweeper';
import { LEASE_CLOCK_MARGIN_MS, leaseUntil } from '../../lambda/sweeper/rules';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { acquireLease, releaseLease } from '../../lambda/sweeper/storage/sweeper-lease';
import type { sweep } from '../../lambda/sweeper/tasks';
import { until } from '../fixtures/receiver';

jest.setTimeout(30_000);

/** A Lambda context: the request id names the lease's owner; two minutes left, like SWEEP_TIMEOUT. */
function lambdaContext(requestId: string, remainingMs = 120_000): Context {
  return {
    awsRequestId: requestId,
    functionName: 'sweeper',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:sweeper',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/sweeper',
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A sweep that runs until the test opens its gate, counting its runs. */
function gatedSweep() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const runs: number[] = [];
  const fn = (async (now: number) => {
    runs.push(now);
    await gate;
    return { queues: { depth: 0, oldest_age_seconds: 0 } };
  }) as typeof sweep;
  return { fn, runs, open };
}

const storedLease = async () =>
  (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.sweeperLease(), ConsistentRead: true }))).Item;

const isSkipped = (r: SweepResult): r is Extract<SweepResult, { skipped: true }> => 'skipped' in r && r.skipped === true;

beforeEach(async () => {
  // No lease left over from a previous test.
  const held = await storedLease();
  if (held) await releaseLease(String(held.owner));
});

describe('the sweeper lease', () => {
  it('lets one of two concurrent sweeps run; the other skips and names the holder', async () => {
    const s = gatedSweep();
    const handler = sweeperHandler({ sweep: s.fn });
    const first = handler({}, lambdaContext('sweep-a'));
    const second = handler({}, lambdaContext('sweep-b'));
    // One of them holds the lease while its sweep waits at the gate; the other has answered.
    const skipped = await Promise.race([first, second]);
    expect(isSkipped(skipped)).toBe(true);
    // The holder may answer the skip before its own sweep has started (on a loaded machine it did):
    // wait for that start, then check no second one came.
    await until(async () => s.runs.length > 0, 10_000, 'the holder to start its sweep');
    expect(s.runs).toHaveLength(1);
    const holder = await storedLease();
    expect(['sweep-a', 'sweep-b']).toContain(holder?.owner);
    if (isSkipped(skipped)) expect(skipped.holder?.owner).toBe(holder?.owner);

    s.open();
    const results = await Promise.all([first, second]);
    expect(results.filter(isSkipped)).toHaveLength(1);
    expect(results.filter((r) => !isSkipped(r))).toEqual([{ queues: { depth: 0, oldest_age_seconds: 0 } }]);
    // The holder gave the lease back: the next scheduled sweep runs without waiting for the expiry.
    expect(await storedLease()).toBeUndefined();
  });

  it('lets the next sweep run once the previous one is done', async () => {
    const s = gatedSweep();
    s.open();
    const handler = sweeperHandler({ sweep: s.fn });
    expect(isSkipped(await handler({}, lambdaContext('first')))).toBe(false);
    expect(isSkipped(await handler({}, lambdaContext('second')))).toBe(false);
    expect(s.runs).toHaveLength(2);
  });

  it('takes over a lease whose holder crashed, once it has expired', async () => {
    const now = Date.now();
    // A sweep that timed out without giving the lease back, its lease ended a second ago.
    await ddb().send(new PutCommand({
      TableName: tableName('meta'),
      Item: { ...metaKeys.sweeperLease(), owner: 'crashed', acquired_at: now - 126_000, expires_at: now - 1000 },
    }));
    const s = gatedSweep();
    s.open();
    const result = await sweeperHandler({ sweep: s.fn })({}, lambdaContext('successor'));
    expect(isSkipped(result)).toBe(false);
    expect(s.runs).toHaveLength(1);
  });

  it('does not take over a lease that has not expired yet, even from a silent holder', async () => {
    const now = Date.now();
    expect(await acquireLease('slow', now, now + 60_000)).toEqual({ acquired: true });
    const s = gatedSweep();
    s.open();
    const result = await sweeperHandler({ sweep: s.fn })({}, lambdaContext('eager'));
    expect(result).toEqual({ skipped: true, holder: { owner: 'slow', expires_at: new Date(now + 60_000).toISOString() } });
    expect(s.runs).toHaveLength(0);
    expect((await storedLease())?.owner).toBe('slow');
  });

  it('leaves a lease that was taken over to its new holder when the old holder finishes', async () => {
    const now = Date.now();
    expect(await acquireLease('old', now - 200_000, now - 1)).toEqual({ acquired: true });
    expect(await acquireLease('new', now, now + 60_000)).toEqual({ acquired: true });
    await releaseLease('old');
    expect((await storedLease())?.owner).toBe('new');
  });

  it('gives the lease back when the sweep throws', async () => {
    const failing = (async () => {
      throw new Error('boom');
    }) as typeof sweep;
    await expect(sweeperHandler({ sweep: failing })({}, lambdaContext('thrower'))).rejects.toThrow('boom');
    expect(await storedLease()).toBeUndefined();
  });

  it('expires the lease when the invocation would be over, plus a margin for clock skew', async () => {
    const now = Date.now();
    const s = gatedSweep();
    const running = sweeperHandler({ sweep: s.fn, clock: { now: () => now } })({}, lambdaContext('timed', 90_000));
    await new Promise((r) => setTimeout(r, 200));
    expect((await storedLease())?.expires_at).toBe(leaseUntil(now, 90_000));
    expect(leaseUntil(now, 90_000)).toBe(now + 90_000 + LEASE_CLOCK_MARGIN_MS);
    s.open();
    await running;
  });
});
