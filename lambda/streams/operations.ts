/**
 * Stream operations behind the HTTP handler: create, describe, list, delete, consume by offset with
 * long polling, and offset commit. Storage details live in ../storage/streams.ts and
 * ../storage/stream-log.ts.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { alreadyExists, notFound, validationError } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { stableHorizon } from '../domain/log-horizon';
import { MAX_CONSUME_BYTES, resolveStart, type commitSchema, type createStreamSchema, type streamConsumeSchema } from '../domain/streams';
import type * as z from 'zod/mini';
import { config } from '../config';
import { ddb, isConditionFailed, tableName } from '../storage/client';
import { createResource, deleteResource, listResources, newResourceFields, purgeJobKey, resourceSummary } from '../storage/resources';
import { commitGroupOffset, committedOf, countGroups, getGroup, getStream, recordGroup, type StreamBindingSettings, type StreamItem } from '../storage/streams';
import { readStreamLog, type StreamLogItem } from '../storage/stream-log';
import { LONG_POLL_INTERVAL_MS, waitForArrival } from '../publishing/arrivals';

const streamNotFound = (name: string) => notFound('STREAM_NOT_FOUND', `Stream ${name}`);

async function requireStream(ns: string, name: string): Promise<StreamItem> {
  const s = await getStream(ns, name);
  if (!s) throw streamNotFound(name);
  return s;
}

/** Fields of list items (SPEC.md "Stream"). */
const summary = (s: StreamItem, consumerCount: number) => ({ ...resourceSummary(s), consumer_count: consumerCount });

const settingsOf = (s: StreamItem) => ({ retention_days: s.retention_days, max_size_gb: s.max_size_gb, partition_count: s.partition_count });

export async function createStream(ns: string, input: z.output<typeof createStreamSchema>, now: number) {
  const item: StreamItem = {
    ...newResourceFields('STREAM', ns, input.name, input.topic_filter, now),
    retention_days: input.retention_days,
    max_size_gb: input.max_size_gb,
    partition_count: input.partition_count,
    next_offset: 0,
    earliest_offset: 0,
    message_count: 0,
    bytes: 0,
    pending: {},
  };
  const binding: StreamBindingSettings = { partition_count: item.partition_count, retention_days: item.retention_days };
  if (!(await createResource(item, { ...binding }))) throw alreadyExists('STREAM_ALREADY_EXISTS', `Stream ${input.name}`);
  const { name, topic_filter, status, created_at, message_count, consumer_count } = summary(item, 0);
  return { name, topic_filter, ...settingsOf(item), status, created_at, message_count, consumer_count };
}

export async function describeStream(ns: string, name: string) {
  const s = await requireStream(ns, name);
  const { status, created_at, message_count, consumer_count } = summary(s, await countGroups(ns, s.id));
  return {
    name: s.name,
    topic_filter: s.topic_filter,
    ...settingsOf(s),
    status,
    created_at,
    message_count,
    consumer_count,
    earliest_offset: s.earliest_offset,
    latest_offset: s.next_offset,
  };
}

export async function listStreams(ns: string, limit: number, offset: number) {
  const { items, total } = await listResources<StreamItem>(ns, 'STREAM', limit, offset);
  const counts = await Promise.all(items.map((s) => countGroups(ns, s.id)));
  return { items: items.map((s, i) => summary(s, counts[i])), total };
}

/**
 * Deletes the stream at once; its log and group records are purged by the sweeper from the purge
 * job, which learns here which offsets the log spans.
 */
export async function deleteStream(ns: string, name: string, now: number) {
  const s = await deleteResource<StreamItem>(ns, 'STREAM', name, now);
  if (!s) throw streamNotFound(name);
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: purgeJobKey('STREAM', s.id),
        UpdateExpression: 'SET from_offset = :f, to_offset = :t',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':f': s.earliest_offset, ':t': s.next_offset },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** A consumed message as the API returns it (SPEC.md "Consumed stream message"). */
const consumed = (m: StreamLogItem) => ({
  offset: m.offset,
  partition: m.partition,
  payload: m.payload,
  content_type: m.content_type,
  properties: m.properties ?? {},
  publish_time: isoTime(m.published_at),
});

export interface StreamConsumeOptions extends z.output<typeof streamConsumeSchema> {
  deadlineMs?: number;
}

const partitionProblem = (count: number) =>
  validationError([{ field: 'partition', message: `must be below the stream's partition_count ${count} (partitions are numbered from 0)` }]);

/**
 * Reads up to `max_messages` messages from the start position (explicit, else the group's commit,
 * else earliest), waiting up to `timeout_seconds` for the first (long polling). Does not commit.
 */
export async function consumeStream(ns: string, name: string, opts: StreamConsumeOptions) {
  let s = await requireStream(ns, name);
  if (opts.partition !== undefined && opts.partition >= s.partition_count) throw partitionProblem(s.partition_count);
  const started = Date.now();
  await recordGroup(ns, s.id, opts.consumer_group, started);
  const committed = opts.start_offset === undefined ? committedOf(await getGroup(ns, s.id, opts.consumer_group), opts.partition) : undefined;
  // `latest` is fixed at the first read: a long poll from latest waits for messages after it.
  const from = resolveStart(opts.start_offset, committed, { earliest: s.earliest_offset, latest: s.next_offset });
  const waitSeconds = Math.min(opts.timeout_seconds, config().maxLongPollSeconds);
  const deadline = Math.min(started + waitSeconds * 1000, opts.deadlineMs ?? Infinity);
  for (;;) {
    const now = Date.now();
    const start = Math.max(from, s.earliest_offset);
    const items = await readStreamLog(s.id, {
      from: start,
      to: stableHorizon(s.pending, s.next_offset, now),
      max: opts.max_messages,
      maxBytes: MAX_CONSUME_BYTES,
      partition: opts.partition,
    });
    const left = deadline - Date.now();
    if (items.length > 0 || left <= 0) {
      const next = items.length ? items[items.length - 1].offset + 1 : start;
      return { messages: items.map(consumed), next_offset: next, lag: Math.max(0, s.next_offset - next) };
    }
    await waitForArrival(s.id, Math.min(LONG_POLL_INTERVAL_MS, left));
    const again = await getStream(ns, name);
    if (!again || again.id !== s.id) return { messages: [], next_offset: start, lag: 0 };
    s = again;
  }
}

/** Stores the group's position: the next offset it reads (at most `latest_offset`). */
export async function commitOffset(ns: string, name: string, input: z.output<typeof commitSchema>, now: number) {
  const s = await requireStream(ns, name);
  if (input.offset > s.next_offset) {
    throw validationError([{ field: 'offset', message: `must be at most the stream's latest_offset ${s.next_offset} (the offset the next message gets)` }]);
  }
  if (input.partition !== undefined && input.partition >= s.partition_count) throw partitionProblem(s.partition_count);
  await commitGroupOffset(ns, s.id, input.consumer_group, input.offset, input.partition, now);
  return now;
}
