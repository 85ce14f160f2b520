/**
 * Rate-limit counters on the meta table: one item per namespace, category and one-minute window,
 * counted with one conditional UpdateItem per request. The condition makes the count exact under
 * any concurrency: DynamoDB applies conditional updates of one item one at a time, so at most
 * `limit` requests of a window see `count < limit`, and a refused update changes nothing.
 */
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';
import { counterTtl, type PortalCounter, type RateWindow } from '../domain/rate-limits';
import { FANOUT_CATEGORY, roomBefore } from '../domain/fanout-writes';
import type { RateCategory } from '../domain/routes';
import { getNamespace } from './namespaces';

export interface CounterRequest {
  namespace: string;
  /**
   * A request category, an application's portal counter of one (domain/rate-limits.ts
   * `counterCategory`), 'schedule-runs' (the runs the tick makes, lambda/storage/held-quota.ts) or
   * 'fanout' (writes, lambda/publishing/write-budget.ts).
   */
  category: RateCategory | PortalCounter | 'schedule-runs' | typeof FANOUT_CATEGORY;
  window: RateWindow;
  limit: number;
}

export interface CounterResult {
  accepted: boolean;
  /**
   * Requests counted in the window after this one: the new count when accepted; when refused,
   * at least `limit` (the exact value is not read back, which would cost capacity on every 429).
   */
  count: number;
}

/**
 * The UpdateItem that counts one request (separate from sending it, so unit tests assert the
 * exact parameters). `ADD` creates the item at 1; `ttl` lets DynamoDB delete it after the window.
 */
export function countRequestParams(r: CounterRequest, table = tableName('meta')): UpdateCommandInput {
  return {
    TableName: table,
    Key: metaKeys.rateCounter(r.namespace, r.category, r.window.start),
    UpdateExpression: 'ADD #c :one SET #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#c) OR #c < :limit',
    ExpressionAttributeNames: { '#c': 'count', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':one': 1, ':limit': r.limit, ':ttl': counterTtl(r.window) },
    ReturnValues: 'UPDATED_NEW',
  };
}

/** Counts one request unless the window's count has reached the limit. One DynamoDB call. */
export async function countRequest(r: CounterRequest): Promise<CounterResult> {
  // A limit below 1 admits nothing; `attribute_not_exists` would otherwise let the first one in.
  if (r.limit < 1) return { accepted: false, count: 0 };
  try {
    const out = await ddb().send(new UpdateCommand(countRequestParams(r)));
    return { accepted: true, count: Number(out.Attributes?.count ?? 1) };
  } catch (e) {
    if (isConditionFailed(e)) return { accepted: false, count: r.limit };
    throw e;
  }
}

export interface WritesCharge {
  namespace: string;
  window: RateWindow;
  /** The namespace's fan-out budget a window (domain/fanout-writes.ts). */
  limit: number;
  /** Writes this publish call causes: messages x bindings reached. */
  writes: number;
}

/**
 * The UpdateItem that charges one publish call's writes to the window's fan-out counter: one
 * atomic `ADD` of all of them, admitted only while the count before it is at most
 * `limit - writes`, so the count never passes the limit and a refused call adds nothing.
 */
export function chargeWritesParams(r: WritesCharge, table = tableName('meta')): UpdateCommandInput {
  return {
    TableName: table,
    Key: metaKeys.rateCounter(r.namespace, FANOUT_CATEGORY, r.window.start),
    UpdateExpression: 'ADD #c :n SET #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#c) OR #c <= :room',
    ExpressionAttributeNames: { '#c': 'count', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':n': r.writes, ':room': roomBefore(r.limit, r.writes), ':ttl': counterTtl(r.window) },
    ReturnValues: 'UPDATED_NEW',
  };
}

/**
 * Charges a publish call's writes to the namespace's fan-out budget of the window, or refuses
 * them all. One DynamoDB call (none for a call over the whole budget, which can never fit).
 */
export async function chargeWrites(r: WritesCharge): Promise<CounterResult> {
  if (r.writes > r.limit) return { accepted: false, count: 0 };
  try {
    const out = await ddb().send(new UpdateCommand(chargeWritesParams(r)));
    return { accepted: true, count: Number(out.Attributes?.count ?? r.writes) };
  } catch (e) {
    if (isConditionFailed(e)) return { accepted: false, count: r.limit };
    throw e;
  }
}

/**
 * The window's count without counting (for answers that must show the headers but are refused
 * before the limiter, such as 403). Eventually consistent: half the read cost, and headers are
 * advisory.
 */
export async function peekCount(r: Omit<CounterRequest, 'limit'>): Promise<number> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName('meta'), Key: metaKeys.rateCounter(r.namespace, r.category, r.window.start) }),
  );
  return Number(out.Item?.count ?? 0);
}

/** The namespace's stored limit overrides (undefined when it has none). */
export async function namespaceLimitOverrides(namespace: string): Promise<Partial<Record<RateCategory | 'portal', number>> | undefined> {
  return (await getNamespace(namespace))?.limits;
}
