/**
 * Stream records in the metadata table: the resource item (settings only; it never changes after
 * create) and, under the stream incarnation's own partition key (keys.ts `logPk`), its head
 * (../../logs/storage/log-heads.ts) and one record per consumer group (committed positions). Log chunks live in
 * ./stream-log.ts.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countMembers } from '../../logs/storage/log-members';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import type { ResourceItem } from '../../core/storage/resources';

export type { StreamBindingSettings } from './stream-log';

export interface StreamItem extends ResourceItem {
  kind: 'STREAM';
  retention_days: number;
  max_size_gb: number;
  partition_count: number;
}

/** Strongly consistent: a stream created just before is found. */
export async function getStream(ns: string, name: string): Promise<StreamItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, 'STREAM', name), ConsistentRead: true }));
  return out.Item as StreamItem | undefined;
}

const GROUP_PREFIX = 'GROUP#';
const groupKey = (ns: string, streamId: string, group: string) => metaKeys.logMember(ns, streamId, `${GROUP_PREFIX}${group}`);
const partitionAttr = (p: number) => `committed_p${p}`;

export interface GroupItem {
  committed_offset?: number;
  /** `committed_p{n}`: the position committed for partition n. */
  [perPartition: string]: number | string | undefined;
}

/** The group's record, strongly consistent (a commit just made is seen). */
export async function getGroup(ns: string, streamId: string, group: string): Promise<GroupItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: groupKey(ns, streamId, group), ConsistentRead: true }));
  return out.Item as GroupItem | undefined;
}

/** The committed position a consume resumes from: the partition's own when it has one. */
export const committedOf = (g: GroupItem | undefined, partition?: number) =>
  ((partition !== undefined ? g?.[partitionAttr(partition)] : undefined) as number | undefined) ?? g?.committed_offset;

/**
 * Groups this container recorded, with the day it did: a consume refreshes its group's record (its
 * `seen` time and expiry) at most once a day per container.
 */
const recorded = new Map<string, number>();
const DAY_MS = 86_400_000;
/**
 * A group record expires this long after its last consume or commit beyond the stream's
 * retention: by then every message after its commit has left retention, so a consume resuming
 * from it would start at `earliest_offset` anyway, as a new group does.
 */
const GROUP_EXPIRY_MARGIN_MS = 2 * DAY_MS;
const groupTtl = (now: number, retentionMs: number) => ttlSeconds(now + retentionMs + GROUP_EXPIRY_MARGIN_MS);

/**
 * Records that a group consumed (it then counts in `consumer_count` for the stream's retention);
 * keeps its commits. One write per group, day and container.
 */
export async function recordGroup(ns: string, streamId: string, group: string, now: number, retentionMs: number): Promise<void> {
  const k = `${streamId}#${group}`;
  const day = Math.floor(now / DAY_MS);
  if (recorded.get(k) === day) return;
  if (recorded.size > 10_000) recorded.clear();
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: groupKey(ns, streamId, group),
      UpdateExpression: 'SET stream_id = :s, #g = :g, first_seen = if_not_exists(first_seen, :now), seen = :now, #ttl = :ttl',
      ExpressionAttributeNames: { '#g': 'group', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':s': streamId, ':g': group, ':now': now, ':ttl': groupTtl(now, retentionMs) },
    }),
  );
  recorded.set(k, day);
}

/** Stores a group's position (per partition when given). */
export async function commitGroupOffset(ns: string, streamId: string, group: string, offset: number, partition: number | undefined, now: number, retentionMs: number): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: groupKey(ns, streamId, group),
      UpdateExpression: 'SET #c = :o, committed_at = :t, stream_id = :s, #g = :g, seen = :t, #ttl = :ttl',
      ExpressionAttributeNames: { '#c': partition === undefined ? 'committed_offset' : partitionAttr(partition), '#g': 'group', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':o': offset, ':t': now, ':s': streamId, ':g': group, ':ttl': groupTtl(now, retentionMs) },
    }),
  );
}

/** Consumer groups that consumed or committed within the stream's retention (`consumer_count`). */
export const countGroups = (ns: string, streamId: string, since: number) => countMembers(ns, streamId, GROUP_PREFIX, 'seen', since);
