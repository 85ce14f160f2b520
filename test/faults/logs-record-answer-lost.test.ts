/**
 * Checks "a publish whose block could not be recorded answers 503" (docs/design/0028-gaps-are-absent.md).
 *
 * Promise (docs/streams-and-subscriptions.md): "Offsets may have gaps (a publish that failed after
 * reserving its offsets: none of that call's messages is ever read, even one it stored, so its
 * retry does not duplicate them, and `message_count` counts exactly what readers read)", and a
 * publish answers 503 "when its block could not be recorded within about 3 s (a storage outage:
 * the block is then settled as a gap, even with its messages stored)".
 *
 * Scenario: every chunk of the publish is stored; its reservation record put is applied by
 * DynamoDB but every answer of it is lost (a timeout after the write, on each SDK attempt and each
 * of the publish's ~3 s of tries). The publish cannot tell its record landed and answers 503.
 *
 * Observed: the record landed without a gap, so the block is complete: every reader reads the
 * 503'd message (and a client retrying the 503, as the docs tell it to, stores it twice, both
 * read). Expected: a 503'd publish's messages are never read (its block a gap), or a 201.
 *
 * Fixed: with the put's outcome unknown, the publish reads its record key strongly before
 * answering; its record is there, so its block is complete and it answers 201 (the client that
 * retries anyway stores the message twice, as any retried 201 would).
 */
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-record-answer-lost', seed: 13, services: ['dynamodb'] });

/** A publish's reservation record (lambda/logs/storage/log-records.ts). */
const isRecord = (input: Record<string, unknown>) => String((input.Item as { pk?: unknown } | undefined)?.pk ?? '').includes('#RESV#');

async function readAll(stream: string) {
  const read = await t.api.call('POST', `/streams/${stream}/messages/consume`, { consumer_group: unique('g'), start_offset: 'earliest', max_messages: 100, timeout_seconds: 0 });
  expect(read.status).toBe(200);
  return read.body?.data.messages.map((m: { payload: string }) => m.payload);
}

it('a stream: a publish whose record landed but whose every answer was lost answers 201, its block complete', async () => {
  const topic = unique('t');
  const stream = unique('s');
  expect((await t.api.call('POST', '/streams', { name: stream, topic_filter: topic })).status).toBe(201);
  // Every call of the record put (the publish tries it over ~3 s) is applied, its answer lost.
  for (let i = 0; i < 12; i++) t.injector.failNext({ service: 'dynamodb', command: 'PutItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: Number.POSITIVE_INFINITY, matches: isRecord });
  const status = (await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'answered-503' })).status;
  t.injector.clearOneShots();
  // The client publishes again (as it would a 503).
  const retry = (await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'answered-503' })).status;
  const now = await readAll(stream);
  // A settle time later (a reader settles any dead block it meets): still read.
  const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + PENDING_SETTLE_MS + 1_000);
  let later: string[];
  try {
    later = await readAll(stream);
  } finally {
    clock.mockRestore();
  }
  const count = (await t.api.call('GET', `/streams/${stream}`)).body?.data.message_count;
  expect({ status, retry, now, later, count }).toEqual({ status: 201, retry: 201, now: ['answered-503', 'answered-503'], later: ['answered-503', 'answered-503'], count: 2 });
});

/*
 * The other side of the same settle: every call of the record put is refused before it applies
 * (a 503 on each attempt and each try), then storage answers again. The publish claims its block
 * as a whole gap (the settle's conditional record write), so its 503 is true: its message, though
 * stored, is never read, and the client's retry is read once.
 */
it('a stream: a publish whose record put never applied claims its block as a gap and answers 503; nothing of it is read', async () => {
  const topic = unique('t');
  const stream = unique('s');
  expect((await t.api.call('POST', '/streams', { name: stream, topic_filter: topic })).status).toBe(201);
  for (let i = 0; i < 6; i++) t.injector.failNext({ service: 'dynamodb', command: 'PutItemCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: isRecord });
  const status = (await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'refused' })).status;
  t.injector.clearOneShots();
  const retry = (await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'refused' })).status;
  const now = await readAll(stream);
  const count = (await t.api.call('GET', `/streams/${stream}`)).body?.data.message_count;
  expect({ status, retry, now, count }).toEqual({ status: 503, retry: 201, now: ['refused'], count: 1 });
});
