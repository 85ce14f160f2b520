/**
 * What a delivery's record makes happen once, however many runs, tries and copies reach it: the
 * count of a hand-off to the retry workflow (its pending retry), and the run of the end's hook.
 * Design record docs/design/0017-webhook-delivery-once.md.
 *
 * The hand-off's count is no run's memory: the take of the note's counts (`handoff_uncounted`)
 * and the pending retry it adds are one TransactWriteItems, so a take that applied counted, and
 * one that did not counted nothing, whatever answers were lost. Its ClientRequestToken is derived
 * from the delivery and the hand-off's number, so every try and copy of the take sends the same
 * one: within 10 minutes a repeat "returns successfully without making any changes", after that
 * the record's condition (the note still there, for that hand-off) refuses it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 */
import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { ddb, isConditionFailed, tableName, transactWrite, type OnceToken } from '../../core/storage/client';
import { metaKeys, writerPartition } from '../../core/storage/keys';
import type { CountDelta } from './webhook-counters';
import { recordKey, type DeliveryKey } from './webhook-delivery-item';

/**
 * Counter items the hand-offs' pending retries are added to, per webhook incarnation (writer
 * items `handoff#0..7`, read and folded like every writer's, ./webhook-counters.ts): transactions
 * on one item at once cancel each other (`TransactionConflict`), so a webhook's hand-offs spread
 * over eight, chosen by the message.
 */
const HANDOFF_COUNTER_ITEMS = 8;

/** The writer item of the hand-off counter of delivery `k`. */
const handoffCounterKey = (k: DeliveryKey) =>
  metaKeys.webhookCounterWriter(k.namespace, k.webhookId, `handoff#${writerPartition(k.messageId + (k.replayId ?? '')) % HANDOFF_COUNTER_ITEMS}`);

/** The token of every try of the take of hand-off `queued` of delivery `k` (36 characters at most). */
const handoffToken = (k: DeliveryKey, queued: number): string => {
  const { pk, sk } = recordKey(k);
  return createHash('sha256').update(`${pk}\u0000${sk}\u0000${queued}`).digest('hex').slice(0, 36);
};

/** A take is tried about 3 s beyond the SDK's retries, as the note's write is (../webhooks/deliver.ts). */
const TAKE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Takes the counts of hand-off `queued` (`expected`: as its note holds them) and adds its pending
 * retry, in one transaction: the record's REMOVE of `handoff_uncounted` (conditional on the note
 * being that hand-off's) and, for the first hand-off, ADD `pending_retries` on its counter item
 * (with `seq`, so a fold that read the item before refuses it, and `written_at`, the note's
 * time: the request is the same at every try, as a repeated token requires). Answers `expected`
 * when this take applied (now or at an earlier try or copy within the token's 10 minutes), the
 * caller then counting the rest (next retry, error: shown, not summed); `taken` when the record's
 * condition refused it (taken and counted by another take, or the delivery moved on). Throws
 * when it cannot tell (every try failed): the job comes back and takes again.
 * Two write units per item: 4 for a first hand-off, 2 for a later one.
 */
export async function takeHandoff(k: DeliveryKey, queued: number, expected: CountDelta): Promise<CountDelta | 'taken'> {
  const take = {
    Update: {
      TableName: tableName('meta'),
      Key: recordKey(k),
      UpdateExpression: 'REMOVE handoff_uncounted',
      ConditionExpression: 'attribute_exists(handoff_uncounted) AND queued = :q',
      ExpressionAttributeValues: { ':q': queued },
    },
  };
  const count = expected.pending
    ? [{
        Update: {
          TableName: tableName('meta'),
          Key: handoffCounterKey(k),
          UpdateExpression: 'SET written_at = :w ADD pending_retries :p, #seq :one',
          ExpressionAttributeNames: { '#seq': 'seq' },
          ExpressionAttributeValues: { ':w': expected.at ?? 0, ':p': expected.pending, ':one': 1 },
        },
      }]
    : [];
  // Another run's or copy's take with this token may have applied: transactWrite keeps it after
  // a conflict (a cancelled try applied nothing, so sending the same request again is safe), a
  // random one would make a take that no later try of the hand-off could answer as applied.
  const once: OnceToken = { token: handoffToken(k, queued), maybeApplied: true };
  try {
    await withRetries(() => transactWrite({ TransactItems: [take, ...count] }, { once }), TAKE_RETRIES);
    return expected;
  } catch (e) {
    if (isConditionFailed(e)) return 'taken';
    throw e;
  }
}

/**
 * Before an end from `retrying` gives the pending retry back: takes the first hand-off's count
 * if no take did yet (its note still there), so the give-back always follows the +1 it gives
 * back, whichever of a take and an end lands first. One strongly consistent read (1 read unit),
 * and the take only when the note is there.
 */
export async function settleHandoff(k: DeliveryKey): Promise<void> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: recordKey(k), ConsistentRead: true }));
  const rec = out.Item as { outcome?: string; queued?: number; handoff_uncounted?: CountDelta } | undefined;
  if (rec?.outcome !== 'retrying' || !rec.handoff_uncounted?.pending || typeof rec.queued !== 'number') return;
  await takeHandoff(k, rec.queued, rec.handoff_uncounted);
}

/** What {@link claimHook} answers: this run runs the hook, another run holds it, or it ran (or there is no record). */
export type HookClaim = 'mine' | 'held' | 'ended';

/**
 * Claims the run of an ended delivery's hook until `untilMs`, on its record (1 write unit): while
 * it is not marked `ended` and no other run holds an unlapsed claim. A try refused after this
 * run's own applied try (its answer lost) finds its own id in the refusal's item
 * (`ReturnValuesOnConditionCheckFailure`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html).
 */
export async function claimHook(k: DeliveryKey, run: string, now: number, untilMs: number): Promise<HookClaim> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: recordKey(k),
        UpdateExpression: 'SET hook_run = :run, hook_until = :until',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(ended) AND (attribute_not_exists(hook_until) OR hook_until < :now OR hook_run = :run)',
        ExpressionAttributeValues: { ':run': run, ':until': untilMs, ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'mine';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refusal's item is in the low-level attribute-value format.
    const old = (e as { Item?: Record<string, AttributeValue> }).Item;
    if (!old || old.ended) return 'ended';
    return old.hook_run?.S === run ? 'mine' : 'held';
  }
}

/** Gives back this run's claim of the hook (the hook failed), so the next run runs it; refused: not held by this run, nothing to give back. */
export async function releaseHook(k: DeliveryKey, run: string): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({ TableName: tableName('meta'), Key: recordKey(k), UpdateExpression: 'REMOVE hook_run, hook_until', ConditionExpression: 'hook_run = :run', ExpressionAttributeValues: { ':run': run } }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}
