/**
 * The delivery counters of each webhook incarnation, written in aggregate: a run
 * adds what its deliveries moved to a buffer ({@link countLater}) once their records are written
 * (./webhook-deliveries.ts), and {@link flushCounts} writes the buffer at the end of each delivery
 * batch or workflow Task with one plain conditional UpdateItem per webhook (1 write unit per batch,
 * not per delivery; it was a one-item transaction, 2 units, for its idempotency token).
 *
 * Exactly once without a transaction: each writer has an item of its own in the incarnation's
 * partition (keys.ts `webhookCounterWriter`). A writer is one flush chain: this container's id and a
 * slot that one flush holds at a time (a Lambda container runs one invocation at a time, so it uses
 * one slot; the local runtime runs many handlers in one process, so they take several). Each flush
 * of a slot has the next sequence number `n`, and its update is `SET seq = n ... ADD counts` under
 * the condition `attribute_not_exists(seq) OR seq < n`. Per writer item the updates go in order: a
 * flush whose write failed is sent again, with the same `n` and the same delta, before anything
 * later of that slot (a later flush's delta for the item waits behind it). So a repeat of an applied
 * update (the SDK's retry after a lost answer, a later try, the next flush) fails its condition,
 * which means "already applied", and adds nothing.
 *
 * A read ({@link readWebhookCounters}) is one strongly consistent Query of each counter partition
 * (the total item's, and the writer partitions', keys.ts `webhookCounterPartitions`: each takes
 * about half the writes), summed as {@link sumCounters} does, plus one BatchGetItem of the
 * eight shard items written before writers (so an existing deployment's counts survive), checked
 * against folds by the total's version (./webhook-counter-items.ts). Writer
 * items of gone containers must not make reads grow for ever: a read hands the items idle for
 * {@link FOLD_IDLE_MS} to {@link foldWriters}, which adds them into the total item and deletes
 * them, one transaction (per read, at most 99 writers; a cost per container lifetime, not per
 * delivery). The rule that keeps a fold from letting a repeat count twice: an update is never sent
 * more than {@link MAX_RETRY_AGE_MS} after its first try (then it is dropped, its counts lost, as a
 * crash loses them), and a fold takes only items untouched for {@link FOLD_IDLE_MS}, far longer, so
 * a repeat can never meet a folded (deleted) item whose `seq` it had already advanced.
 *
 * Counting stays once per delivery: a delivery counts only when its conditional record write
 * succeeded, which happens once. An invocation that dies between writing its records and flushing
 * (milliseconds; a crash or a timeout) loses the counts of that batch, and never counts them twice.
 * The counters take one write per writer and batch: 0.1 write units per delivery at 10 jobs a
 * batch, spread over the writer partitions (0.05 each), and DynamoDB's 1,000 write units per
 * second per partition key
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html)
 * allow about 20,000 deliveries per second to one webhook.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isRetryableDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { ddb, isConditionFailed, isTransactionConflict, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { max, mergeCounters, num, sumCounters, type WebhookStatusItem } from '../rules/webhook-counter-sums';
import { counterItems } from './webhook-counter-items';

export { COUNTER_SHARDS, deleteWebhookStatus } from './webhook-counter-items';

/** An update not written this long after its first try is dropped (its counts lost), never sent again. */
export const MAX_RETRY_AGE_MS = 10 * 60_000;
/** A writer item untouched this long is folded into the total by the next read: six times {@link MAX_RETRY_AGE_MS}, so clocks may disagree by 50 minutes. */
export const FOLD_IDLE_MS = 60 * 60_000;
/** Writer items one fold takes (TransactWriteItems takes 100 items: these and the total). */
const FOLD_MAX = 99;

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
  /** A hook that published nothing (the namespace's publish rate limit refused it), and why. */
  hookFailure?: { at: number; message: string };
}

/** A delta summed per webhook: the counts always present. */
export type SummedDelta = Required<Pick<CountDelta, 'success' | 'failure' | 'pending'>> & Omit<CountDelta, 'success' | 'failure' | 'pending'> & { hookFailures?: number };

interface Pending { ns: string; webhookId: string; d: SummedDelta }

let buffer = new Map<string, Pending>();

const later = <T extends { at: number }>(a: T | undefined, b: T | undefined) => (!a ? b : !b ? a : b.at >= a.at ? b : a);

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
  p.d.error = later(p.d.error, d.error);
  if (d.hookFailure) {
    p.d.hookFailures = (p.d.hookFailures ?? 0) + 1;
    p.d.hookFailure = later(p.d.hookFailure, d.hookFailure);
  }
  buffer.set(k, p);
}

/** The id a delivery's failure is held apart by: its namespace, webhook incarnation and message. */
export const deliveryCountId = (ns: string, webhookId: string, messageId: string) => JSON.stringify([ns, webhookId, messageId]);

/** A failure's delta held apart from the buffer (see {@link countApart}); `ref` names its record. */
export interface ApartDelta<R = unknown> { id: string; ref: R; ns: string; webhookId: string; d: CountDelta }

let apart: ApartDelta[] = [];

/**
 * Adds a delivery's failure like {@link countLater}, but held apart until the run's delivery-log
 * pages are written: the run takes out ({@link takeApart}) those whose page or retained copy
 * could not be kept, so the status never counts a failure a bulk replay cannot find yet.
 */
export function countApart<R>(a: ApartDelta<R>): void {
  apart.push(a);
}

/** Takes the failures held apart whose ids are in `ids`; the others join the buffer (written by the next {@link flushCounts}). */
export function takeApart<R>(ids: ReadonlySet<string>): ApartDelta<R>[] {
  const all = apart;
  apart = [];
  for (const a of all) if (!ids.has(a.id)) countLater(a.ns, a.webhookId, a.d);
  return all.filter((a) => ids.has(a.id)) as ApartDelta<R>[];
}

/**
 * The conditional UpdateItem of one webhook's summed delta, flush `seq` of `writer` at `now` (built
 * apart from sending, for unit tests). Its condition fails only if the writer's item has `seq` or
 * a later one: this very update was applied (the writer sends its updates to an item in order).
 */
export function counterUpdate(ns: string, webhookId: string, d: SummedDelta, writer: string, seq: number, now: number) {
  const adds: string[] = [];
  const sets: string[] = [];
  const v: Record<string, unknown> = {};
  const add = (attr: string, n: number | undefined) => {
    if (!n) return;
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
  add('hook_failure_count', d.hookFailures);
  set('last_delivery', d.at);
  set('last_success_at', d.successAt);
  set('last_error', d.error?.message);
  set('last_error_at', d.error?.at);
  set('next_retry', d.nextRetry);
  set('last_hook_error', d.hookFailure?.message);
  set('last_hook_failure', d.hookFailure?.at);
  if (!adds.length && !sets.length) return undefined;
  return {
    TableName: tableName('meta'),
    Key: metaKeys.webhookCounterWriter(ns, webhookId, writer),
    UpdateExpression: `SET #seq = :seq, written_at = :now${sets.length ? `, ${sets.join(', ')}` : ''}${adds.length ? ` ADD ${adds.join(', ')}` : ''}`,
    ConditionExpression: 'attribute_not_exists(#seq) OR #seq < :seq',
    ExpressionAttributeNames: { '#seq': 'seq' },
    ExpressionAttributeValues: { ...v, ':seq': seq, ':now': now },
  };
}

type Update = NonNullable<ReturnType<typeof counterUpdate>>;

/** One update of a writer's item, kept until it is written (or too old to send). */
interface Entry { u: Update; firstTry: number }

/**
 * A flush chain: one flush at a time holds it. `queues` holds, per writer item, the updates not
 * yet known to be written, in `seq` order: they go before anything later of this writer.
 */
interface Writer { id: string; seq: number; queues: Map<string, Entry[]> }

/** This container's id: writer items of containers gone stay until a read folds them. */
const CONTAINER = randomUUID().replace(/-/g, '');
const idle: Writer[] = [];
let writers = 0;

/** A writer no other flush holds; one with updates waiting first, so they are not left behind. */
function takeWriter(): Writer {
  const i = idle.findIndex((w) => w.queues.size > 0);
  if (i >= 0) return idle.splice(i, 1)[0];
  return idle.pop() ?? { id: `${CONTAINER}#${writers++}`, seq: 0, queues: new Map() };
}

/**
 * 8 tries span 12.7 s of waits: a flush outlasts a short outage or a run of throttles. A plain write
 * to an item a transaction (a fold) holds fails with TransactionConflictException and is sent again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 */
const FLUSH_RETRIES = { tries: 8, firstDelayMs: 100, retryIf: (e: unknown) => isRetryableDependencyFailure(e) || (e as { name?: string })?.name === 'TransactionConflictException' };

/** Applies one update at most once: a failed condition means this update was applied before. */
async function applyOnce(u: Update): Promise<void> {
  try {
    await ddb().send(new UpdateCommand(u));
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** Sends one item's queue in order; stops at the first update that cannot be written (it and the rest stay). Returns the updates dropped as too old. */
async function sendQueue(q: Entry[], now: () => number): Promise<number> {
  let dropped = 0;
  while (q.length) {
    if (now() - q[0].firstTry > MAX_RETRY_AGE_MS) {
      q.shift();
      dropped++;
      continue;
    }
    await withRetries(() => applyOnce(q[0].u), FLUSH_RETRIES);
    q.shift();
  }
  return dropped;
}

/**
 * Writes the buffered counts, one conditional UpdateItem per webhook on this flush's writer item
 * (retried about 13 s while the failure is one the next call may not meet), after any update of
 * the writer still waiting for the same item. Throws after trying every item if some could not be
 * written (they wait for the writer's next flush) or were dropped (older than
 * {@link MAX_RETRY_AGE_MS}: their counts are lost, never counted twice).
 */
export async function flushCounts(now: () => number = Date.now): Promise<void> {
  const taken = [...buffer.values()];
  buffer = new Map();
  const w = takeWriter();
  try {
    if (taken.length) {
      const seq = ++w.seq;
      const t = now();
      for (const p of taken) {
        const u = counterUpdate(p.ns, p.webhookId, p.d, w.id, seq, t);
        if (!u) continue;
        const k = `${p.ns}\u0000${p.webhookId}`;
        const q = w.queues.get(k) ?? [];
        q.push({ u, firstTry: t });
        w.queues.set(k, q);
      }
    }
    if (!w.queues.size) return;
    const queues = [...w.queues];
    const results = await Promise.allSettled(queues.map(([, q]) => sendQueue(q, now)));
    for (const [k, q] of queues) if (!q.length) w.queues.delete(k);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const dropped = results.reduce((n, r) => n + (r.status === 'fulfilled' ? r.value : 0), 0);
    if (failed.length || dropped) {
      const waiting = [...w.queues.values()].reduce((n, q) => n + q.length, 0);
      const parts = [
        failed.length ? `${waiting} counter updates not written (${(failed[0].reason as Error)?.message}); the next flush of this container sends them again, for ${MAX_RETRY_AGE_MS / 60_000} minutes from their first try` : '',
        dropped ? `${dropped} counter updates dropped after ${MAX_RETRY_AGE_MS / 60_000} minutes unwritten: those deliveries are missing from the status counts; check DynamoDB's availability and throttling` : '',
      ];
      throw new Error(parts.filter(Boolean).join('; '));
    }
  } finally {
    idle.push(w);
  }
}

/** Writer items a read found idle for {@link FOLD_IDLE_MS}, to fold into the total ({@link foldWriters}). */
export interface FoldPlan { ns: string; webhookId: string; total?: Record<string, unknown>; writers: Record<string, unknown>[] }

/** The writer items of `partition` (the items of every counter partition) to fold at `now` (at most 99), or undefined when none is idle. */
export function foldPlan(ns: string, webhookId: string, partition: Record<string, unknown>[], now: number): FoldPlan | undefined {
  const total = metaKeys.webhookStatus(ns, webhookId);
  const writerPrefix = `${metaKeys.webhookCounterPrefix}#W#`;
  const writers = partition.filter((i) => String(i.sk).startsWith(writerPrefix) && (num(i.written_at) ?? 0) < now - FOLD_IDLE_MS).slice(0, FOLD_MAX);
  if (!writers.length) return undefined;
  return { ns, webhookId, total: partition.find((i) => i.pk === total.pk && i.sk === total.sk), writers };
}

/**
 * Adds idle writers into the total and deletes them, in one transaction: each writer only if its
 * `seq` is still the one read (a writer that wrote since keeps its item), the total only if no
 * other fold changed it since (`fold_version`). A failed condition or a conflict folds nothing;
 * the next read tries again.
 */
export async function foldWriters(p: FoldPlan): Promise<'folded' | 'changed'> {
  const merged = mergeCounters([...(p.total ? [p.total] : []), ...p.writers]);
  const version = num(p.total?.fold_version) ?? 0;
  const names: Record<string, string> = { '#v': 'fold_version' };
  // ':v' only where the condition names it (DynamoDB refuses values an expression does not use).
  const values: Record<string, unknown> = { ':next': version + 1, ...(version ? { ':v': version } : {}) };
  const sets = ['#v = :next'];
  Object.entries(merged).forEach(([k, v], i) => {
    names[`#a${i}`] = k;
    values[`:a${i}`] = v;
    sets.push(`#a${i} = :a${i}`);
  });
  try {
    await ddb().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName('meta'),
              Key: metaKeys.webhookStatus(p.ns, p.webhookId),
              UpdateExpression: `SET ${sets.join(', ')}`,
              ConditionExpression: version ? '#v = :v' : 'attribute_not_exists(#v)',
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
            },
          },
          ...p.writers.map((w) => ({
            Delete: {
              TableName: tableName('meta'),
              Key: { pk: w.pk, sk: w.sk },
              ConditionExpression: '#seq = :seq',
              ExpressionAttributeNames: { '#seq': 'seq' },
              ExpressionAttributeValues: { ':seq': w.seq },
            },
          })),
        ],
      }),
    );
    return 'folded';
  } catch (e) {
    if (isConditionFailed(e) || isTransactionConflict(e)) return 'changed';
    throw e;
  }
}

/**
 * Epoch ms of the webhook's latest success as its counters hold it (each batch's successes are
 * written at the batch's end), or undefined when none was counted. Strongly consistent reads of the counter partitions, made at once.
 */
export async function lastSuccessAt(ns: string, webhookId: string): Promise<number | undefined> {
  const { partition, shards } = await counterItems(ns, webhookId);
  return num(mergeCounters([...partition, ...shards]).last_success_at);
}

/** The counters of a webhook incarnation, and the writers a fold should take now (if any). */
export async function readWebhookCounters(ns: string, webhookId: string, now = Date.now()): Promise<{ status: WebhookStatusItem; fold?: FoldPlan }> {
  const { partition, shards } = await counterItems(ns, webhookId);
  return { status: sumCounters([...partition, ...shards]), fold: foldPlan(ns, webhookId, partition, now) };
}

/** The counters of a webhook incarnation (read strongly consistently and summed). */
export async function getWebhookStatus(ns: string, webhookId: string): Promise<WebhookStatusItem> {
  return (await readWebhookCounters(ns, webhookId)).status;
}

/** Counts at once (tests and tools; deliveries go through their record): this container's next flush, now. */
export async function countNow(ns: string, webhookId: string, d: CountDelta): Promise<void> {
  countLater(ns, webhookId, d);
  await flushCounts();
}

/** Records a hook that published nothing (the namespace's publish rate limit refused it), written with the run's next flush. */
export function recordHookFailure(ns: string, webhookId: string, error: string, now: number): void {
  countLater(ns, webhookId, { hookFailure: { at: now, message: error } });
}
