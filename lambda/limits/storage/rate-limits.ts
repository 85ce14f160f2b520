/**
 * Rate-limit counters on the meta table: one item per namespace, category and one-minute window,
 * counted with one conditional UpdateItem per request. The condition makes the count exact under
 * any concurrency: DynamoDB applies conditional updates of one item one at a time, so at most
 * `limit` requests of a window see `count < limit`, and a refused update changes nothing.
 *
 * One item takes about 1,000 write units a second, as any partition key
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * A limit raised above {@link COUNTER_KEY_REQUESTS_PER_WINDOW} a minute (half of what one key
 * takes) is split over several items whose limits add up to it exactly ({@link counterShards}): a
 * request counts on one at random and, when that one is full, on one other. The window's total
 * never passes the limit; near it, a request may be refused while a third item still has room
 * (docs/design/0025-consume-cost-and-keys.md). The default limits (DESIGN.md section 10) stay on
 * one item.
 *
 * The `publish` counter's item (item 0 when split) also holds the namespace's fan-out budget of the
 * window, attribute `fanout`: an API publish counts its request and charges its writes there in
 * one UpdateItem ({@link countAndCharge}).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { counterTtl, type PortalCounter, type RateWindow } from '../../core/rules/rate-limits';
import { FANOUT_CATEGORY, roomBefore } from '../../core/rules/fanout-writes';
import type { RateCategory } from '../../core/rules/routes';
import { getNamespace } from '../../namespaces/storage/namespaces';

export interface CounterRequest {
  namespace: string;
  /**
   * A request category, an application's portal counter of one (domain/rate-limits.ts
   * `counterCategory`), 'schedule-runs' (the runs the tick makes, lambda/limits/storage/held-quota.ts) or
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

/** Requests a window's counter item takes before a limit is split over more items: half a key's 1,000 writes a second, for a minute. */
const COUNTER_KEY_REQUESTS_PER_WINDOW = 30_000;
/** Items a window's counter is split over at most (64,000 writes a second). */
const MAX_COUNTER_SHARDS = 64;

/**
 * Items a counter of `limit` is split over: one per {@link COUNTER_KEY_REQUESTS_PER_WINDOW}.
 * @example counterShards(500) // 1
 * @example counterShards(100_000) // 4
 */
export const counterShards = (limit: number, perKey = COUNTER_KEY_REQUESTS_PER_WINDOW) => Math.min(MAX_COUNTER_SHARDS, Math.max(1, Math.ceil(limit / perKey)));

/** Item `i`'s share of `limit`: the limit split as evenly as whole requests allow, adding up to it exactly. */
export function counterShardLimit(limit: number, i: number, perKey = COUNTER_KEY_REQUESTS_PER_WINDOW): number {
  const n = counterShards(limit, perKey);
  return Math.floor(limit / n) + (i < limit % n ? 1 : 0);
}

/** The key of a window counter's item `shard` (item 0 is the one an unsplit limit uses). */
export function counterKey(r: Pick<CounterRequest, 'namespace' | 'category' | 'window'>, shard = 0) {
  const key = metaKeys.rateCounter(r.namespace, r.category, r.window.start);
  return shard === 0 ? key : { ...key, pk: `${key.pk}#${shard}` };
}

/**
 * The UpdateItem that counts one request (separate from sending it, so unit tests assert the
 * exact parameters). `ADD` creates the item at 1; `ttl` lets DynamoDB delete it after the window.
 * `r.limit` is the limit of the item `shard`.
 */
export function countRequestParams(r: CounterRequest, table = tableName('meta'), shard = 0): UpdateCommandInput {
  return {
    TableName: table,
    Key: counterKey(r, shard),
    UpdateExpression: 'ADD #c :one SET #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#c) OR #c < :limit',
    ExpressionAttributeNames: { '#c': 'count', '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':one': 1, ':limit': r.limit, ':ttl': counterTtl(r.window) },
    ReturnValues: 'UPDATED_NEW',
  };
}

/**
 * Counts one request unless the window's count has reached the limit. One DynamoDB call (two when
 * a split limit's first item is full). The count of a split limit is its item's count times the
 * items (for the headers, which are advisory). `perKey` is for tests.
 */
export async function countRequest(r: CounterRequest, perKey = COUNTER_KEY_REQUESTS_PER_WINDOW): Promise<CounterResult> {
  // A limit below 1 admits nothing; `attribute_not_exists` would otherwise let the first one in.
  if (r.limit < 1) return { accepted: false, count: 0 };
  const n = counterShards(r.limit, perKey);
  const first = Math.floor(Math.random() * n);
  const tries = n > 1 ? [first, (first + 1 + Math.floor(Math.random() * (n - 1))) % n] : [first];
  for (const shard of tries) {
    try {
      const out = await ddb().send(new UpdateCommand(countRequestParams({ ...r, limit: counterShardLimit(r.limit, shard, perKey) }, tableName('meta'), shard)));
      return { accepted: true, count: Math.min(r.limit, Number(out.Attributes?.count ?? 1) * n) };
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
    }
  }
  return { accepted: false, count: r.limit };
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
 * The fan-out budget is the attribute `fanout` of the window's `publish` counter item (its item 0
 * when the request limit is split), so that an API publish counts its request and charges its
 * writes in one UpdateItem ({@link countAndChargeParams}); the service's own publishers charge the
 * attribute alone ({@link chargeWritesParams}). It once had an item of its own: two writes per call.
 */
const FANOUT_ATTRIBUTE = 'fanout';
const fanoutKey = (r: Pick<WritesCharge, 'namespace' | 'window'>) => counterKey({ namespace: r.namespace, category: 'publish', window: r.window });

/**
 * The UpdateItem that charges one publish call's writes to the window's fan-out budget: one
 * atomic `ADD` of all of them, admitted only while the budget's count before it is at most
 * `limit - writes`, so the count never passes the limit and a refused call adds nothing.
 */
export function chargeWritesParams(r: WritesCharge, table = tableName('meta')): UpdateCommandInput {
  return {
    TableName: table,
    Key: fanoutKey(r),
    UpdateExpression: 'ADD #f :n SET #ttl = :ttl',
    ConditionExpression: 'attribute_not_exists(#f) OR #f <= :room',
    ExpressionAttributeNames: { '#f': FANOUT_ATTRIBUTE, '#ttl': 'ttl' },
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
    return { accepted: true, count: Number(out.Attributes?.[FANOUT_ATTRIBUTE] ?? r.writes) };
  } catch (e) {
    if (isConditionFailed(e)) return { accepted: false, count: r.limit };
    throw e;
  }
}

/**
 * Gives back writes charged to the window's fan-out budget by a publish refused after its charge
 * (the held-message quota's 409): an unconditional `ADD` of their negative.
 */
export async function refundWrites(r: Omit<WritesCharge, 'limit'>): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: fanoutKey(r),
      UpdateExpression: 'ADD #f :n',
      ExpressionAttributeNames: { '#f': FANOUT_ATTRIBUTE },
      ExpressionAttributeValues: { ':n': -r.writes },
    }),
  );
}

export interface RequestAndWrites extends WritesCharge {
  /** The `publish` limit of the counter's item 0 (the whole limit when it is not split). */
  requestLimit: number;
  /** This call's id, the same for every try of its write ({@link countAndCharge}). */
  call: string;
}

/** What one write counting a request with its writes did; refused, which of the two limits refused it (the request's first, as it is checked first). */
export type RequestAndWritesResult = { accepted: true; count: number } | { accepted: false; refused: 'publish' | typeof FANOUT_CATEGORY };

/**
 * The UpdateItem that counts one publish request and charges its writes on the same item, admitted
 * only while both fit: `count < requestLimit` and `fanout <= limit - writes`. A refused update
 * changes nothing and hands back the item as its condition saw it (`ALL_OLD`, at no extra cost:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html#DDB-UpdateItem-request-ReturnValuesOnConditionCheckFailure),
 * which tells the two limits apart.
 */
export function countAndChargeParams(r: RequestAndWrites, table = tableName('meta')): UpdateCommandInput {
  return {
    TableName: table,
    Key: fanoutKey(r),
    UpdateExpression: 'ADD #c :one, #f :n SET #ttl = :ttl, #last = :call',
    ConditionExpression: '(attribute_not_exists(#c) OR #c < :limit) AND (attribute_not_exists(#f) OR #f <= :room) AND (attribute_not_exists(#last) OR #last <> :call)',
    ExpressionAttributeNames: { '#c': 'count', '#f': FANOUT_ATTRIBUTE, '#ttl': 'ttl', '#last': 'last' },
    ExpressionAttributeValues: { ':one': 1, ':limit': r.requestLimit, ':n': r.writes, ':room': roomBefore(r.limit, r.writes), ':ttl': counterTtl(r.window), ':call': r.call },
    ReturnValues: 'UPDATED_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/** A number attribute of an item handed back with a failed condition: DynamoDB JSON (the document client does not convert it), or plain. */
const numberOf = (v: unknown): number => Number((v as { N?: string } | undefined)?.N ?? v ?? 0);

/** A string attribute of an item handed back with a failed condition (DynamoDB JSON, or plain). */
const stringOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : (v as { S?: string } | undefined)?.S);

/**
 * Counts one publish request and charges its writes in one DynamoDB call, or neither. The caller
 * makes sure the writes can fit the whole budget (`writes <= limit`) and the request limit is at
 * least 1.
 *
 * The write is retried by the SDK when its answer is lost (a 500 or a timeout after DynamoDB
 * applied it), and an ADD applied twice counts twice. So it also sets `last` to the call's id,
 * and is conditional on `last` not being it: a retry that meets its own applied try is refused,
 * and the refusal's item (`ALL_OLD`) names this call, so it answers accepted. This costs no read
 * and no write unit (some 45 bytes on an item well under 1 KB), on the hottest write of the
 * service; but `last` holds only the latest writer: when another publish of the namespace writes
 * between the applied try and its retry, the retry counts again. Bound (docs/rate-limits.md
 * "Failures"): a publish whose answers are lost counts at most once per try the SDK makes of its
 * write (4 were seen when every try timed out), so 429s come earlier, never later.
 */
export async function countAndCharge(q: Omit<RequestAndWrites, 'call'>): Promise<RequestAndWritesResult> {
  const r: RequestAndWrites = { ...q, call: randomUUID() };
  try {
    const out = await ddb().send(new UpdateCommand(countAndChargeParams(r)));
    return { accepted: true, count: Number(out.Attributes?.count ?? 1) };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const old = (e as { Item?: Record<string, unknown> }).Item ?? {};
    if (stringOf(old.last) === r.call) return { accepted: true, count: numberOf(old.count) };
    return { accepted: false, refused: numberOf(old.count) >= r.requestLimit ? 'publish' : FANOUT_CATEGORY };
  }
}

/**
 * The window's count without counting (for answers that must show the headers but are refused
 * before the limiter, such as 403). Eventually consistent: half the read cost, and headers are
 * advisory.
 */
export async function peekCount(r: Omit<CounterRequest, 'limit'> & { limit?: number }): Promise<number> {
  const n = r.limit === undefined ? 1 : counterShards(r.limit);
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey(r) }));
  // A split limit: its first item's count times the items, an estimate (headers are advisory).
  return Number(out.Item?.count ?? 0) * n;
}

/** The namespace's stored limit overrides (undefined when it has none). */
export async function namespaceLimitOverrides(namespace: string): Promise<Partial<Record<RateCategory | 'portal', number>> | undefined> {
  return (await getNamespace(namespace))?.limits;
}
