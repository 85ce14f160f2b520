/**
 * Quotas on what a namespace holds for long delays and on its schedule runs per minute (the
 * limits and their defaults: ../domain/resource-limits.ts; an operator sets them with
 * `npm run admin -- resource-limit set`).
 *
 * Held messages: one counter item per namespace on the meta table (`n` messages, `bytes` of
 * payload), reserved with one conditional UpdateItem before a publish holds anything (so a refused
 * publish stores nothing), given back when a held message leaves: handed over (one update per
 * namespace per page of the tick), cancelled, or not stored. A condition expression cannot add
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html
 * has comparisons, no arithmetic), so the code compares with the limit minus the reservation.
 *
 * Schedule runs: a per-minute counter like the API's rate counters (./rate-limits.ts), category
 * `schedule-runs`.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, updateOnce } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { namespaceCaps, type NamespaceCaps } from '../../core/storage/resource-limits';
import { countRequest } from './rate-limits';
import { windowOf } from '../../core/rules/rate-limits';
import { heldLimitExceeded, scheduleRunsLimitExceeded } from '../../core/rules/resource-limits';

/** How long a container trusts a namespace's caps (as the rate limiter trusts its limits). */
const CAPS_CACHE_MS = 10_000;
const capsCache = new Map<string, { at: number; caps: Promise<NamespaceCaps> }>();

/** The namespace's caps, one read for all the runs of a tick that ask at once (the promise is cached, a failed read is not). */
function cachedCaps(ns: string, now: number): Promise<NamespaceCaps> {
  const hit = capsCache.get(ns);
  if (hit && now - hit.at >= 0 && now - hit.at < CAPS_CACHE_MS) return hit.caps;
  const caps = namespaceCaps(ns);
  if (capsCache.size >= 1000) capsCache.delete(capsCache.keys().next().value as string);
  capsCache.set(ns, { at: now, caps });
  caps.catch(() => capsCache.get(ns)?.caps === caps && capsCache.delete(ns));
  return caps;
}

export interface HeldUsage {
  messages: number;
  bytes: number;
}

/** What the namespace holds (strongly consistent). */
export async function heldUsage(ns: string): Promise<HeldUsage> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.heldCount(ns), ConsistentRead: true }));
  return { messages: Math.max(0, Number(out.Item?.n ?? 0)), bytes: Math.max(0, Number(out.Item?.bytes ?? 0)) };
}

/** Reserves room for `count` held messages of `bytes` in all; throws 409 LIMIT_EXCEEDED (reserving nothing) beyond the namespace's quotas. */
export async function reserveHeld(ns: string, count: number, bytes: number, now: number): Promise<void> {
  if (count <= 0) return;
  const caps = await cachedCaps(ns, now);
  const maxN = caps['held-messages'] - count;
  const maxB = caps['held-bytes'] - bytes;
  if (maxN < 0) throw heldLimitExceeded('held-messages', caps['held-messages'], 0);
  if (maxB < 0) throw heldLimitExceeded('held-bytes', caps['held-bytes'], 0);
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.heldCount(ns),
        UpdateExpression: 'ADD n :n, #b :b',
        ConditionExpression: '(attribute_not_exists(n) OR n <= :maxN) AND (attribute_not_exists(#b) OR #b <= :maxB)',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': count, ':b': bytes, ':maxN': maxN, ':maxB': maxB },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refused item comes back in DynamoDB JSON (the document client does not convert it).
    const item = (e as { Item?: Record<string, { N?: string }> }).Item ?? {};
    const held = { n: Number(item.n?.N ?? 0), bytes: Number(item.bytes?.N ?? 0) };
    if (held.n > maxN) throw heldLimitExceeded('held-messages', caps['held-messages'], held.n);
    throw heldLimitExceeded('held-bytes', caps['held-bytes'], held.bytes);
  }
}

/**
 * Gives back the room of `count` held messages of `bytes` (delivered, cancelled, or not stored).
 * `once`: applied once even when its answer is lost and the SDK sends it again (./client.ts
 * updateOnce; a cancel gives back with it, since it records each give-back as done only after it).
 */
export async function releaseHeld(ns: string, count: number, bytes: number, opts: { once?: boolean } = {}): Promise<void> {
  if (count <= 0) return;
  const update = {
    TableName: tableName('meta'),
    Key: metaKeys.heldCount(ns),
    UpdateExpression: 'ADD n :n, #b :b',
    ExpressionAttributeNames: { '#b': 'bytes' },
    ExpressionAttributeValues: { ':n': -count, ':b': -bytes },
  };
  await (opts.once ? updateOnce(update) : ddb().send(new UpdateCommand(update)));
}

/** Counts one schedule run of the namespace in the minute of `now`; throws 409 LIMIT_EXCEEDED over its runs per minute. */
export async function spendScheduleRun(ns: string, now: number): Promise<void> {
  const limit = (await cachedCaps(ns, now))['schedule-runs-per-minute'];
  const r = await countRequest({ namespace: ns, category: 'schedule-runs', window: windowOf(now), limit });
  if (!r.accepted) throw scheduleRunsLimitExceeded(limit);
}
