/**
 * A stream's partition marks on an item of their own (keys.ts `logMarks`), for streams of more
 * than {@link HEAD_MARKS_MAX_PARTITIONS} partitions: per partition, the last offset reserved in it
 * (`lp`: readers skip a partition with nothing at or after their position, and a long poll of an
 * idle partition reads no chunk) and its message count (`lc`: the partition index chunks carry,
 * for the partition lag).
 *
 * Why not on the head: DynamoDB bills an UpdateItem by the larger of the item's sizes before and
 * after, rounded up to 1 KB
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption),
 * and the head takes two writes per publish call on one partition key. At 64 partitions the two
 * maps are about 1 KB on their own, so every head write cost 2 units or more; here they cost one
 * write per publish call on another key, and the head stays within one unit with the
 * reservations of about 25 publishes in flight. Streams of up to 16 partitions keep the marks in
 * the reservation itself (no write more per call; their maps are a few hundred bytes).
 *
 * Order: a publish marks its partitions after reserving its block and before writing its chunks,
 * and writes its reservation record (./log-records.ts) only after both, so a reader that reads the head and then this item
 * sees the marks of every block below the head's stable horizon (lambda/logs/rules/log-horizon.ts).
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { serviceUnavailable } from '../../core/rules/errors';

/** Streams with more partitions keep their marks on their own item. */
const HEAD_MARKS_MAX_PARTITIONS = 16;

/** Whether a stream of `partitionCount` partitions keeps its marks on their own item (decided at create). */
export const marksOnOwnItem = (partitionCount: number) => partitionCount > HEAD_MARKS_MAX_PARTITIONS;

export interface PartitionMarks {
  /** Partition → the last offset reserved in it; -1 before any. */
  lp: Record<string, number>;
  /** Partition → the messages reserved in it so far. */
  lc: Record<string, number>;
}

interface Ref {
  namespace: string;
  id: string;
}

/**
 * The marks item the create transaction writes beside the head: every partition present (-1 and
 * 0), so a publish's update needs no `if_not_exists` and stays within DynamoDB's 4 KB expression
 * limit at 64 partitions touched.
 */
export function newMarks(ref: Ref, partitionCount: number): Record<string, unknown> {
  const all = Array.from({ length: partitionCount }, (_, p) => String(p));
  return { ...metaKeys.logMarks(ref.namespace, ref.id), lp: Object.fromEntries(all.map((p) => [p, -1])), lc: Object.fromEntries(all.map((p) => [p, 0])) };
}

/** The marks, strongly consistent; empty maps when the item is gone. */
export async function readMarks(ref: Ref, abortSignal?: AbortSignal): Promise<PartitionMarks> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.logMarks(ref.namespace, ref.id), ConsistentRead: true }), { abortSignal });
  const item = out.Item as Partial<PartitionMarks> | undefined;
  return { lp: item?.lp ?? {}, lc: item?.lc ?? {} };
}

/** Tries of {@link markBlock} when concurrent publishes finished out of order on a partition. */
const MARK_TRIES = 8;

/**
 * Records a reserved block in the marks: each touched partition's message count grows by its
 * messages in the block, and its last offset moves to the block's last one there unless a later
 * block's already passed it (publishes mark in the order their updates arrive, not their
 * offsets'). Returns each touched partition's count before the block (the chunks' partition
 * index). A partition whose last offset is already higher makes the condition fail; the refusal
 * carries the item (`ReturnValuesOnConditionCheckFailure: ALL_OLD`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html), and the
 * update is sent again without moving those partitions' offsets.
 *
 * Under the SDK's retry of an update applied but whose answer was lost, the retry's condition
 * fails on the update's own effect: a partition's last offset equal to one of this block's (an
 * offset is in one block only) says so, and the counts are not added again; the partition index
 * is then read back from the counts as they are (exact unless another block of the partition
 * marked in between, which only the lag metric would see).
 */
export async function markBlock(ref: Ref, start: number, layout: { lastIndex: Record<number, number>; counts: Record<number, number> }): Promise<Record<string, number>> {
  const counts = Object.entries(layout.counts);
  let moving = Object.entries(layout.lastIndex).map(([p, i]) => [p, start + i] as const);
  for (let attempt = 0; attempt < MARK_TRIES; attempt++) {
    try {
      const out = await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: metaKeys.logMarks(ref.namespace, ref.id),
          UpdateExpression: `SET ${[...moving.map(([p]) => `lp.#p${p}=:l${p}`), ...counts.map(([p]) => `lc.#p${p}=lc.#p${p}+:c${p}`)].join(',')}`,
          ConditionExpression: ['attribute_exists(pk)', ...moving.map(([p]) => `lp.#p${p}<:l${p}`)].join(' AND '),
          ExpressionAttributeNames: Object.fromEntries(counts.map(([p]) => [`#p${p}`, p])),
          ExpressionAttributeValues: { ...Object.fromEntries(moving.map(([p, l]) => [`:l${p}`, l])), ...Object.fromEntries(counts.map(([p, c]) => [`:c${p}`, c])) },
          ReturnValues: 'UPDATED_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const old = (out.Attributes?.lc ?? {}) as Record<string, number>;
      return Object.fromEntries(counts.map(([p]) => [p, old[p] ?? 0]));
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      const item = (e as { Item?: Record<'lp' | 'lc', { M?: Record<string, { N?: string }> } | undefined> }).Item;
      // No item: the stream was deleted and purged under the publish (or never had one).
      if (!item) throw serviceUnavailable(1);
      const lp = item.lp?.M ?? {};
      if (moving.some(([p, l]) => Number(lp[p]?.N) === l)) {
        const lc = item.lc?.M ?? {};
        return Object.fromEntries(counts.map(([p, c]) => [p, Math.max(0, Number(lc[p]?.N ?? 0) - c)]));
      }
      moving = moving.filter(([p, l]) => Number(lp[p]?.N ?? -1) < l);
    }
  }
  throw serviceUnavailable(1);
}

/** Deletes a deleted stream's marks (its purge). */
export async function deleteMarks(ref: Ref): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: metaKeys.logMarks(ref.namespace, ref.id) }));
}
