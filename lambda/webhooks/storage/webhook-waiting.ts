/**
 * Deliveries waiting for an in-flight place of their webhook (`max_in_flight`,
 * lambda/webhooks/place-wait.ts): one small item per delivery in the webhook incarnation's own
 * partition, sorted by when it began to wait, so the places that free up go to the oldest (a
 * Query with a small Limit). A waiting delivery costs one PutItem (1 WCU for a reference job; an
 * inline job's item is as large as its message), a claim (1 WCU) and a delete (1 WCU) when it
 * is handed a place, instead of an SQS send and receive every 1 to 3 s until it found one.
 *
 * A hand-off claims the item before it sends the job and deletes it after: a hand-off that stops
 * in between (its container ended) leaves the item parked with a claim that lapses, and the next
 * hand-off sends it (a job sent twice reads its record before any POST). The items lapse (TTL)
 * after the delivery queue's retention, as the job's SQS message would have.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { jobMessageId, type DeliveryJob } from '../rules/delivery';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { ttlSeconds } from '../../core/storage/keys';
import { DELIVERY_RETENTION_SECONDS } from './delivery-queue';

const waitingKeys = {
  pk: (ns: string, webhookId: string) => `NS#${ns}#WHWAIT#${webhookId}`,
  /** Oldest first: when it began to wait, zero-padded, then the delivery (a replay is a delivery of its own). */
  sk: (job: WaitingJob) => `${String(job.waiting_at).padStart(15, '0')}#${jobMessageId(job)}#${job.replay_id ?? ''}`,
};

export type WaitingJob = DeliveryJob & { waiting_at: number };

/** A waiting job and whether a hand-off holds a claim on it until a time (epoch ms). */
export interface Waiter {
  job: WaitingJob;
  claimedUntil?: number;
}

/** Parks a job to wait for a place (idempotent: a job parked again keeps its place, its `waiting_at`). */
export async function putWaiting(job: WaitingJob, now = Date.now()): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: tableName('meta'),
      Item: { pk: waitingKeys.pk(job.namespace, job.webhook_id), sk: waitingKeys.sk(job), job: JSON.stringify(job), ttl: ttlSeconds(now + DELIVERY_RETENTION_SECONDS * 1000) },
    }),
  );
}

/** The oldest waiting jobs of a webhook incarnation (strongly consistent: a job parked just before is seen). */
export async function oldestWaiting(ns: string, webhookId: string, limit: number): Promise<Waiter[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': waitingKeys.pk(ns, webhookId) },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ job: JSON.parse(i.job as string) as WaitingJob, claimedUntil: i.claimed_until as number | undefined }));
}

/** Claims a waiting job for a hand-off until `until`; false when another hand-off holds it (or it is gone). */
export async function claimWaiting(job: WaitingJob, until: number, now = Date.now()): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: { pk: waitingKeys.pk(job.namespace, job.webhook_id), sk: waitingKeys.sk(job) },
        UpdateExpression: 'SET claimed_until = :until',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(claimed_until) OR claimed_until < :now)',
        ExpressionAttributeValues: { ':until': until, ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // This claim applied already, its answer lost and the SDK's retry refused: it is ours (a
    // refusal's item is in the low-level format, `{ claimed_until: { N } }`).
    return (e as { Item?: { claimed_until?: { N?: string } } }).Item?.claimed_until?.N === String(until);
  }
}

/** Gives back a claim this hand-off holds (`until`, as it claimed), so the next hand-off need not wait for it to lapse. Never throws. */
export async function unclaimWaiting(job: WaitingJob, until: number): Promise<void> {
  await ddb()
    .send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: { pk: waitingKeys.pk(job.namespace, job.webhook_id), sk: waitingKeys.sk(job) },
        UpdateExpression: 'REMOVE claimed_until',
        ConditionExpression: 'claimed_until = :until',
        ExpressionAttributeValues: { ':until': until },
      }),
    )
    .catch(() => undefined);
}

/** Removes a waiting job its hand-off sent. */
export async function dropWaiting(job: WaitingJob): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: { pk: waitingKeys.pk(job.namespace, job.webhook_id), sk: waitingKeys.sk(job) } }));
}

/**
 * Removes a waiting job a hand-off ran in its own invocation, if it is still this hand-off's claim
 * (`until`): false when it is not (the run parked it again, which put it back unclaimed, or the
 * claim lapsed and another hand-off holds it, which removes it). Throws on a storage error.
 */
export async function dropClaimed(job: WaitingJob, until: number): Promise<boolean> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: tableName('meta'),
        Key: { pk: waitingKeys.pk(job.namespace, job.webhook_id), sk: waitingKeys.sk(job) },
        ConditionExpression: 'claimed_until = :until',
        ExpressionAttributeValues: { ':until': until },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
