/**
 * The hand-off as the executor in lambda/webhooks/deliver.ts carries out ./rules/handoff.ts'
 * decisions, against the hand-off it replaced (`handToWorkflow` before the decisions moved out,
 * copied below as `oldHandToWorkflow`): for any record the job found and any answers the engines
 * give (a note written, refused or throwing; a read finding a note, an end, nothing, or
 * throwing; a take or a deferral throwing; a start answering or throwing), both make the same
 * calls in the same order with the same arguments, log at the same levels, and return or throw
 * the same. Both run against one scripted world (the storage functions below, the retry
 * workflow), so each run's calls are comparable one by one; the new one is reached as the
 * delivery function reaches it (a `start_retry` job: `deliverFirst` hands it off with the
 * record it read).
 */
import fc from 'fast-check';
import { deliverFirst, START_WAIT_SECONDS } from '../../lambda/webhooks/deliver';
import { parseJob } from '../../lambda/webhooks/delivery-batch';
import { advanceRetry, handoffCounts, readDelivery, recordRetrying, type DeliveryRecord } from '../../lambda/webhooks/storage/webhook-deliveries';
import { countHandoff, retryJob } from '../../lambda/webhooks/retry-handoff';
import { deferJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { executionName, retryWorkflow, setRetryWorkflow, type StartResult } from '../../lambda/webhooks/storage/retry-workflow';
import { isPassingDependencyFailure } from '../../lambda/core/rules/dependency-errors';
import { sqsJson } from '../../lambda/core/rules/queue-messages';
import { logger } from '../../lambda/core/observability';
import { keyOf } from '../../lambda/webhooks/delivery-key';
import { jobMessageId, type DeliveryJob, type RetryState } from '../../lambda/webhooks/rules/delivery';
import type { WebhookConfig } from '../../lambda/webhooks/rules/webhooks';
import type { DeliveryReads } from '../../lambda/webhooks/batch-reads';
import type { WebhookItem } from '../../lambda/webhooks/storage/webhooks';

jest.mock('../../lambda/webhooks/storage/webhook-deliveries', () => ({
  ...jest.requireActual('../../lambda/webhooks/storage/webhook-deliveries'),
  recordRetrying: jest.fn(),
  advanceRetry: jest.fn(),
  readDelivery: jest.fn(),
}));
jest.mock('../../lambda/webhooks/retry-handoff', () => ({ ...jest.requireActual('../../lambda/webhooks/retry-handoff'), countHandoff: jest.fn() }));
jest.mock('../../lambda/webhooks/storage/delivery-queue', () => ({ ...jest.requireActual('../../lambda/webhooks/storage/delivery-queue'), deferJobs: jest.fn() }));

/** One answer of the scripted world: a value, or a throw. */
type Answer<T> = { ok: T } | { throws: 'throttled' | 'broken' };
interface World {
  recordRetrying: Answer<boolean>;
  advanceRetry: Answer<boolean>;
  readDelivery: Answer<DeliveryRecord | undefined>;
  countHandoff: Answer<undefined>;
  start: Answer<StartResult>;
  deferJobs: Answer<undefined>;
}

const calls: unknown[][] = [];
const answer = <T>(name: string, a: Answer<T>, args: unknown[]): T => {
  calls.push([name, ...args]);
  if ('ok' in a) return a.ok;
  throw a.throws === 'throttled' ? Object.assign(new Error(`${name} throttled`), { name: 'ThrottlingException' }) : new Error(`${name} broken`);
};
let world: World;
jest.mocked(recordRetrying).mockImplementation(async (...args) => answer('recordRetrying', world.recordRetrying, args));
jest.mocked(advanceRetry).mockImplementation(async (...args) => answer('advanceRetry', world.advanceRetry, args));
jest.mocked(readDelivery).mockImplementation(async (...args) => answer('readDelivery', world.readDelivery, args));
jest.mocked(countHandoff).mockImplementation(async (...args) => answer('countHandoff', world.countHandoff, args));
jest.mocked(deferJobs).mockImplementation(async (...args) => answer('deferJobs', world.deferJobs, args));

/** The end from `retrying` (deliver.ts `endFailedExecution`) is the same code in both: its first log line stands for it and stops the run there. */
const ENDS = 'webhook retry execution of this delivery failed; its delivery ends here';
for (const level of ['warn', 'error'] as const) {
  (jest.spyOn(logger, level) as jest.SpyInstance).mockImplementation((msg: unknown, meta?: unknown) => {
    calls.push([level, msg, meta]);
    if (msg === ENDS) throw new Error('ended from retrying');
  });
}
beforeAll(() => setRetryWorkflow({ start: async (...args) => answer('start', world.start, args) }));
afterAll(() => setRetryWorkflow(undefined));

const NOW = 1_800_000_000_000;
jest.spyOn(Date, 'now').mockReturnValue(NOW);

/** The hand-off as it was (lambda/webhooks/deliver.ts at 61a51c0), against the same world. */
async function oldHandToWorkflow(job: DeliveryJob, w: { id: string; config: WebhookConfig }, attempts: number, error: string, retryAt: number, found?: DeliveryRecord): Promise<string> {
  const { start_retry: _, rate_slot_at: __, rate_slot_of: ___, retry: ____, ...plain } = job;
  const wait = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
  const state: RetryState = { job: retryJob(plain as DeliveryJob, attempts, error), attempts, wait_seconds: wait, last_error: error, outcome: 'retry' };
  const now = Date.now();
  const noting = { nextRetry: retryAt, error, now };
  const noted = found || (job.retry ? await advanceRetry(keyOf(job), job.retry.attempts, attempts, noting) : await recordRetrying(keyOf(job), { ...noting, queued: attempts }));
  const note = found ?? (noted ? undefined : await readDelivery(keyOf(job)));
  const expected = !note ? handoffCounts({ ...noting, first: !job.retry }) : note.outcome === 'retrying' ? note.handoff_uncounted : undefined;
  if (expected) await countHandoff(job, note?.queued ?? attempts, expected);
  let started;
  try {
    started = await retryWorkflow().start(executionName(w.id, jobMessageId(job), job.replay_id, attempts), state);
  } catch (e) {
    const log = isPassingDependencyFailure(e) ? logger.warn.bind(logger) : logger.error.bind(logger);
    log('webhook retry workflow not started; the job waits on the queue', { namespace: job.namespace, webhook: job.webhook_name, error: (e as Error).message });
    await deferJobs([sqsJson({ ...plain, start_retry: { attempts, last_error: error, retry_at: retryAt } })], START_WAIT_SECONDS);
    return 'waiting';
  }
  if (started === 'failed') {
    logger.warn(ENDS, { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job) });
    return 'unreachable';
  }
  if (started === 'closed') logger.warn('webhook retry execution of this delivery already ran', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job) });
  return 'retrying';
}

const webhook = { pk: 'p', sk: 's', id: 'wh_1', name: 'hook', updated_at: 1, config: { url: 'https://example.com/h', enabled: true, retry_count: 5, retry_delay: 1, backoff_multiplier: 1 } } as unknown as WebhookItem;
const reads = (rec: DeliveryRecord | undefined): DeliveryReads => ({ record: async () => rec, liveWebhook: async () => webhook });

/** Every call and the end (returned or thrown) of one run. */
async function trace(run: () => Promise<string>): Promise<unknown[][]> {
  calls.length = 0;
  try {
    calls.push(['returned', await run()]);
  } catch (e) {
    calls.push(['threw', (e as Error).message]);
  }
  return calls.splice(0);
}

const counts = (pending: number) => ({ pending, at: NOW - 5_000, nextRetry: NOW + 9_000, error: { at: NOW - 5_000, message: 'theirs' } });
const answerOf = <T>(v: fc.Arbitrary<T>): fc.Arbitrary<Answer<T>> => fc.oneof(v.map((ok) => ({ ok })), fc.constantFrom({ throws: 'throttled' as const }, { throws: 'broken' as const }));
const noteRecord: fc.Arbitrary<DeliveryRecord> = fc.record(
  { outcome: fc.constantFrom('retrying', 'success', 'failed', 'dropped'), queued: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }), handoff_uncounted: fc.option(fc.constantFrom(counts(1), counts(0)), { nil: undefined }) },
  { requiredKeys: ['outcome'] },
) as unknown as fc.Arbitrary<DeliveryRecord>;
/** A job's `retry`: none, or a queued retry's. */
const retryOf = fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 3 }).map((attempts) => ({ attempts, last_error: 'HTTP 500' })));
const worldOf: fc.Arbitrary<World> = fc.record({
  recordRetrying: answerOf(fc.boolean()),
  advanceRetry: answerOf(fc.boolean()),
  readDelivery: answerOf(fc.option(noteRecord, { nil: undefined })),
  countHandoff: answerOf(fc.constant(undefined)),
  start: answerOf(fc.constantFrom<StartResult>('started', 'running', 'closed', 'failed')),
  deferJobs: answerOf(fc.constant(undefined)),
});
/** The record the job found: none, or a `retrying` one (the only kind deliverFirst hands off with; any other it resumes from). */
const foundOf = fc.option(noteRecord.map((r): DeliveryRecord => ({ ...r, outcome: 'retrying' })), { nil: undefined });

function jobOf(retry: unknown, attempts: number): DeliveryJob {
  return {
    namespace: 'ns', webhook_id: 'wh_1', webhook_name: 'hook',
    message: { message_id: 'msg_1', topic: 't', payload: 'p', published_at: NOW - 10_000 },
    ...(retry ? { retry } : {}),
    start_retry: { attempts, last_error: 'HTTP 500', retry_at: NOW + 9_000 },
  } as unknown as DeliveryJob;
}

it('the executor makes the calls the old hand-off made, for any record found and any answers', async () => {
  await fc.assert(
    fc.asyncProperty(retryOf, fc.integer({ min: 1, max: 4 }), foundOf, worldOf, async (retry, attempts, found, w) => {
      world = w;
      const job = jobOf(retry, attempts);
      const before = await trace(() => oldHandToWorkflow(job, webhook, attempts, 'HTTP 500', NOW + 9_000, found));
      const after = await trace(() => deliverFirst(job, reads(found)));
      expect(after).toEqual(before);
    }),
    { numRuns: 2000, seed: 2323 },
  );
});

/**
 * The one input found where the two differ: a job whose `retry` has no `attempts` (a body no run
 * of the service writes: retry-handoff.ts `retryJob` always sets it; one edited on the queue or
 * the DLQ before a redrive). The old hand-off took any `retry` for a queued retry and moved the
 * note on from `undefined` (an UpdateItem whose `:q` the client drops, so its condition uses a
 * value it does not define, which DynamoDB refuses with a ValidationException,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ExpressionAttributeValues.html:
 * the job comes back and POSTs again); the executor asks
 * `retry?.attempts === undefined` and writes a first note instead (recordRetrying: its own
 * pending retry 1), then takes its own counts (first: false, pending 0), a request other than a
 * copy's take of that note under the same token, and the end from `retrying` gives back a pending
 * retry no take added (storage/webhook-deliveries.ts `recordFinal`: -1). `failing`: it turns red
 * once they agree.
 */
// The one input on which the two differ, a `retry` without its attempt count (the old code sent an
// update the engine refuses; the executor would write a first note with the wrong counts), never
// reaches the hand-off: the delivery function does not take such a body as a job (retryJob always
// sets the count).
it('a job whose retry carries no count is not a delivery job', () => {
  const body = (retry: unknown) => JSON.stringify(jobOf(retry, 1));
  expect(parseJob(body({ last_error: 'HTTP 500' }))).toBeUndefined();
  expect(parseJob(body({ attempts: 0, last_error: 'HTTP 500' }))).toBeUndefined();
  expect(parseJob(body({ attempts: '1', last_error: 'HTTP 500' }))).toBeUndefined();
  expect(parseJob(body({ attempts: 1, last_error: 'HTTP 500' }))).toMatchObject({ retry: { attempts: 1 } });
  expect(parseJob(body(undefined))).toMatchObject({ webhook_id: 'wh_1' });
});
