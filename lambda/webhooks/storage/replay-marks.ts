/**
 * The replay marks of the delivery log table (extension; keys in ./keys.ts `deliveryLogKeys`
 * `replayQueuedSk`): one small item per message saying when a replay of it was last queued, so
 * bulk replays whose pages overlap, or that run at once, queue each failure once
 * (lambda/webhooks/replay.ts).
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOG_RETENTION_SECONDS } from '../rules/delivery-log';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { putEach } from '../../core/storage/batch';
import { deliveryLogKeys as keys, ttlSeconds } from '../../core/storage/keys';

const TABLE = () => tableName('deliveryLog');

/**
 * Records that a replay of each message was queued at `now`, so a bulk replay whose pages
 * overlap queues each failure once (one small item per message, 1 write unit).
 */
export async function markReplayQueued(ns: string, webhookId: string, messageIds: string[], now: number): Promise<void> {
  const { failed, error } = await putEach(
    TABLE(),
    messageIds.map((id) => ({ pk: keys.message(ns, webhookId, id), sk: keys.replayQueuedSk, queued_at: now, ttl: ttlSeconds(now) + LOG_RETENTION_SECONDS })),
  );
  if (failed.length) throw error ?? new Error(`${failed.length} replay marks not written`);
}

/**
 * Claims the replay of a message that failed at `failedAt`: writes the mark only when no replay
 * was queued since that failure (no mark, or an older one), so of two bulk replays reading the
 * same page at once exactly one queues each message. Answers whether this call claimed it: a
 * refusal that meets this call's own claim (the SDK sent the write again after its answer was
 * lost, and the retry met the first try) is a claim, told by the mark the refusal returns
 * (`ReturnValuesOnConditionCheckFailure`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html).
 */
export async function claimReplay(ns: string, webhookId: string, messageId: string, failedAt: number, now: number, claimId: string): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: keys.message(ns, webhookId, messageId), sk: keys.replayQueuedSk },
        UpdateExpression: 'SET queued_at = :now, claim = :c, #t = :t',
        ConditionExpression: 'attribute_not_exists(queued_at) OR queued_at < :failed',
        ExpressionAttributeNames: { '#t': 'ttl' },
        ExpressionAttributeValues: { ':now': now, ':c': claimId, ':failed': failedAt, ':t': ttlSeconds(now) + LOG_RETENTION_SECONDS },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (e) {
    // The refusal's item is in the low-level attribute-value format (`{ claim: { S } }`).
    if (isConditionFailed(e)) return (e as { Item?: { claim?: { S?: string } } }).Item?.claim?.S === claimId;
    throw e;
  }
}

/** A mark given back is tried for about 3 s beyond the SDK's retries: one left held would keep every later bulk replay from queueing its message. */
const RELEASE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Gives back claims whose jobs were not queued (the send failed), so a later bulk replay queues
 * them; a claim another replay has taken since is left alone.
 */
export async function releaseReplayClaims(ns: string, webhookId: string, messageIds: string[], claimId: string): Promise<void> {
  const released = await Promise.allSettled(
    messageIds.map((id) =>
      withRetries(async () => {
        try {
          await ddb().send(
            new DeleteCommand({
              TableName: TABLE(),
              Key: { pk: keys.message(ns, webhookId, id), sk: keys.replayQueuedSk },
              ConditionExpression: 'claim = :c',
              ExpressionAttributeValues: { ':c': claimId },
            }),
          );
        } catch (e) {
          if (!isConditionFailed(e)) throw e;
        }
      }, RELEASE_RETRIES),
    ),
  );
  const failed = released.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
