/**
 * Schedules in the scheduler table: one item per schedule in its namespace's
 * partition (a list is a Query by name), a count item kept in the same transaction as every
 * create and delete (the per-namespace limit), and the `due` index entry of an enabled schedule
 * with a next run (`S#{shard}`, sorted by next_run_at) that the tick reads.
 *
 * A run is claimed on the item itself with a condition on its scheduled time (`next_run_at`), so
 * two ticks (overlapping, or a retry) never both publish it; a claim that a dead tick left
 * expires after CLAIM_MS, and one a tick released after a retryable failure at once; either is
 * retried with the same message id.
 *
 * The writes that end a claim (its release, its freeing, the run's record) are tried again beyond
 * the SDK's own attempts ({@link ENDING_RETRIES}): one that fails leaves the run to wait out the
 * claim, two minutes, where the docs promise the next tick.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys, schedulerKeys } from '../../core/storage/keys';
import { dueShard, timeKey } from '../../core/rules/delays';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { DEFAULT_SCHEDULE_LIMIT, type ScheduleConfig } from '../rules/schedules';
import { CLAIM_MS } from './scheduler';
import { deleteCounted, putCounted } from '../../core/storage/resource-limits';

const TABLE = () => tableName('scheduler');

/**
 * For the writes that end a claim: each is conditional on the claim, so a retry after an attempt
 * that was applied and whose answer was lost meets a condition that fails, which each of them
 * reads as done. 4 calls from 100 ms span 0.7 s of waits, well within the tick's finish margin.
 */
const ENDING_RETRIES = { tries: 4, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };
const sendEnding = (input: ConstructorParameters<typeof UpdateCommand>[0]) => withRetries(() => ddb().send(new UpdateCommand(input)), ENDING_RETRIES);

export interface ScheduleItem {
  pk: string;
  sk: string;
  namespace: string;
  name: string;
  /** New for every create (a recreated schedule's runs never finish the old one's claims). */
  id: string;
  config: ScheduleConfig;
  created_at: number;
  updated_at: number;
  /** Origin of an `every` schedule without start_at: the create or the last PUT. */
  anchor: number;
  version: number;
  next_run_at?: number;
  last_run_at?: number;
  last_message_id?: string;
  last_error?: string;
  claim_time?: number;
  claim_until?: number;
  claim_msg?: string;
  /** When the claimed run was first attempted (its retry window starts at the later of it and its time). */
  claim_since?: number;
  /** The claim's own token: a retry of the claim's write after a lost answer recognises its claim by it. */
  claim_token?: string;
  /** The last times skipped for being more than the lateness bound late: from, up to (not including) until. */
  skipped_from?: number;
  skipped_until?: number;
}

/** The item with its due index keys: present only while enabled with a next run. */
export function withDueKeys(item: Omit<ScheduleItem, 'pk' | 'sk'>): ScheduleItem & Record<string, unknown> {
  const base = { ...schedulerKeys.schedule(item.namespace, item.name), ...item };
  if (!item.config.enabled || item.next_run_at === undefined) return base;
  return {
    ...base,
    due_shard: schedulerKeys.dueShard('S', dueShard(`${item.namespace}#${item.name}`)),
    due_sk: schedulerKeys.dueSk(timeKey(item.next_run_at), item.namespace, item.name),
  };
}

export async function getSchedule(ns: string, name: string): Promise<ScheduleItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: schedulerKeys.schedule(ns, name), ConsistentRead: true }));
  return out.Item as ScheduleItem | undefined;
}

/** The namespace's schedule limit (admin CLI `schedule-limit set`), default 1,000. */
export async function scheduleLimit(ns: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.namespace(ns), ProjectionExpression: 'schedule_limit', ConsistentRead: true }));
  const n = Number(out.Item?.schedule_limit);
  return Number.isInteger(n) && n >= 0 ? n : DEFAULT_SCHEDULE_LIMIT;
}

/** Sets a namespace's schedule limit (admin CLI); false when the namespace does not exist. */
export async function setScheduleLimit(ns: string, limit: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.namespace(ns),
        UpdateExpression: 'SET schedule_limit = :l',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':l': limit },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** How many schedules a namespace has (the count item). */
export async function scheduleCount(ns: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: schedulerKeys.scheduleCount(ns), ConsistentRead: true }));
  return Number(out.Item?.n ?? 0);
}

/** Creates a schedule unless the name is taken or the namespace is at `limit`. */
export async function createSchedule(item: ScheduleItem & Record<string, unknown>, limit: number): Promise<'created' | 'exists' | 'limit'> {
  return putCounted('scheduler', item, schedulerKeys.scheduleCount(item.namespace), limit);
}

/** Replaces a schedule if it is still at `version` (PUT, PATCH); false when it changed or is gone. */
export async function replaceSchedule(item: ScheduleItem & Record<string, unknown>, version: number): Promise<boolean> {
  try {
    await ddb().send(new PutCommand({ TableName: TABLE(), Item: item, ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': version } }));
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Deletes a schedule and counts it out; false when it did not exist. */
export const deleteSchedule = (ns: string, name: string): Promise<boolean> => deleteCounted('scheduler', schedulerKeys.schedule(ns, name), schedulerKeys.scheduleCount(ns));

/** A page of a namespace's schedules by name, after `afterName`. */
export async function listSchedules(ns: string, limit: number, afterName?: string): Promise<{ items: ScheduleItem[]; more: boolean }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: TABLE(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': schedulerKeys.schedulesPk(ns), ':p': schedulerKeys.schedulePrefix },
      ConsistentRead: true,
      Limit: limit,
      ...(afterName !== undefined ? { ExclusiveStartKey: schedulerKeys.schedule(ns, afterName) } : {}),
    }),
  );
  return { items: (out.Items ?? []) as ScheduleItem[], more: out.LastEvaluatedKey !== undefined };
}

/** Keys of schedules of one shard whose next run is at or before `upTo`, oldest first. */
export async function dueScheduleKeys(shard: number, upTo: number, limit: number, start?: Record<string, unknown>): Promise<{ keys: { pk: string; sk: string }[]; next?: Record<string, unknown> }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: 'due',
      KeyConditionExpression: 'due_shard = :s AND due_sk < :upTo',
      ExpressionAttributeValues: { ':s': schedulerKeys.dueShard('S', shard), ':upTo': timeKey(upTo + 1) },
      Limit: limit,
      ExclusiveStartKey: start,
    }),
  );
  return { keys: (out.Items ?? []).map((i) => ({ pk: i.pk as string, sk: i.sk as string })), next: out.LastEvaluatedKey };
}

/**
 * Claims the run at `t` (the item's next_run_at) with message id `messageId`; false when another
 * tick holds it, the schedule changed, or the run was made.
 *
 * Each claim carries a token of its own: when DynamoDB applied the claim and its answer was lost,
 * the SDK sends the same request again, which meets the claim its first attempt wrote; the token
 * lets that retry succeed (it is this claim), where a plain condition on the claim's expiry would
 * answer "another tick holds it" and leave the run to wait out the claim (CLAIM_MS).
 */
export async function claimRun(s: ScheduleItem, t: number, messageId: string, since: number, now: number): Promise<boolean> {
  const token = randomUUID();
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: s.pk, sk: s.sk },
        UpdateExpression: 'SET claim_time = :t, claim_until = :until, claim_msg = :m, claim_since = :since, claim_token = :tok',
        // The version too: a PUT or PATCH since the tick read the item makes the next tick run it with the new configuration.
        ConditionExpression: 'id = :id AND version = :v AND next_run_at = :t AND (attribute_not_exists(claim_until) OR claim_until < :now OR claim_token = :tok)',
        ExpressionAttributeValues: { ':t': t, ':until': now + CLAIM_MS, ':m': messageId, ':since': since, ':id': s.id, ':v': s.version, ':now': now, ':tok': token },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    // The claim may have been applied (every answer lost): free it if it is this one, so the
    // next tick runs the time now rather than once the claim expires. Best effort: the error
    // stands, and an unfreed claim still expires.
    await freeClaim(s, token, now).catch(() => undefined);
    throw e;
  }
}

/** Ends the claim `token` at once, if it is the schedule's claim. */
async function freeClaim(s: ScheduleItem, token: string, now: number): Promise<void> {
  try {
    await sendEnding({
      TableName: TABLE(),
      Key: { pk: s.pk, sk: s.sk },
      UpdateExpression: 'SET claim_until = :past',
      ConditionExpression: 'claim_token = :tok',
      ExpressionAttributeValues: { ':past': now - 1, ':tok': token },
    });
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

export interface RunRecord {
  last_run_at: number;
  last_message_id?: string;
  last_error?: string;
}

/** Gives a claimed run back after a retryable failure, so that the next tick retries it (same time, same message id). */
export async function releaseRun(s: ScheduleItem, t: number, messageId: string, now: number): Promise<void> {
  try {
    await sendEnding({
      TableName: TABLE(),
      Key: { pk: s.pk, sk: s.sk },
      UpdateExpression: 'SET claim_until = :now',
      ConditionExpression: 'claim_msg = :m AND claim_time = :t',
      ExpressionAttributeValues: { ':now': now, ':m': messageId, ':t': t },
    });
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // replaced or deleted meanwhile: nothing to give back
  }
}

/** Where a schedule goes after a run, from the schedule as it is when the run is recorded. */
export type NextOf = (s: ScheduleItem) => { next: number | undefined; skipped?: { from: number; until: number | undefined } };

/**
 * Records a claimed run and moves the schedule on (`nextOf` the item as stored: a PUT or PATCH
 * that kept the due run and its claim meanwhile has its own configuration's next time); answers
 * the schedule as it now is, undefined when it was replaced without the claim or deleted (only
 * the run is recorded then: the new configuration's next run stands).
 */
export async function finishRun(s: ScheduleItem, t: number, messageId: string, run: RunRecord, nextOf: NextOf): Promise<ScheduleItem | undefined> {
  let current: ScheduleItem | undefined = s;
  for (let attempt = 0; attempt < 5 && current; attempt++) {
    const done = await finishOnce(current, t, messageId, run, nextOf(current));
    if (done) return done;
    current = await getSchedule(s.namespace, s.name);
    if (!current || current.id !== s.id || current.claim_msg !== messageId || current.claim_time !== t) break;
  }
  // Replaced meanwhile without this run's claim: keep its configuration and next run, record what this run did.
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: s.pk, sk: s.sk },
        UpdateExpression: 'SET last_run_at = :at, last_message_id = :mid, last_error = :err',
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':at': run.last_run_at, ':mid': run.last_message_id ?? s.last_message_id ?? null, ':err': run.last_error ?? null, ':id': s.id },
      }),
    );
  } catch (e2) {
    if (!isConditionFailed(e2)) throw e2; // deleted meanwhile: nothing to record
  }
  return undefined;
}

/** One conditional write of a run's end on the item at its version; undefined when the condition failed. */
async function finishOnce(s: ScheduleItem, t: number, messageId: string, run: RunRecord, after: ReturnType<NextOf>): Promise<ScheduleItem | undefined> {
  const { next, skipped } = after;
  const sets = ['last_run_at = :at', 'last_message_id = :mid', 'last_error = :err'];
  const values: Record<string, unknown> = { ':at': run.last_run_at, ':mid': run.last_message_id ?? s.last_message_id ?? null, ':err': run.last_error ?? null };
  const removes = ['claim_time', 'claim_until', 'claim_msg', 'claim_since', 'claim_token'];
  const moved = withDueKeys({ ...s, next_run_at: next });
  if (next !== undefined) {
    sets.push('next_run_at = :next');
    values[':next'] = next;
  } else removes.push('next_run_at');
  if (moved.due_shard !== undefined) {
    sets.push('due_shard = :shard', 'due_sk = :dsk');
    values[':shard'] = moved.due_shard;
    values[':dsk'] = moved.due_sk;
  } else removes.push('due_shard', 'due_sk');
  if (skipped) {
    sets.push('skipped_from = :sf');
    values[':sf'] = skipped.from;
    if (skipped.until !== undefined) {
      sets.push('skipped_until = :su');
      values[':su'] = skipped.until;
    } else removes.push('skipped_until');
  }
  try {
    // A retry of a record whose answer was lost fails its condition: finishRun then reads the item.
    const out = await sendEnding({
      TableName: TABLE(),
      Key: { pk: s.pk, sk: s.sk },
      UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`,
      ConditionExpression: 'claim_msg = :m AND claim_time = :t AND version = :v',
      ExpressionAttributeValues: { ...values, ':m': messageId, ':t': t, ':v': s.version },
      ReturnValues: 'ALL_NEW',
    });
    return out.Attributes as ScheduleItem;
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}
