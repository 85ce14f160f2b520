/**
 * Stream upkeep: trims each stream by `retention_days` and `max_size_gb` (moving
 * `earliest_offset`), and purges the log and group records of deleted streams.
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../storage/client';
import { allOfKind, purgeJobKey, purgeJobs } from '../storage/resources';
import { purgeGroups, type StreamItem } from '../storage/streams';
import { deleteStreamItems, purgeBucket, readStreamLog } from '../storage/stream-log';
import { BUCKET_SIZE, bucketOf } from '../domain/streams';
import { PENDING_SETTLE_MS } from '../domain/log-horizon';
import { trimLog } from './logs';

const DAY_MS = 86_400_000;
const GIB = 1024 ** 3;
const PURGE_PER_RUN = 5000;

/** Trims one stream; returns how many messages it removed. */
export function trimStream(s: StreamItem, now: number): Promise<number> {
  return trimLog(
    {
      item: s,
      earliest: s.earliest_offset,
      next: s.next_offset,
      cutoff: now - s.retention_days * DAY_MS,
      maxBytes: s.max_size_gb * GIB,
      read: async (from, to, max) =>
        (await readStreamLog(s.id, { from, to, max, maxBytes: Infinity, keysOnly: true })).map((m) => ({ position: m.offset, published_at: m.published_at, size: m.size })),
      remove: (offsets) => deleteStreamItems(s.id, offsets),
    },
    now,
  );
}

/**
 * Purges deleted streams bucket by bucket over the offsets the delete recorded (one bucket beyond,
 * for a publish that reserved during the delete). A job whose bounds never arrived (the deleting
 * request died) only loses its group records here; DynamoDB TTL removes its log items.
 */
async function purgeDeletedStreams(now: number): Promise<number> {
  let purged = 0;
  for (const job of await purgeJobs('STREAM')) {
    const id = job.id;
    const ns = job.namespace as string;
    const done = () => ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey('STREAM', id) }));
    if (job.to_offset === undefined) {
      if (now - (job.deleted_at as number) > PENDING_SETTLE_MS) {
        purged += await purgeGroups(ns, id);
        await done();
      }
      continue;
    }
    let bucket = bucketOf(job.from_offset as number);
    const last = bucketOf(job.to_offset as number) + 1;
    while (bucket <= last && purged < PURGE_PER_RUN) {
      const n = await purgeBucket(id, bucket, 500);
      purged += n;
      if (n === 0) bucket++;
    }
    if (bucket > last) {
      purged += await purgeGroups(ns, id);
      await done();
    } else {
      // Resume at this bucket next run.
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: purgeJobKey('STREAM', id),
          UpdateExpression: 'SET from_offset = :f',
          ExpressionAttributeValues: { ':f': bucket * BUCKET_SIZE },
        }),
      );
    }
  }
  return purged;
}

export async function sweepStreams(now: number) {
  const streams = await allOfKind<StreamItem>('STREAM');
  let trimmed = 0;
  for (const s of streams) trimmed += await trimStream(s, now);
  return { streams: streams.length, trimmed, purged: await purgeDeletedStreams(now) };
}
