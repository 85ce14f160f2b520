/**
 * Stream records in the metadata table: the resource item (settings only; it never changes after
 * create) and, under the stream incarnation's own partition key (keys.ts `logPk`), its head
 * (./log-heads.ts) and one record per consumer group (committed positions). Log chunks live in
 * ./stream-log.ts.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countAll, ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';
import type { ResourceItem } from './resources';

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

/** Groups this container already recorded: the record never changes, so one write is enough. */
const recorded = new Set<string>();

/** Records that a group consumed (it then counts in `consumer_count`); keeps its commits. */
export async function recordGroup(ns: string, streamId: string, group: string, now: number): Promise<void> {
  const k = `${streamId}#${group}`;
  if (recorded.has(k)) return;
  if (recorded.size > 10_000) recorded.clear();
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName('meta'),
        Item: { ...groupKey(ns, streamId, group), stream_id: streamId, group, first_seen: now },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // already known
  }
  recorded.add(k);
}

/** Stores a group's position (per partition when given). */
export async function commitGroupOffset(ns: string, streamId: string, group: string, offset: number, partition: number | undefined, now: number): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: groupKey(ns, streamId, group),
      UpdateExpression: 'SET #c = :o, committed_at = :t, stream_id = :s, #g = :g',
      ExpressionAttributeNames: { '#c': partition === undefined ? 'committed_offset' : partitionAttr(partition), '#g': 'group' },
      ExpressionAttributeValues: { ':o': offset, ':t': now, ':s': streamId, ':g': group },
    }),
  );
}

/** Consumer groups that consumed or committed (`consumer_count`). */
export const countGroups = (ns: string, streamId: string) =>
  countAll({
    TableName: tableName('meta'),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, streamId), ':p': GROUP_PREFIX },
  });
