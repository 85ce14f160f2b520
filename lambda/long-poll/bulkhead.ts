/**
 * The long-poll bulkhead (issue 25 item 6, docs/aws-parity.md): a consume that would wait takes
 * a slot first, in its namespace and in the deployment (lambda/storage/long-poll-slots.ts). When
 * either is full it does not wait: it answers at once with what is there, and its response says
 * so in `X-Long-Poll-Shortened` (`namespace`, `total`, or `unavailable` when the slots could not
 * be read). So waiting consumers never take more of the account's Lambda concurrency than
 * config().longPollLimits allows, and publishes and acks keep theirs. The local runtime runs the
 * same code on DynamoDB Local: the same limits.
 *
 * Consume handlers call {@link withLongPollSlot} around their consume, passing the wait it
 * grants; nothing else of theirs changes.
 *
 * A consume first runs without a slot for a short wait (`first.seconds`: a queue's shortest long
 * poll, `timeout_seconds: 0`, about a second; a stream's or subscription's first second), and
 * takes a slot only for the rest of its wait when that came back empty, handing the empty answer
 * to the rest (a stream goes on from its `next_offset`, so a `latest` fixed in the first second is
 * not read again). A consume of a busy queue, stream or subscription pays no slot at all (no
 * write to the namespace's or the pool's slot items); one that waits pays one write per slot item
 * to take it and one to give it back (a roll-over included when the container remembers the item
 * as it is: lambda/storage/long-poll-slots.ts). The time spent unslotted is bounded by one short
 * wait per request, as any consume with `timeout_seconds` of 0 or 1.
 *
 * A waiting consume that ends empty (it waited its whole wait: the idle case) keeps its slot for
 * its container's next waiting consume of the namespace, which moves it with one write per item
 * and, for the same queue (`first.resource`), skips the unslotted first wait: an idle consumer's
 * consume costs 2 write units and two SQS receives (20 s and the rest), not 4 and three. See
 * {@link kept} for what a kept slot counts.
 */
import { config } from '../config';
import { namespaceSlotShards, WAIT_SHORTENED_HEADER } from '../domain/long-poll-limits';
import { moveSlot, releaseSlot, RING, takeSlot, type Slot } from '../storage/long-poll-slots';
import { logger } from '../observability';
import type { ApiRequest } from '../middleware/api-request';

/** Slack after the longest wait before a slot of a dead container frees itself. */
const LEASE_SLACK_MS = 5_000;

/**
 * The slots' period: the ring's RING - 1 periods (lambda/storage/long-poll-slots.ts) last at least
 * as long as a live container holds a slot. A consume answers within its wait plus settling
 * (lambda/queues/consume.ts), and its function stops at API Gateway's 29 s
 * (lib/constructs/functions.ts): under the longest wait plus the slack.
 */
export const slotPeriodMs = () => Math.ceil((config().maxLongPollSeconds * 1000 + LEASE_SLACK_MS) / (RING - 1));

/** The unslotted first wait of a consume (see the header). */
export interface FirstWait<T> {
  /** The `timeout_seconds` of the unslotted run. */
  seconds: number;
  /** Whether a run's answer is empty (then the rest of the wait takes a slot). */
  isEmpty: (result: T) => boolean;
  /**
   * What is consumed (a queue's name): when this container kept a slot from an empty consume of
   * it, the next consume skips the unslotted first wait (the resource was idle) and moves the kept
   * slot, so an idle consumer's wait is one long poll of 20 s and one of the rest.
   */
  resource?: string;
}

/**
 * Slots this container kept from consumes that ended empty (they waited their whole wait: the
 * idle case), per namespace, with what they consumed. A later waiting consume of the namespace
 * moves one (lambda/storage/long-poll-slots.ts `moveSlot`: one write per item, no give-back before
 * it), instead of a give-back and a take (two writes per item). A kept slot still counts against
 * the limits until it is moved or leaves the slot items' ring (at most 4/3 of the longest lease
 * after its take): the limits bound executions that wait or may wait again, never fewer than those
 * that wait. Slots kept in other namespaces are given back when the container takes one, so a
 * container keeps at most one namespace's slots in Lambda (one request at a time).
 */
const kept = new Map<string, { slot: Slot; resource?: string }[]>();
const KEPT_PER_NAMESPACE = 16;

function keep(slot: Slot, resource: string | undefined): Promise<void> {
  const list = kept.get(slot.ns) ?? [];
  kept.set(slot.ns, list);
  list.push({ slot, resource });
  return list.length > KEPT_PER_NAMESPACE ? giveBack(list.shift()!.slot) : Promise.resolve();
}

/** A slot kept in `ns` (of `resource` first), taken out of the kept ones. */
function takeKept(ns: string, resource?: string): { slot: Slot; resource?: string } | undefined {
  const list = kept.get(ns);
  if (!list?.length) return undefined;
  const i = Math.max(0, list.findIndex((k) => k.resource === resource));
  const [k] = list.splice(i, 1);
  if (!list.length) kept.delete(ns);
  return k;
}

/** Gives back every slot kept in namespaces other than `ns`. */
async function giveBackOthers(ns: string): Promise<void> {
  const others = [...kept].filter(([n]) => n !== ns);
  for (const [n] of others) kept.delete(n);
  await Promise.all(others.flatMap(([, list]) => list.map((k) => giveBack(k.slot))));
}

const giveBack = (slot: Slot) => releaseSlot(slot).catch((e) => logger.warn('long-poll slot not given back; it frees itself when it leaves the ring of periods', { error: (e as Error).message }));

/** Whether this container kept a slot from an empty consume of `resource` in `ns`. */
const keptFor = (ns: string, resource?: string) => resource !== undefined && (kept.get(ns) ?? []).some((k) => k.resource === resource);

/**
 * Runs `consume` with the wait the bulkhead grants: `timeoutSeconds` when a slot is free (given
 * back when it ends), 0 when not (and the header says why). A consume that asks for no wait
 * takes no slot. With `first`, the first `first.seconds` run unslotted and `consume` gets that
 * run's empty answer (`after`) when it runs again for the rest.
 */
export async function withLongPollSlot<T>(
  req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>,
  timeoutSeconds: number,
  consume: (timeoutSeconds: number, after?: T) => Promise<T>,
  first?: FirstWait<T>,
): Promise<T> {
  if (!(timeoutSeconds > 0)) return consume(timeoutSeconds);
  if (first) {
    if (timeoutSeconds <= first.seconds) return consume(timeoutSeconds);
    // Idle when this container last consumed it: the whole wait in the slot (shortened, the
    // unslotted first wait is its answer).
    if (keptFor(req.namespace, first.resource)) return slotted(req, timeoutSeconds, (t) => consume(t), () => consume(first.seconds), first);
    const started = Date.now();
    const got = await consume(first.seconds);
    const rest = Math.floor(timeoutSeconds - (Date.now() - started) / 1000);
    if (!first.isEmpty(got) || rest < 1) return got;
    // Shortened, it answers with the empty answer it has: no second short wait.
    return slotted(req, rest, (t) => consume(t, got), async () => got, first);
  }
  return slotted(req, timeoutSeconds, consume, () => consume(0));
}

/** Runs `consume` for `timeoutSeconds` in a slot, or `shortened` when none is free. */
async function slotted<T>(
  req: Pick<ApiRequest, 'namespace' | 'responseHeaders'>,
  timeoutSeconds: number,
  consume: (timeoutSeconds: number) => Promise<T>,
  shortened: () => Promise<T>,
  /** With it, a slot whose consume ends empty is kept (see {@link kept}). */
  first?: FirstWait<T>,
): Promise<T> {
  const cfg = config();
  // The consume's rate limit, which the rate-limit middleware has put on the response before any
  // handler runs (DESIGN.md section 10): a limit raised past what one namespace slot item takes
  // splits the namespace's slots over more items.
  const consumeLimit = Number(req.responseHeaders['X-RateLimit-Limit']) || 0;
  const namespaceShards = namespaceSlotShards(consumeLimit, cfg.longPollLimits.perNamespace);
  let slot: Slot | undefined;
  try {
    await giveBackOthers(req.namespace);
    const mine = takeKept(req.namespace, first?.resource);
    if (mine) slot = await moveSlot(mine.slot, slotPeriodMs());
    const r = slot ? undefined : await takeSlot(req.namespace, { ...cfg.longPollLimits, pool: cfg.longPollPool, shards: cfg.longPollPoolShards, namespaceShards }, slotPeriodMs());
    if (r?.taken) slot = r.slot;
    else if (r) req.responseHeaders[WAIT_SHORTENED_HEADER] = r.full;
  } catch (e) {
    // Slots that cannot be read are no reason to refuse the consume, nor to let it hold an
    // execution uncounted: it answers with what is there.
    logger.warn('long-poll slots unavailable; answering without waiting', { error: (e as Error).message });
    req.responseHeaders[WAIT_SHORTENED_HEADER] = 'unavailable';
  }
  if (!slot) return shortened();
  let result: T;
  try {
    result = await consume(timeoutSeconds);
  } catch (e) {
    await giveBack(slot);
    throw e;
  }
  // Ended empty: kept for this container's next waiting consume of the namespace (moved then).
  if (first?.isEmpty(result)) await keep(slot, first.resource);
  else await giveBack(slot);
  return result;
}
