/**
 * State of the per-webhook delivery limits, shared by every delivery container
 * and the retry workflow. Written only for webhooks that set a limit: a webhook without
 * `rate_limit` or `max_in_flight` never touches these items.
 *
 * - Rate: one item per webhook incarnation numbers the delivery slots of the rate (slot j is at
 *   `epoch + j / rate_limit` seconds). A take reserves the next k slots in one UpdateItem (1 WCU
 *   for the jobs of one webhook in a batch) and each job goes at its slot's time: now, or later
 *   (it waits once, on the queue or in the workflow, and then goes without reserving again). So
 *   deliveries are spread at the rate in the order they reserved, and a backlog is not received
 *   again and again while it waits. When the slots fell behind the clock (the webhook was idle)
 *   or a newer version of the webhook changed the rate, the numbering starts again from now (one
 *   conditional write); the item notes the version it numbers under (see reserveRateSlots). A
 *   slot a job carried back from waiting is claimed before its request (claimRateSlot).
 * - In flight: one item per webhook incarnation holding a map of lease id → expiry (ms), like the
 *   long-poll slots (./long-poll-slots.ts): a take reads it (strongly consistent, 0.5 RCU), counts
 *   the live leases and adds its own under the version it read (1 WCU); a release removes them
 *   (1 WCU). A lease expires after its request's timeout and a margin, so a crashed container
 *   holds its slots no longer than that.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { ttlSeconds } from '../../core/storage/keys';

const limitKeys = {
  rate: (ns: string, webhookId: string) => ({ pk: `NS#${ns}#WHRATE#${webhookId}`, sk: '#RATE' }),
  inFlight: (ns: string, webhookId: string) => ({ pk: `NS#${ns}#WHINFL#${webhookId}`, sk: '#LEASES' }),
  /** One item per slot a job carried back from waiting (a partition per slot: never the rate item's). */
  slotClaim: (ns: string, webhookId: string, at: number) => ({ pk: `NS#${ns}#WHSLOT#${webhookId}#${at}`, sk: '#CLAIM' }),
};

/**
 * Slots behind the clock are not handed out: the numbering starts again from now. A second's worth
 * of slots behind it (the earlier allowance) went out at once, up to twice `rate_limit` requests
 * in one second (found by test/model/webhooks-health.model.test.ts). Renumbering only when the
 * next slot is behind the clock keeps every two slots at least 1/rate apart: the last one handed
 * out is then more than 1/rate before now.
 */
const STALE_MS = 0;

interface RateItem {
  n: number;
  epoch: number;
  rate?: number;
  /** The version of the webhook's rate (./webhooks.ts `rateVersion`) whose `rate_limit` numbers the slots (absent on older items: 0). */
  of?: number;
  /** How many times the slots were numbered again (absent before the first renumbering). */
  g?: number;
}

/**
 * Reserves `wanted` slots of the webhook's rate; returns their times (epoch ms), in order, or none
 * when other takes kept changing the numbering for a few rounds (the jobs wait and try again). `of` is
 * the version of the rate (`rateVersion`) of the webhook read that gave `rate`. The item numbers its slots under
 * one version: a reservation under a newer version with another rate numbers them again from now
 * (a lowered limit applies from the change on), and one under an older version (a batch that read
 * the webhook just before a change) takes slots at the item's newer rate and never numbers them
 * back to the old one, so two schedules never run at once.
 */
export async function reserveRateSlots(ns: string, webhookId: string, rate: number, wanted: number, of = 0, now: () => number = Date.now): Promise<number[]> {
  const Key = limitKeys.rate(ns, webhookId);
  const ttl = () => ttlSeconds(now() + 24 * 3600 * 1000);
  for (let round = 0; ; round++) {
    const t = now();
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key,
        UpdateExpression: 'ADD n :k SET epoch = if_not_exists(epoch, :now), rate = if_not_exists(rate, :rate), #of = if_not_exists(#of, :of), #ttl = :ttl',
        ExpressionAttributeNames: { '#ttl': 'ttl', '#of': 'of' },
        ExpressionAttributeValues: { ':k': wanted, ':now': t, ':rate': rate, ':of': of, ':ttl': ttl() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const item = out.Attributes as RateItem;
    // Judged by the clock once the write is known applied: a request that reached the table late
    // (under load) must not take slots that were behind the clock by then, nor number them again
    // from a time before its write (every slot up to the write's time would go at once).
    const t2 = now();
    const itemOf = item.of ?? 0;
    // Under the newest version known, the item's or this caller's.
    const [r, o] = of < itemOf ? [item.rate ?? rate, itemOf] : [rate, of];
    const first = item.n - wanted;
    const times = Array.from({ length: wanted }, (_, j) => item.epoch + ((first + j) * 1000) / r);
    if (item.rate === r && o === itemOf && times[0] >= t2 - STALE_MS) return times;
    // Still contended after a few rounds (other takes between each take and its renumbering): no
    // slot. The item's slots are behind the clock or of another numbering (another rate, an older
    // version): handed out, they would go at once or beside the live numbering's, a second schedule.
    if (round >= 3) return [];
    // Idle, re-rated or a newer version: number again, unless another take moved the count
    // meanwhile or another renumbering came in between. The count alone cannot tell: after another
    // renumbering and as many takes as this one saw, it is back at the value seen, and a write
    // landing late (under load) would number the slots a second time from its own, earlier,
    // epoch while the other numbering's slots are still handed out: two schedules at the rate,
    // interleaved. So each renumbering also bumps a generation `g` the condition checks, the
    // version-number form of optimistic locking
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBMapper.OptimisticLocking.html;
    // a failed condition writes nothing:
    // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html).
    // At the same rate the numbering goes on from its next free slot (slots already handed out
    // ahead stay 1/rate apart from the new ones); else from now.
    const epoch = item.rate === r && times[0] >= t2 ? times[0] : t2;
    try {
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key,
          UpdateExpression: 'SET n = :k, epoch = :epoch, rate = :rate, #of = :of, g = :g',
          ConditionExpression: item.g === undefined ? 'n = :seen AND attribute_not_exists(g)' : 'n = :seen AND g = :seenG',
          ExpressionAttributeNames: { '#of': 'of' },
          ExpressionAttributeValues: { ':k': wanted, ':epoch': epoch, ':rate': r, ':of': o, ':seen': item.n, ':g': (item.g ?? 0) + 1, ...(item.g === undefined ? {} : { ':seenG': item.g }) },
        }),
      );
      // A write that landed late (slow storage) numbered from a clock before it: slots more than
      // half a slot behind now would go at once, beside the next ones. They stay unused and the
      // next round takes the numbering's next free slots (or numbers again if those are past).
      // Half a slot late keeps every second at `rate_limit` + 1 at most, like a job back late
      // in its slot (../webhooks/endpoint-limits.ts).
      if (now() - epoch <= 500 / r) return Array.from({ length: wanted }, (_, j) => epoch + (j * 1000) / r);
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
    }
  }
}

/**
 * Claims a slot a job carried back from waiting, before its request goes in it: true for the one
 * claim that wrote it. Two SQS copies of one waiting job carry the same slot (a send applied whose
 * answer was lost and was sent again stores the message twice:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html),
 * and handled in two batches at once each read no end of the other: both went in the slot, two
 * requests where the rate allows one. A conditional put writes only if no item has the key
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html#Expressions.ConditionExpressions.PreventingOverwrites);
 * 1 write unit per job that waited. A claim whose answer was lost and was sent again finds its own
 * item: the slot goes unused (fewer requests, never more). The item lapses after an hour (TTL).
 */
export async function claimRateSlot(ns: string, webhookId: string, at: number, now = Date.now()): Promise<boolean> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName('meta'),
        Item: { ...limitKeys.slotClaim(ns, webhookId, at), ttl: ttlSeconds(now + 3_600_000) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return false;
  }
}

interface LeaseItem {
  version?: number;
  leases?: Record<string, number>;
  /** Deliveries waiting for a place (./webhook-waiting.ts): a count, written apart from the leases' version. */
  waiting?: number;
  /** When the webhook's place check was sent (lambda/webhooks/place-wait.ts): one at a time. */
  check_at?: number;
}

/**
 * Takes in-flight slots for as many of `leaseIds` as `max` leaves room for (in order), each
 * until `expiresAt`; returns the ids taken. Tries again a few times when another take or release
 * changed the item in between; still contended, it takes none (the deliveries wait).
 */
export async function takeInFlight(ns: string, webhookId: string, max: number, leaseIds: string[], expiresAt: number, now: () => number = Date.now, behindWaiters = false): Promise<string[]> {
  const Key = limitKeys.inFlight(ns, webhookId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const got = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key, ConsistentRead: true }));
    const item = got.Item as LeaseItem | undefined;
    // A write of this take that was applied and whose answer was lost (the SDK sent it again, and
    // its condition failed on the version it had moved itself): its leases are in the item. Taken
    // as another's, they held the places until they lapsed, the timeout and 15 s later, while the
    // deliveries waited (a max_in_flight of 2 held at 0 for most of a simulation step).
    const mine = leaseIds.filter((id) => item?.leases?.[id] !== undefined);
    if (mine.length) return mine;
    // Deliveries wait for a place: a newcomer waits behind them (the places go to the oldest).
    if (behindWaiters && (item?.waiting ?? 0) > 0) return [];
    const t = now();
    const leases = Object.entries(item?.leases ?? {});
    const live = leases.filter(([, exp]) => exp > t).length;
    const take = leaseIds.slice(0, Math.max(0, max - live));
    if (!take.length) return [];
    const gone = leases.filter(([, exp]) => exp <= t).map(([id]) => id);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':next': (item?.version ?? 0) + 1, ':exp': expiresAt, ':ttl': ttlSeconds(expiresAt + 3_600_000) };
    let update: string;
    let condition: string;
    if (!item?.leases) {
      update = 'SET leases = :m, version = :next, #ttl = :ttl';
      values[':m'] = Object.fromEntries(take.map((id) => [id, expiresAt]));
      delete values[':exp'];
      condition = 'attribute_not_exists(version)';
    } else {
      take.forEach((id, i) => (names[`#t${i}`] = id));
      gone.forEach((id, i) => (names[`#x${i}`] = id));
      update = `SET ${take.map((_, i) => `leases.#t${i} = :exp`).join(', ')}, version = :next, #ttl = :ttl${gone.length ? ` REMOVE ${gone.map((_, i) => `leases.#x${i}`).join(', ')}` : ''}`;
      values[':v'] = item.version ?? 0;
      condition = 'version = :v';
    }
    names['#ttl'] = 'ttl';
    try {
      await ddb().send(new UpdateCommand({ TableName: tableName('meta'), Key, UpdateExpression: update, ConditionExpression: condition, ExpressionAttributeNames: names, ExpressionAttributeValues: values }));
      return take;
    } catch (e) {
      if (!isConditionFailed(e)) {
        // The write may have been applied with every answer lost: its leases are taken then, and
        // given back they would not be (the caller knows none), so they are answered as taken.
        const after = await ddb()
          .send(new GetCommand({ TableName: tableName('meta'), Key, ConsistentRead: true }))
          .catch(() => undefined);
        const landed = take.filter((id) => (after?.Item as LeaseItem | undefined)?.leases?.[id] !== undefined);
        if (landed.length) return landed;
        throw e;
      }
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 30 * (attempt + 1)));
    }
  }
  return [];
}

/**
 * Gives in-flight slots back; bumps the version so a take that read them before sees the change.
 * Answers the item as the write left it (none waiting when it had no leases).
 */
export async function releaseInFlight(ns: string, webhookId: string, leaseIds: string[]): Promise<PlaceState> {
  if (!leaseIds.length) return { live: 0, waiting: 0 };
  const names = Object.fromEntries(leaseIds.map((id, i) => [`#r${i}`, id]));
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: limitKeys.inFlight(ns, webhookId),
        UpdateExpression: `REMOVE ${leaseIds.map((_, i) => `leases.#r${i}`).join(', ')} ADD version :one`,
        ConditionExpression: 'attribute_exists(leases)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return placeState(out.Attributes as LeaseItem | undefined, Date.now());
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return { live: 0, waiting: 0 };
  }
}

/** Gives back one lease if it is still held (a conditional write): the item as it left it, or undefined when it was not held. */
export async function releaseIfHeld(ns: string, webhookId: string, lease: string): Promise<PlaceState | undefined> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: limitKeys.inFlight(ns, webhookId),
        UpdateExpression: 'REMOVE leases.#l ADD version :one',
        ConditionExpression: 'attribute_exists(leases.#l)',
        ExpressionAttributeNames: { '#l': lease },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return placeState(out.Attributes as LeaseItem | undefined, Date.now());
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/**
 * Makes a handed lease one delivery's until `expiresAt`, moved to a new id (answered, with the live
 * leases after it): undefined when it lapsed, is gone, or another SQS copy of the job took it first
 * (both went: two requests on one place). A move applied whose answer was lost finds its id in the refusal's item.
 */
export async function confirmLease(ns: string, webhookId: string, lease: string, expiresAt: number, now = Date.now()): Promise<{ lease: string; live: number } | undefined> {
  const mine = randomUUID();
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: limitKeys.inFlight(ns, webhookId),
        UpdateExpression: 'SET leases.#m = :exp ADD version :one REMOVE leases.#l',
        ConditionExpression: 'leases.#l > :now',
        ExpressionAttributeNames: { '#l': lease, '#m': mine },
        ExpressionAttributeValues: { ':exp': expiresAt, ':one': 1, ':now': now },
        ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { lease: mine, live: placeState(out.Attributes as LeaseItem | undefined, Date.now()).live };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // The refusal's item is in the low-level format (`{ leases: { M: { id: { N } } } }`).
    const leases = (e as { Item?: { leases?: { M?: Record<string, { N?: string }> } } }).Item?.leases?.M;
    return leases?.[mine] ? { lease: mine, live: Object.values(leases).filter((v) => Number(v.N) > Date.now()).length } : undefined;
  }
}

/** The in-flight item as the place waits read it: live leases, deliveries waiting, the place check's stamp. */
export type PlaceState = { live: number; waiting: number; checkAt?: number };

const placeState = (item: LeaseItem | undefined, now: number): PlaceState => ({
  live: Object.values(item?.leases ?? {}).filter((exp) => exp > now).length,
  waiting: item?.waiting ?? 0,
  ...(item?.check_at !== undefined ? { checkAt: item.check_at } : {}),
});

/**
 * Counts `delta` deliveries in (1: one began to wait) or out (negative: hand-offs sent them), and
 * with a delivery in, notes a place check sent at `now` unless one is noted: answers the item as
 * the write left it (`checkAt === now`: the check is this caller's to send).
 */
export async function countWaiting(ns: string, webhookId: string, delta: number, now = Date.now()): Promise<PlaceState> {
  // Never below 0: a decrement sent twice (its answer lost) or landing after a reset would let
  // newcomers pass the waiting ones and releases hand nothing on.
  if (delta < 0) {
    try {
      const out = await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: limitKeys.inFlight(ns, webhookId),
          UpdateExpression: 'ADD waiting :d',
          ConditionExpression: 'waiting >= :n',
          ExpressionAttributeValues: { ':d': delta, ':n': -delta },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return placeState(out.Attributes as LeaseItem | undefined, Date.now());
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      await ddb()
        .send(new UpdateCommand({ TableName: tableName('meta'), Key: limitKeys.inFlight(ns, webhookId), UpdateExpression: 'SET waiting = :zero', ConditionExpression: 'waiting < :n', ExpressionAttributeValues: { ':zero': 0, ':n': -delta } }))
        .catch((x) => {
          if (!isConditionFailed(x)) throw x;
        });
      return readPlaces(ns, webhookId);
    }
  }
  const out = await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: limitKeys.inFlight(ns, webhookId),
      UpdateExpression: delta > 0 ? 'ADD waiting :d SET check_at = if_not_exists(check_at, :now), #ttl = :ttl' : 'ADD waiting :d',
      ExpressionAttributeNames: delta > 0 ? { '#ttl': 'ttl' } : undefined,
      ExpressionAttributeValues: { ':d': delta, ...(delta > 0 ? { ':now': now, ':ttl': ttlSeconds(now + 24 * 3_600_000) } : {}) },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return placeState(out.Attributes as LeaseItem | undefined, Date.now());
}

/** The in-flight item now (strongly consistent). */
export async function readPlaces(ns: string, webhookId: string): Promise<PlaceState> {
  const got = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: limitKeys.inFlight(ns, webhookId), ConsistentRead: true }));
  return placeState(got.Item as LeaseItem | undefined, Date.now());
}

/** Sets the waiting count to `to` if it is still `seen` (a count that drifted from the deliveries found waiting). */
export async function resetWaiting(ns: string, webhookId: string, seen: number, to = 0): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: limitKeys.inFlight(ns, webhookId),
        UpdateExpression: 'SET waiting = :to',
        ConditionExpression: seen === 0 ? '(attribute_not_exists(waiting) OR waiting = :seen)' : 'waiting = :seen',
        ExpressionAttributeValues: { ':to': to, ':seen': seen },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/**
 * Moves the place check from the stamp `held` to `next` (a check carrying on, or one taken over
 * as lost): false when another holds it. With `next` undefined the check ends, only while no
 * delivery waits; with `giveUp`, a check noted and never sent ends whatever waits.
 */
export async function moveCheck(ns: string, webhookId: string, held: number, next: number | undefined, giveUp = false): Promise<boolean> {
  const ends = next === undefined && !giveUp;
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: limitKeys.inFlight(ns, webhookId),
        UpdateExpression: next === undefined ? 'REMOVE check_at' : 'SET check_at = :next',
        ConditionExpression: ends ? 'check_at = :held AND (attribute_not_exists(waiting) OR waiting <= :zero)' : 'check_at = :held',
        ExpressionAttributeValues: { ':held': held, ...(ends ? { ':zero': 0 } : {}), ...(next === undefined ? {} : { ':next': next }) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    // This move applied already, its answer lost and the SDK's retry refused: the stamp is ours.
    // (A refusal's item is in the low-level format: `{ check_at: { N } }`.)
    return next !== undefined && (e as { Item?: { check_at?: { N?: string } } }).Item?.check_at?.N === String(next);
  }
}
