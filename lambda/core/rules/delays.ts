/**
 * Long delays, pure: when a published message is due, whether SQS's own
 * DelaySeconds can carry it (at most 900 s) or the service must hold it in DynamoDB, and the keys
 * under which the scheduler tick finds held messages that come due.
 */
import { createHash } from 'node:crypto';
import { validationError, type FieldProblem } from './errors';

/** SQS's DelaySeconds range ends at 900 s (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html). */
const SQS_MAX_DELAY_SECONDS = 900;
/** The longest delay a publish may ask for: 365 days. */
export const MAX_LONG_DELAY_SECONDS = 365 * 24 * 3600;
/**
 * The tick hands a held message over once it is due within this window, with the rest as SQS
 * DelaySeconds (so at most 840 s, under SQS's 900). A minute under 15 leaves room for a tick that
 * starts late or runs long; with a tick every minute a message is handed over 13 to 14 minutes
 * before its time, so a dozen failed ticks in a row still deliver it on time.
 */
export const HANDOVER_WINDOW_MS = 14 * 60_000;
/**
 * Shards of the due index (the `due` index of the scheduler table): each held message and each
 * schedule is in one of these index partitions, chosen by a hash of its id, so writes spread
 * over 64 partition keys and shard workers read them in parallel (lambda/schedules/shard-tasks.ts).
 * Each index partition key takes up to 1,000 writes per second (DynamoDB's per-partition limit,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html):
 * a million held messages due a minute write about 33,000 a second into the index (the entry
 * and its removal), about 520 a shard, 700 on the busiest (a third above the mean). An item keeps
 * the shard it was written with, so raising the count keeps every older shard among those read
 * (32 became 64 with nothing to move); lowering it would strand items.
 */
export const DUE_SHARDS = 64;

/** Shard of an id (message id, or namespace and schedule name). */
export function dueShard(id: string, shards = DUE_SHARDS): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) % shards;
}

/** Milliseconds as a fixed-width decimal, so index sort keys compare as times. */
export const timeKey = (ms: number) => String(Math.max(0, Math.floor(ms))).padStart(15, '0');

/** What a publish asked for: a delay in seconds or a time, at most one of them. */
export interface DelayRequest {
  delay_seconds?: number;
  deliver_at?: string;
}

/**
 * When the message is due (epoch ms), or undefined when it asked for no delay. Assumes
 * {@link checkDelay} passed.
 */
export function dueAt(m: DelayRequest, now: number): number | undefined {
  if (m.deliver_at !== undefined) return Date.parse(m.deliver_at);
  if (m.delay_seconds !== undefined) return now + m.delay_seconds * 1000;
  return undefined;
}

/** Whether a due time is beyond what SQS's DelaySeconds can carry from `now`. */
export const isLongDelay = (due: number | undefined, now: number): due is number => due !== undefined && due - now > SQS_MAX_DELAY_SECONDS * 1000;

/** The SQS DelaySeconds that makes a message due at `due` visible at that second (0 to 900). */
export const remainingDelaySeconds = (due: number, now: number) => Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.round((due - now) / 1000)));

/** ISO 8601 date-time with a time zone designator (`Z` or `+01:00`); fractions allowed. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses an ISO 8601 date-time with a zone; undefined when it is not one. */
export function parseIsoTime(s: string): number | undefined {
  if (!ISO_TIME.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * The problems of one message's delay fields (`at` names the item: `messages.3.`), checked
 * against `now`: not both, `deliver_at` an ISO 8601 time with a zone and at most 365 days ahead
 * (a time in the past means now). `delay_seconds`' range is the schema's.
 */
function delayProblems(m: DelayRequest, now: number, at = ''): FieldProblem[] {
  if (m.deliver_at === undefined) return [];
  if (m.delay_seconds !== undefined) return [{ field: `${at}deliver_at`, message: 'give either delay_seconds or deliver_at, not both' }];
  const t = parseIsoTime(m.deliver_at);
  if (t === undefined) return [{ field: `${at}deliver_at`, message: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-12-24T18:00:00Z' }];
  if (t - now > MAX_LONG_DELAY_SECONDS * 1000) return [{ field: `${at}deliver_at`, message: 'must be at most 365 days from now' }];
  return [];
}

/** Throws 422 naming every bad delay field of `messages`. */
export function checkDelays(messages: DelayRequest[], now: number, batch: boolean): void {
  const problems = messages.flatMap((m, i) => delayProblems(m, now, batch ? `messages.${i}.` : ''));
  if (problems.length) throw validationError(problems);
}
