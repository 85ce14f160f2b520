/**
 * Schedule runs when a claim's answer is lost (lambda/schedules/storage/schedules.ts claimRun): DynamoDB
 * applied the claim and its answer never came back, so the SDK sent the same conditional write
 * again. Many schedules due in one tick, ticks overlapping: every scheduled time still runs at
 * once, not after the claim expires. Also when the write that gives a claim back fails, and when
 * one run of a tick fails while others are still running.
 */
import type { Context } from 'aws-lambda';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { schedulerHandler } from '../../lambda/handlers/scheduler';
import type { TickStats } from '../../lambda/schedules/tick';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(120_000);

const t = placedFaults({ namespace: 'fault-schedule-claims', seed: 35, services: ['dynamodb'] });
const context = { functionName: 'scheduler', awsRequestId: 'test', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const tickAt = (now: number) => schedulerHandler({ clock: { now: () => now } })({}, context) as Promise<TickStats>;

/**
 * One queue and `n` schedules due once at `startAt` on its topic, created `together` at a time;
 * their names.
 */
async function dueSchedules(n: number, startAt: number, together = 1): Promise<string[]> {
  const name = unique('sc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const names = Array.from({ length: n }, (_, i) => `${name}-${i}`);
  for (let i = 0; i < names.length; i += together) {
    await Promise.all(
      names.slice(i, i + together).map(async (s) => {
        const res = await t.api.call('POST', '/schedules', { name: s, every: 60, topic: `${name}/t`, payload: 'run', start_at: new Date(startAt).toISOString(), end_at: new Date(startAt + 30_000).toISOString() });
        expect(res.status).toBe(201);
      }),
    );
  }
  await afterIndexLag();
  return names;
}

/** Fails the next UpdateItem whose input `matches` with a 500, `before` or `after` DynamoDB applied it, on `attempts` attempts. */
const fail500 = (timing: 'before' | 'after', attempts: number, matches: (input: Record<string, unknown>) => boolean) =>
  t.injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing, attempts, matches });

/** Whether an UpdateItem is a claim of a schedule's run. */
const isClaim = (input: Record<string, unknown>) => String(input.UpdateExpression).startsWith('SET claim_time');

/**
 * A start time `ms` ahead (at the suite's time scale), by which the schedules are created: one
 * created after it starts at its next period instead, and the ticks below, on clocks of their own,
 * find it not due (a CI run on loaded cores created 40 in more than 10 s). Nothing waits for it.
 */
const startAhead = (ms: number) => Math.ceil(Date.now() / 1000) * 1000 + scaled(ms);

const lastRunAt = async (name: string) => (await t.api.call('GET', `/schedules/${name}`)).body?.data?.last_run_at;

it('runs every schedule due in one tick when a claim was applied and its answer lost, before the claim expires', async () => {
  const startAt = startAhead(10_000);
  const names = await dueSchedules(40, startAt, 10);
  // One claim is applied and its answer lost (a 500 after the write): the SDK's retry meets the
  // claim its first attempt wrote.
  fail500('after', 1, isClaim);
  // Two ticks at once, then the next one a few seconds on (well within the claim's 2 minutes).
  await Promise.all([tickAt(startAt + 1000), tickAt(startAt + 1000)]);
  expect(t.injector.unused).toBe(0);
  await afterIndexLag();
  await tickAt(startAt + 5000);
  const missing: string[] = [];
  for (const n of names) {
    // Read as a client does: a 429 or 5xx answer is tried again (a loaded CI run answered one read
    // without data); what is checked is the run, not the read.
    let res = await t.api.call('GET', `/schedules/${n}`);
    for (let i = 0; i < 5 && res.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 500));
      res = await t.api.call('GET', `/schedules/${n}`);
    }
    if (res.body?.data?.last_run_at !== new Date(startAt).toISOString()) missing.push(`${n}: ${res.status} ${JSON.stringify(res.body?.data?.last_run_at ?? res.body?.error)}`);
  }
  expect(missing).toEqual([]);
});

it('frees a claim whose every attempt was applied and answered with an error, so the next tick runs it', async () => {
  const startAt = startAhead(5000);
  const [name] = await dueSchedules(1, startAt);
  fail500('after', Number.POSITIVE_INFINITY, (input) => isClaim(input) && JSON.stringify(input).includes(name));
  // The tick fails (its claim's outcome is unknown), as an invocation does; the next one retries.
  await Promise.allSettled([tickAt(startAt + 1000)]);
  expect(t.injector.unused).toBe(0);
  await afterIndexLag();
  await tickAt(startAt + 5000);
  expect(await lastRunAt(name)).toBe(new Date(startAt).toISOString());
});

it('retries a run whose publish failed and whose claim could not be given back at once, at the next tick', async () => {
  const startAt = startAhead(5000);
  const [name] = await dueSchedules(1, startAt);
  // The run fails in a way the next tick may pass (its runs-per-minute counter unavailable: every
  // attempt of the call) ...
  fail500('before', Number.POSITIVE_INFINITY, (input) => JSON.stringify(input).includes(`${t.namespace}#RATE#schedule-runs#`));
  // ... and the write that gives its claim back fails too, every attempt of that call.
  fail500('before', Number.POSITIVE_INFINITY, (input) => String(input.UpdateExpression) === 'SET claim_until = :now');
  await Promise.allSettled([tickAt(startAt + 1000)]);
  expect(t.injector.unused).toBe(0);
  expect(await lastRunAt(name)).toBeNull();
  // The next tick retries it (docs/schedules.md), well within the claim's 2 minutes.
  await tickAt(startAt + 5000);
  expect(await lastRunAt(name)).toBe(new Date(startAt).toISOString());
});

it('ends a tick only once every run it started has ended, also when one of them failed', async () => {
  const startAt = startAhead(5000);
  const [failing, slow] = await dueSchedules(2, startAt);
  // One run's claim fails (every attempt, never applied): that run's error fails the tick ...
  fail500('before', Number.POSITIVE_INFINITY, (input) => isClaim(input) && JSON.stringify(input).includes(`"S#${failing}"`));
  // ... while the other run's claim is slow to arrive.
  const slowClaim = { service: 'dynamodb' as const, command: 'UpdateItemCommand', ms: 3000, matches: (input: Record<string, unknown>) => isClaim(input) && JSON.stringify(input).includes(`"S#${slow}"`) };
  t.injector.addLatency(slowClaim);
  try {
    const [ended] = await Promise.allSettled([tickAt(startAt + 1000)]);
    expect(ended.status).toBe('rejected');
    // When the invocation ends, Lambda freezes whatever it left running: the slow run is done by then.
    expect(await lastRunAt(slow)).toBe(new Date(startAt).toISOString());
  } finally {
    t.injector.removeLatency(slowClaim);
  }
  expect(t.injector.unused).toBe(0);
  await afterIndexLag();
  await tickAt(startAt + 5000);
  expect(await lastRunAt(failing)).toBe(new Date(startAt).toISOString());
});
