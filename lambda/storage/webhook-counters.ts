/**
 * The delivery counters of each webhook incarnation (issue 22 item 4), spread over
 * {@link COUNTER_SHARDS} items (keys.ts `webhookStatusShard`) and written in aggregate: a run
 * adds what its deliveries moved to a buffer ({@link countLater}) once their records are written
 * (./webhook-deliveries.ts), and {@link flushCounts} writes the buffer with one UpdateItem per
 * webhook onto a shard chosen at random, at the end of each delivery batch or workflow Task. So a
 * batch of ten deliveries of one webhook costs one write unit for its counters, not ten, and no
 * single item takes more than a fraction of a webhook's deliveries (DynamoDB caps one partition
 * key at 1,000 write units per second:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * A read ({@link getWebhookStatus}) reads the incarnation's shards (one BatchGetItem) and sums
 * them.
 *
 * Counting stays once per delivery: a delivery counts only when its conditional record write
 * succeeded, which happens once. What is given up against the former transaction: an invocation
 * that dies between writing its records and flushing (milliseconds; a crash or a timeout) loses
 * the counts of that batch, and never counts them twice.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { isRetryableDependencyFailure, withRetries } from '../domain/dependency-errors';
import { ddb, isTransactionConflict, tableName } from './client';
import { metaKeys } from './keys';

/** Counter items per webhook incarnation: writes spread over this many partition keys. */
export const COUNTER_SHARDS = 8;

export interface WebhookStatusItem {
  success_count?: number;
  failure_count?: number;
  /** Epoch ms of the last attempt. */
  last_delivery?: number;
  last_error?: string;
  /** Epoch ms of the most recently scheduled retry. */
  next_retry?: number;
  /** Deliveries waiting for a retry; next_retry means something only while this is above 0. */
  pending_retries?: number;
  /** Hooks that published nothing because the namespace's publish rate limit refused them. */
  hook_failure_count?: number;
  last_hook_error?: string;
}

/** What deliveries of one webhook moved, summed until the next flush. */
export interface CountDelta {
  success?: number;
  failure?: number;
  pending?: number;
  /** Epoch ms of an attempt (the latest is kept). */
  at?: number;
  /** A delivery succeeded at this time: an older error no longer shows. */
  successAt?: number;
  /** A failure (final or a scheduled retry) and its reason. */
  error?: { at: number; message: string };
  nextRetry?: number;
}

interface Pending { ns: string; webhookId: string; d: Required<Pick<CountDelta, 'success' | 'failure' | 'pending'>> & Omit<CountDelta, 'success' | 'failure' | 'pending'> }

let buffer = new Map<string, Pending>();

const max = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/** Adds what one delivery moved to the buffer of this run (written by {@link flushCounts}). */
export function countLater(ns: string, webhookId: string, d: CountDelta): void {
  const k = `${ns}\u0000${webhookId}`;
  const p = buffer.get(k) ?? { ns, webhookId, d: { success: 0, failure: 0, pending: 0 } };
  p.d.success += d.success ?? 0;
  p.d.failure += d.failure ?? 0;
  p.d.pending += d.pending ?? 0;
  p.d.at = max(p.d.at, d.at);
  p.d.successAt = max(p.d.successAt, d.successAt);
  p.d.nextRetry = max(p.d.nextRetry, d.nextRetry);
  if (d.error && (!p.d.error || d.error.at >= p.d.error.at)) p.d.error = d.error;
  buffer.set(k, p);
}

const shardKey = (ns: string, webhookId: string, shard: number) => metaKeys.webhookStatusShard(ns, webhookId, shard);
const randomShard = () => Math.floor(Math.random() * COUNTER_SHARDS);

/** The UpdateItem of one webhook's summed delta (built apart from sending, for unit tests). */
export function counterUpdate(ns: string, webhookId: string, d: Pending['d'], shard = randomShard()) {
  const adds: string[] = [];
  const sets: string[] = [];
  const v: Record<string, unknown> = {};
  const add = (attr: string, n: number) => {
    if (n === 0) return;
    adds.push(`${attr} :${attr}`);
    v[`:${attr}`] = n;
  };
  const set = (attr: string, value: unknown) => {
    if (value === undefined) return;
    sets.push(`${attr} = :${attr}`);
    v[`:${attr}`] = value;
  };
  add('success_count', d.success);
  add('failure_count', d.failure);
  add('pending_retries', d.pending);
  set('last_delivery', d.at);
  set('last_success_at', d.successAt);
  set('last_error', d.error?.message);
  set('last_error_at', d.error?.at);
  set('next_retry', d.nextRetry);
  if (!adds.length && !sets.length) return undefined;
  return {
    TableName: tableName('meta'),
    Key: shardKey(ns, webhookId, shard),
    UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : ''].filter(Boolean).join(' '),
    ExpressionAttributeValues: v,
  };
}

/**
 * Writes the buffered counts, one UpdateItem per webhook (retried about 3 s while the failure is
 * one the next call may not meet). Resolves when all are written; throws the first error after
 * trying every webhook (those counts are lost; see the module comment).
 */
/** Updates whose write failed, kept (with their id and shard) for this container's next flush. */
let unwritten: { u: NonNullable<ReturnType<typeof counterUpdate>>; id: string }[] = [];

export async function flushCounts(): Promise<void> {
  const taken = [...buffer.values()];
  buffer = new Map();
  const updates = [...unwritten, ...taken.flatMap((p) => {
    const u = counterUpdate(p.ns, p.webhookId, p.d);
    // One id for every try, also in a later flush: a retry of an applied update adds nothing.
    return u ? [{ u, id: randomUUID() }] : [];
  })];
  unwritten = [];
  if (!updates.length) return;
  // 8 tries span 12.7 s of waits: a flush outlasts a short outage or a run of conflicts and throttles.
  const results = await Promise.allSettled(updates.map(({ u, id }) => withRetries(() => addOnce(u, id), { tries: 8, firstDelayMs: 100, retryIf: (e) => isRetryableDependencyFailure(e) || isTransactionConflict(e) })));
  // Not lost: the next flush of this container (its next batch or Task) tries them again.
  unwritten = updates.filter((_, i) => results[i].status === 'rejected');
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Applies one counter update at most once: a one-item transaction with the update's id as its
 * ClientRequestToken. DynamoDB answers a repeat of an applied token (within 10 minutes) with
 * success and changes nothing, so the SDK's retry after a lost answer, a later try and this
 * container's next flush never add twice. A conditional "not my id" attribute could not promise
 * that: another flush to the shard in between replaces the id.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 */
async function addOnce(u: NonNullable<ReturnType<typeof counterUpdate>>, id: string): Promise<void> {
  await ddb().send(new TransactWriteCommand({ TransactItems: [{ Update: u }], ClientRequestToken: id }));
}

/** The keys of one incarnation's counters: the shards, and the single item written before shards. */
const counterKeys = (ns: string, webhookId: string) => [metaKeys.webhookStatus(ns, webhookId), ...Array.from({ length: COUNTER_SHARDS }, (_, i) => shardKey(ns, webhookId, i))];

/** The counter items of one incarnation (one strongly consistent BatchGetItem, about 1 read unit per item). */
const counterItems = (ns: string, webhookId: string) => batchGet<Record<string, unknown>>(tableName('meta'), counterKeys(ns, webhookId), true);

/** Sums the shards: counts add up; the latest time, error and retry win; an error older than the latest success is gone. */
export function sumCounters(items: Record<string, unknown>[]): WebhookStatusItem {
  const out: WebhookStatusItem = {};
  let errorAt = -1;
  let successAt = -1;
  let hookAt = -1;
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  for (const i of items) {
    for (const f of ['success_count', 'failure_count', 'pending_retries', 'hook_failure_count'] as const) {
      if (num(i[f]) !== undefined) out[f] = (out[f] ?? 0) + (num(i[f]) as number);
    }
    out.last_delivery = max(out.last_delivery, num(i.last_delivery));
    out.next_retry = max(out.next_retry, num(i.next_retry));
    successAt = Math.max(successAt, num(i.last_success_at) ?? -1);
    if (typeof i.last_error === 'string') {
      // The item written before shards had no time of its error: its last delivery stands in.
      const at = num(i.last_error_at) ?? num(i.last_delivery) ?? 0;
      if (at > errorAt) {
        errorAt = at;
        out.last_error = i.last_error;
      }
    }
    if (typeof i.last_hook_error === 'string' && (num(i.last_hook_failure) ?? 0) > hookAt) {
      hookAt = num(i.last_hook_failure) ?? 0;
      out.last_hook_error = i.last_hook_error;
    }
  }
  if (out.last_error !== undefined && successAt >= errorAt) delete out.last_error;
  for (const k of Object.keys(out) as (keyof WebhookStatusItem)[]) if (out[k] === undefined) delete out[k];
  return out;
}

/** The counters of a webhook incarnation (its shards, read strongly consistently and summed). */
export async function getWebhookStatus(ns: string, webhookId: string): Promise<WebhookStatusItem> {
  return sumCounters(await counterItems(ns, webhookId));
}

/** Counts at once, without the buffer (tests and tools; deliveries go through their record). */
export async function countNow(ns: string, webhookId: string, d: CountDelta): Promise<void> {
  const u = counterUpdate(ns, webhookId, { success: d.success ?? 0, failure: d.failure ?? 0, pending: d.pending ?? 0, at: d.at, successAt: d.successAt, error: d.error, nextRetry: d.nextRetry });
  if (u) await ddb().send(new UpdateCommand(u));
}

/** Records a hook that published nothing (the namespace's publish rate limit refused it). */
export async function recordHookFailure(ns: string, webhookId: string, error: string, now: number) {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: shardKey(ns, webhookId, randomShard()),
      UpdateExpression: 'SET last_hook_error = :err, last_hook_failure = :now ADD hook_failure_count :one',
      ExpressionAttributeValues: { ':err': error, ':now': now, ':one': 1 },
    }),
  );
}

/** Removes the counters of a deleted webhook incarnation (every shard). */
export async function deleteWebhookStatus(ns: string, webhookId: string) {
  await Promise.all(counterKeys(ns, webhookId).map((Key) => ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key }))));
}
