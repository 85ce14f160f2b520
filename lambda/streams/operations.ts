/**
 * Stream operations behind the HTTP handler: create, describe, list, delete, consume by offset with
 * long polling, and offset commit. Storage details live in ./storage/streams.ts and
 * ./storage/stream-log.ts.
 */
import { alreadyExists, notFound, validationError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { lowestPending } from '../logs/rules/log-horizon';
import type { LogMessage } from '../logs/rules/log-chunks';
import { averageMessageBytes, goneTests, messageCount, READ_BUDGET, unreadCount } from '../logs/rules/retention';
import { ResponseBudget } from '../core/rules/response-budget';
import { resolveStart, type commitSchema, type createStreamSchema, type streamConsumeSchema } from './rules';
import type * as z from 'zod/mini';
import { config } from '../core/config';
import { listResources, newResourceFields, resourceSummary } from '../core/storage/resources';
import { createResource, deleteResource } from '../core/storage/resource-writes';
import { commitGroupOffset, committedOf, countGroups, getGroup, getStream, recordGroup, type StreamBindingSettings, type StreamItem } from './storage/streams';
import { getHead, getHeads, markDeletedUpdate, newHead, type LogHead, type LogRef } from '../logs/storage/log-heads';
import type { MemberCount } from '../logs/storage/log-members';
import { partitionsFrom, readStream } from './storage/stream-log';
import { consumeWatching, waitForNews } from '../logs/storage/log-waits';
import type { ArrivalWatch } from '../logs/storage/log-arrivals';
import { absentIn } from '../logs/storage/log-gaps';
import { settledForReaders } from '../logs/storage/log-reservations';
import { marksOnOwnItem, newMarks } from '../logs/storage/partition-marks';

const DAY_MS = 86_400_000;

const streamNotFound = (name: string) => notFound('STREAM_NOT_FOUND', `Stream ${name}`);

async function requireStream(ns: string, name: string): Promise<{ s: StreamItem; head: LogHead }> {
  const s = await getStream(ns, name);
  const head = s && (await getHead({ namespace: ns, id: s.id }));
  if (!s || !head) throw streamNotFound(name);
  return { s, head };
}

/** Fields of list items (SPEC.md "Stream"). */
const summary = (s: StreamItem, head: LogHead | undefined, consumers: MemberCount) => ({
  ...resourceSummary({ ...s, message_count: head ? messageCount(head) : 0 }),
  consumer_count: consumers.count,
  // Only when the stream has more group records than one count reads (lambda/logs/storage/log-members.ts `countMembers`).
  ...(consumers.atLeast ? { consumer_count_is_lower_bound: true } : {}),
});

const settingsOf = (s: StreamItem) => ({ retention_days: s.retention_days, max_size_gb: s.max_size_gb, partition_count: s.partition_count });

export async function createStream(ns: string, input: z.output<typeof createStreamSchema>, now: number) {
  const item: StreamItem = {
    ...newResourceFields('STREAM', ns, input.name, input.topic_filter, now),
    retention_days: input.retention_days,
    max_size_gb: input.max_size_gb,
    partition_count: input.partition_count,
  };
  const ownMarks = marksOnOwnItem(item.partition_count);
  const binding: StreamBindingSettings = { partition_count: item.partition_count, retention_days: item.retention_days, ...(ownMarks ? { marks: 'item' as const } : {}) };
  const head = newHead({ namespace: ns, id: item.id, name: item.name, log_kind: 'STREAM', partition_count: item.partition_count });
  const marks = ownMarks ? [newMarks({ namespace: ns, id: item.id }, item.partition_count)] : [];
  if (!(await createResource(item, { ...binding }, [head, ...marks]))) throw alreadyExists('STREAM_ALREADY_EXISTS', `Stream ${input.name}`);
  const { name, topic_filter, status, created_at, message_count, consumer_count } = summary(item, undefined, { count: 0, atLeast: false });
  return { name, topic_filter, ...settingsOf(item), status, created_at, message_count, consumer_count };
}

export async function describeStream(ns: string, name: string) {
  const { s, head } = await requireStream(ns, name);
  const { status, created_at, message_count, consumer_count, consumer_count_is_lower_bound } = summary(s, head, await countGroups(ns, s.id, Date.now() - s.retention_days * DAY_MS));
  return {
    name: s.name,
    topic_filter: s.topic_filter,
    ...settingsOf(s),
    status,
    created_at,
    message_count,
    consumer_count,
    ...(consumer_count_is_lower_bound ? { consumer_count_is_lower_bound } : {}),
    earliest_offset: head.earliest,
    latest_offset: head.next,
  };
}

export async function listStreams(ns: string, limit: number, offset: number) {
  // Strongly consistent: a list right after a create shows it (docs/aws-parity.md).
  const { items, total } = await listResources<StreamItem>(ns, 'STREAM', limit, offset, undefined, { consistent: true });
  const [heads, counts] = await Promise.all([getHeads(ns, items.map((s) => s.id)), Promise.all(items.map((s) => countGroups(ns, s.id, Date.now() - s.retention_days * DAY_MS)))]);
  return { items: items.map((s, i) => summary(s, heads.get(s.id), counts[i])), total };
}

/**
 * Deletes the stream at once: the same transaction marks its head deleted, so no publish reserves
 * on it any more and readers see it gone; the sweeper purges its log and records from the purge job.
 */
export async function deleteStream(ns: string, name: string, now: number) {
  const s = await deleteResource<StreamItem>(ns, 'STREAM', name, now, (current) => [markDeletedUpdate({ namespace: ns, id: current.id }, now)]);
  if (!s) throw streamNotFound(name);
}

/** A consumed message as the API returns it (SPEC.md "Consumed stream message"). */
const consumed = (m: LogMessage) => ({
  offset: m.position,
  partition: m.partition,
  payload: m.payload,
  content_type: m.content_type,
  properties: m.properties,
  publish_time: isoTime(m.published_at),
});

export interface StreamConsumeOptions extends z.output<typeof streamConsumeSchema> {
  deadlineMs?: number;
}

const partitionProblem = (count: number) =>
  validationError([{ field: 'partition', message: `must be below the stream's partition_count ${count} (partitions are numbered from 0)` }]);

const GIB = 1024 ** 3;

/**
 * One read: up to `max` messages from `from` below the stable horizon, in offset order, never one
 * past retention or beyond the size cap (whether or not the sweeper has trimmed yet; a range of
 * them is skipped by position), stopping before the response would outgrow a Lambda response and
 * when the read budget (lambda/logs/rules/retention.ts `READ_BUDGET`, or `deadline`) is spent. Returns the
 * messages, the position the reader has passed (after the last one returned, or after the gone
 * ones it skipped when it returned none), and the reader's lag after it.
 */
async function readBatch(s: StreamItem, head: LogHead, from: number, opts: { max: number; partition?: number; deadline: number }, now: number) {
  // Every block without a record holds the reader back; the caller settled the dead ones.
  const to = lowestPending(head.pending, head.next);
  const partitions = partitionsFrom(head, from, opts.partition);
  const out: ReturnType<typeof consumed>[] = [];
  let passed = from;
  let last: LogMessage | undefined;
  if (from < to && partitions.length > 0) {
    // Positions inside whole gaps are absent whatever their chunks hold (lambda/logs/rules/log-gaps.ts).
    const absent = await absentIn({ namespace: s.namespace, id: s.id }, head, from, to);
    const gone = goneTests(head, { cutoff: now - s.retention_days * DAY_MS, maxBytes: s.max_size_gb * GIB }, absent);
    const budget = new ResponseBudget();
    const read = { from, to, want: opts.max, maxReadBytes: READ_BUDGET.bytes, deadline: Math.min(now + READ_BUDGET.ms, opts.deadline), messageBytes: averageMessageBytes(head) };
    for await (const e of readStream(s.id, partitions, read, gone)) {
      if (e.m === undefined) {
        if (out.length === 0) passed = e.passed;
        continue;
      }
      const c = consumed(e.m);
      if (!budget.take(c)) break;
      out.push(c);
      last = e.m;
      passed = e.m.position + 1;
      if (out.length >= opts.max) break;
    }
    // A read that returned nothing passes the absent positions it stands on, also where no chunk
    // holds them (a trailing gap): its next_offset is past them.
    if (out.length === 0) passed = Math.min(absent.after(passed), to);
  }
  return { messages: out, passed, lag: lagAfter(head, passed, to, opts.partition, last) };
}

/**
 * Messages the reader has not read yet: the stream's positions from `passed` to the stable
 * horizon less gaps; for one partition, its reserved messages after the last one returned (a
 * failed publish's messages count until the reader passes them), 0 when it returned none (it read
 * all there was).
 */
function lagAfter(head: LogHead, passed: number, horizon: number, partition: number | undefined, last: LogMessage | undefined): number {
  if (partition === undefined) return unreadCount(head, passed, horizon);
  if (!last) return 0;
  const reserved = head.lc?.[String(partition)];
  if (reserved === undefined || last.pindex === undefined) return unreadCount(head, passed, horizon);
  return Math.max(0, reserved - last.pindex - 1);
}

/**
 * Reads up to `max_messages` messages from the start position (explicit, else the group's commit,
 * else earliest), waiting up to `timeout_seconds` for the first (long polling). Does not commit.
 * Each poll re-reads only the stream's head, and reads the log only when the head shows offsets
 * at or after the reader's position in the partitions it reads. A `start_offset` above
 * `latest_offset` is refused (422), as a commit above it is: after a recreate, an offset of the
 * old stream would otherwise skip the new stream's first messages.
 */
export async function consumeStream(ns: string, name: string, opts: StreamConsumeOptions) {
  const s = await getStream(ns, name);
  if (!s) throw streamNotFound(name);
  return consumeWatching({ namespace: ns, id: s.id }, () => streamNotFound(name), (head, arrivals) => consumeFrom(ns, name, { s, head }, opts, arrivals));
}

/** {@link consumeStream} once the stream is found, with its arrivals watched from before the head's read. */
async function consumeFrom(ns: string, name: string, found: { s: StreamItem; head: LogHead }, opts: StreamConsumeOptions, arrivals: ArrivalWatch) {
  const s = found.s;
  let head = found.head;
  if (opts.partition !== undefined && opts.partition >= s.partition_count) throw partitionProblem(s.partition_count);
  if (typeof opts.start_offset === 'number' && opts.start_offset > head.next) {
    throw validationError([
      {
        field: 'start_offset',
        message: `must be at most the stream's latest_offset ${head.next} (the offset the next message gets); a stream recreated under this name starts again at 0: read from "earliest"`,
      },
    ]);
  }
  const started = Date.now();
  await recordGroup(ns, s.id, opts.consumer_group, started, s.retention_days * DAY_MS);
  const committed = opts.start_offset === undefined ? committedOf(await getGroup(ns, s.id, opts.consumer_group), opts.partition) : undefined;
  // `latest` is fixed at the first read: a long poll from latest waits for messages after it.
  const from = resolveStart(opts.start_offset, committed, { earliest: head.earliest, latest: head.next });
  const waitSeconds = Math.min(opts.timeout_seconds, config().maxLongPollSeconds);
  const deadline = Math.min(started + waitSeconds * 1000, opts.deadlineMs ?? Infinity);
  const lagKey = { stream: name, consumer_group: opts.consumer_group, partition: opts.partition === undefined ? 'all' : String(opts.partition) };
  let position = from;
  const ref: LogRef = { namespace: ns, id: s.id };
  for (;;) {
    // Dead blocks settled before they are passed (lambda/logs/storage/log-reservations.ts `settledForReaders`).
    head = await settledForReaders(ref, head);
    position = Math.max(position, head.earliest);
    const { messages, passed, lag } = await readBatch(s, head, position, { max: opts.max_messages, partition: opts.partition, deadline: opts.deadlineMs ?? Infinity }, Date.now());
    if (messages.length > 0 || deadline - Date.now() <= 0) return { messages, next_offset: passed, lag, lagKey };
    position = passed; // past messages that left retention: the next poll does not read them again
    const news = await waitForNews(ref, head, started, deadline, arrivals);
    if (news === 'timeout') return { messages, next_offset: passed, lag, lagKey };
    const again = news === 'gone' ? undefined : await getHead(ref);
    if (!again) return { messages: [], next_offset: position, lag: 0, lagKey };
    head = again;
  }
}

/** Stores the group's position: the next offset it reads (at most `latest_offset`). */
export async function commitOffset(ns: string, name: string, input: z.output<typeof commitSchema>, now: number) {
  const { s, head } = await requireStream(ns, name);
  if (input.offset > head.next) {
    throw validationError([{ field: 'offset', message: `must be at most the stream's latest_offset ${head.next} (the offset the next message gets)` }]);
  }
  if (input.partition !== undefined && input.partition >= s.partition_count) throw partitionProblem(s.partition_count);
  await commitGroupOffset(ns, s.id, input.consumer_group, input.offset, input.partition, now, s.retention_days * DAY_MS);
  return now;
}
