/**
 * Deliveries that find every in-flight place of their webhook taken (`max_in_flight`) wait in
 * DynamoDB (./storage/webhook-waiting.ts), oldest first, and each place that frees up is handed to
 * the oldest: a semaphore with a waiting list. Before, a job with no place went back to the
 * delivery queue for 1 to 3 s and tried again: with `max_in_flight` 1, a receiver answering in
 * 1 s and 20 messages at 2 a second, 81 SQS receives for 20 deliveries, up to 12 for one, growing
 * with the backlog (docs/webhooks.md "Delivery limits").
 *
 * - {@link waitForPlace}: the gate found no place: the job waits, counted on the webhook's
 *   in-flight item (`waiting`). A newcomer finds the count and waits behind them
 *   (./endpoint-limits.ts), so the places go in order of arrival.
 * - {@link handOn}: an attempt that ends gives its place back and, while deliveries wait, hands
 *   the free places on: it takes a lease for each of the oldest waiting deliveries, claims them,
 *   and runs them in its own invocation ({@link InlineRuns}; removed once they ended), or, without
 *   the time for that, sends them to the delivery queue carrying their lease (`place_lease`) and
 *   removes them. The job goes through the gate on its lease (./storage/webhook-limits.ts
 *   `confirmLease`), not behind the others.
 * - A wake-up lost between a failed take and the wait (the last attempt ended in between): the
 *   waiting delivery's own count write answers the live leases, and with a place free it hands on
 *   itself. A hand-off that stopped midway (its container ended) leaves its lease to lapse and
 *   its claim too; the webhook's place check, one SQS message per webhook while deliveries wait
 *   ({@link checkPlaces}), comes back after a lease's longest life and hands on what is free, so
 *   nothing waits on an attempt that never ends. It also lets the waiting go when the webhook no
 *   longer limits its places (a PATCH removed `max_in_flight`) or is gone.
 *
 * SQS receives per waiting delivery: 1 (its arrival; 2 when its hand-off goes through the queue), whatever the backlog.
 */
import { randomUUID } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { enqueueJobs, deferJobs } from './storage/delivery-queue';
import { sqsJson } from '../core/rules/queue-messages';
import type { DeliveryJob, PlaceCheck } from './rules/delivery';
import { claimWaiting, dropClaimed, dropWaiting, oldestWaiting, putWaiting, unclaimWaiting, type WaitingJob } from './storage/webhook-waiting';
import { confirmLease, countWaiting, moveCheck, readPlaces, releaseIfHeld, releaseInFlight, resetWaiting, takeInFlight, type PlaceState } from './storage/webhook-limits';
import { gatherer } from './rate-slot';
import { getWebhookPlaceLimits, type WebhookItem } from './storage/webhooks';
import { logger } from '../core/observability';
import { withRetries } from '../core/rules/dependency-errors';

type Limited = Pick<WebhookItem, 'namespace' | 'name' | 'id'> & { config?: { max_in_flight?: number | null; timeout?: number } };

/** How long the lease a hand-off takes may wait for the job to come back from the queue. */
const HANDOFF_MS = 60_000;

/** How long a hand-off's claim on a waiting delivery holds (from the claim to the job's removal, after its send): one that stopped midway lapses then. */
const CLAIM_MS = 15_000;

/** A lease a hand-off takes lasts the job's way back through the queue, its request's timeout and a margin. */
const handedLeaseUntil = (now: number, timeoutSeconds: number) => now + HANDOFF_MS + timeoutSeconds * 1000 + 15_000;

/**
 * A delivery batch that runs the jobs its attempts hand places to itself, in its own invocation
 * (./delivery-batch.ts), instead of sending them to the queue: a handed job sent to the queue came
 * back alone in a batch of its own, never put back over its namespace's share (its place would
 * stay idle), so a namespace with a backlog of slow webhooks held every batch of the function
 * (another namespace's 0 ms webhook: p90 0.9 s alone, 8.4 s beside it). Run here, it holds no
 * batch but the one its namespace's share counts already, and its request goes one queue trip
 * sooner.
 */
export interface InlineRuns {
  /** Whether a job whose request may last `timeoutSeconds` ends within this invocation. */
  fits(timeoutSeconds: number): boolean;
  /** Runs a handed job in this invocation; `ended` once it ended, with its outcome (undefined: it threw). */
  run(job: DeliveryJob, ended: (outcome: string | undefined) => Promise<void>): void;
}
const inlineRuns = new AsyncLocalStorage<InlineRuns>();

/** Runs `f` with hand-offs made within it run by `runs` (./delivery-batch.ts). */
export const handingInline = <T>(runs: InlineRuns, f: () => Promise<T>): Promise<T> => inlineRuns.run(runs, f);

/**
 * A job run in the hand-off's invocation stays in the waiting partition, claimed, until it ended:
 * its invocation may end first (Lambda stops it at its timeout), and the claim then lapses so the
 * next hand-off runs it again (its record read first: no second POST). Longer than the run: its
 * request's timeout, the gate's reads and its record's retries.
 */
const inlineClaimMs = (timeoutSeconds: number) => timeoutSeconds * 1000 + 30_000;

/**
 * How often the place check comes back while deliveries wait: a lapsed lease (an attempt whose
 * container ended) is handed on within this, one SQS message per webhook, not per delivery.
 */
const CHECK_DELAY_SECONDS = 15;

/** A check noted this long ago and never seen again is taken as lost (a wait then sends another): four of its rounds. */
const CHECK_STALE_MS = 4 * CHECK_DELAY_SECONDS * 1000;

/** A check's send is tried for about 3 s: without it a place whose lease lapsed waits for the next delivery's wait. */
const SEND_RETRIES = { tries: 4, firstDelayMs: 300 };

/** Waiting deliveries read per hand-off beyond the places free (some may be claimed by another hand-off). */
const READ_EXTRA = 5;

const checkOf = (w: Limited, at: number): PlaceCheck => ({ namespace: w.namespace, webhook_id: w.id, webhook_name: w.name, place_check: at });

async function sendCheck(w: Limited, at: number): Promise<void> {
  await withRetries(() => deferJobs([sqsJson(checkOf(w, at))], CHECK_DELAY_SECONDS), SEND_RETRIES);
}

/** Per key, max, expiry and whether behind waiting deliveries: the in-flight leases taken for a gathered group (undefined: none left). */
export const takeInFlightGathered = gatherer<string | undefined>(async (key, n) => {
  const [ns, id, max, expiresAt, behind] = JSON.parse(key) as [string, string, number, number, boolean];
  const ids = Array.from({ length: n }, () => randomUUID());
  const taken = new Set(await takeInFlight(ns, id, max, ids, expiresAt, Date.now, behind));
  return ids.map((l) => (taken.has(l) ? l : undefined));
});

/**
 * With both limits, the place before the slot: the one handed to the job (confirmed), else one
 * taken, behind the waiting deliveries unless the job carries a slot. Noted as the hand (given back
 * on every way out but `go`, or carried while the job waits for its slot); false: none.
 */
/**
 * Confirms a place handed to this job ({@link confirmLease}) within the webhook's limit as the job
 * read it: a confirmation that leaves more live leases than `max_in_flight` gives its place back
 * and answers none (the job then waits by its age). Places handed on, or kept by jobs waiting for
 * their rate slot, before a PATCH lowered the limit were taken up after it: 8 places kept at a
 * limit lowered to 1 were 4 to 5 requests open 4 to 8 s after the change.
 */
export async function confirmPlace(w: Pick<WebhookItem, 'namespace' | 'name' | 'id' | 'config'>, lease: string, expiresAt: number): Promise<string | undefined> {
  const c = await confirmLease(w.namespace, w.id, lease, expiresAt);
  if (!c || c.live <= (w.config.max_in_flight ?? Infinity)) return c?.lease;
  await releasePlaces(w, [c.lease]);
  return undefined;
}

export async function placeFirst(w: WebhookItem, reserved: { at?: number } | undefined, hand: { lease?: string; confirmed: boolean; held?: boolean }, now: number): Promise<boolean> {
  const mine = hand.lease ? await confirmPlace(w, hand.lease, leaseEnd(w, now)) : undefined;
  if (mine) return Boolean(Object.assign(hand, { lease: mine, held: true }));
  hand.lease = undefined; // not this job's (lapsed, or another copy's): nothing to give back
  const got = await takeInFlightGathered(JSON.stringify([w.namespace, w.id, w.config.max_in_flight, leaseEnd(w, now), reserved?.at === undefined]));
  if (got) Object.assign(hand, { lease: got, confirmed: false, held: true });
  return Boolean(got);
}

/**
 * When an in-flight lease taken at `now` lapses: past the request's timeout by a margin, so a
 * crashed container's place comes back. One time for every take of a gate, so a lease the gate
 * holds already ({@link placeFirst}) is the attempt's as it is, with no second write.
 */
export const leaseEnd = (w: Pick<WebhookItem, 'config'>, now: number): number => Math.ceil((now + w.config.timeout * 1000 + 15_000) / 1000) * 1000;

/**
 * The gate found no in-flight place: the job waits for one. Throws when it could not (SQS then
 * delivers the job again, which waits then; parked twice, it keeps one place: the item's key is its own).
 */
export async function waitForPlace(job: DeliveryJob, w: WebhookItem, now = Date.now()): Promise<void> {
  const { rate_slot_at: _, rate_slot_of: __, place_lease: ___, ...plain } = job;
  const waiting = { ...plain, waiting_at: job.waiting_at ?? now } as WaitingJob;
  await putWaiting(waiting, now);
  const s = await countWaiting(w.namespace, w.id, 1, now);
  // The first to wait sends the place check; one noted long ago and never seen again is taken over.
  if (s.checkAt === now || (s.checkAt !== undefined && s.checkAt < now - CHECK_STALE_MS && (await moveCheck(w.namespace, w.id, s.checkAt, now)))) {
    // Not sent: the note is given up, so the next wait sends one (a note left would hold off every
    // wait's check until stale).
    await sendCheck(w, now).catch(async (e) => {
      logger.warn('webhook place check not sent; the next wait sends one', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
      await moveCheck(w.namespace, w.id, now, undefined, true).catch(() => undefined);
    });
  }
  // A place freed between the gate's take and this count (its attempt saw nobody waiting): handed on here.
  if (s.live < (w.config.max_in_flight ?? Infinity)) await handOn(w, s);
}

/**
 * Gives an attempt's places back and hands the free places on to the oldest waiting deliveries.
 * Never throws: a place not given back lapses with its lease, and a hand-off not made is made by
 * the next attempt's end, the next wait or the place check.
 */
export async function releasePlaces(w: Limited, leases: string[]): Promise<void> {
  let left: PlaceState;
  try {
    left = await releaseInFlight(w.namespace, w.id, leases);
  } catch (e) {
    logger.warn('webhook in-flight place not given back; it lapses with its lease, and the place check hands it on', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
    return;
  }
  // While deliveries wait (counted, or a place check out: the count may have been taken back
  // twice, a decrement applied whose answer was lost and sent again). A hand-off that failed (a
  // storage or queue error past the SDK's retries) is made again once, from a fresh read: else the
  // place would wait for the next attempt's end or the place check.
  for (let tries = 1; left.waiting > 0 || left.checkAt !== undefined; tries++) {
    try {
      return await handOn(w, tries === 1 ? left : undefined);
    } catch (e) {
      if (tries >= 2) return logger.warn('webhook in-flight place not handed on; the next attempt\'s end or the place check hands it on', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
    }
  }
}

/** Leases handed to jobs that reached the gate, which settles each on every way out: given back, or taken up by the attempt. */
const reachedGate = new Set<string>();

/**
 * The gate's note that it met a handed lease: the batch then makes no write of its own to give it
 * back ({@link giveBackHanded}), which the lease's holder had given back already (a refused
 * conditional write, billed, per waiting delivery).
 */
export function atGate<H extends { lease?: string }>(hand: H): H {
  if (hand.lease) reachedGate.add(hand.lease);
  return hand;
}

/**
 * After a job handed a place has run: a place it still holds (it ended before the gate: its
 * webhook disabled or deleted, its delivery ended already) is given back and handed on. Else the
 * place stayed taken until its lease lapsed (the hand-off's minute, the timeout and 15 s), and
 * the waiting deliveries of a disabled webhook left one a lapse. Never throws.
 */
export async function giveBackHanded(job: DeliveryJob, outcome?: string): Promise<void> {
  // The gate gave it back or took it up ({@link atGate}); one kept while the job waits for its rate slot goes with it.
  if (!job.place_lease || reachedGate.delete(job.place_lease) || outcome === 'waiting') return;
  const w: Limited = { namespace: job.namespace, name: job.webhook_name, id: job.webhook_id };
  try {
    const left = await releaseIfHeld(job.namespace, job.webhook_id, job.place_lease);
    if (left && (left.waiting > 0 || left.checkAt !== undefined)) await handOn(await limitsNow(w), left, true);
  } catch (e) {
    logger.warn('webhook in-flight place handed to a delivery that ended before it was not given back; it lapses with its lease', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
  }
}

/**
 * The webhook's limits as they are now (one eventually consistent GetItem of its limits alone,
 * no secret opened): none when it is deleted or recreated, so its waiting deliveries go (and end).
 * Gone, or another incarnation, by that read: read again strongly. An eventually consistent read
 * shortly after the create missed the webhook, and every waiting delivery went without a place,
 * to wait again (17 of 80 in a burst on a new webhook).
 */
async function limitsNow(w: Limited): Promise<Limited> {
  let l = await getWebhookPlaceLimits(w.namespace, w.name);
  if (l?.id !== w.id) l = await getWebhookPlaceLimits(w.namespace, w.name, { consistent: true });
  return { namespace: w.namespace, name: w.name, id: w.id, config: l?.id === w.id ? l.config : {} };
}

/**
 * Hands the free places on: a lease each for the oldest waiting deliveries no other hand-off
 * holds, which go to the queue carrying it. `known`: the item as the caller's write left it.
 * A webhook that no longer limits its places lets every waiting delivery go, with no lease.
 * `fresh`: `w` was read just now; else its limits are read again ({@link limitsNow}, per hand-off).
 */
async function handOn(w: Limited, known?: PlaceState, fresh = false): Promise<void> {
  // The room comes from the webhook as it is now: an attempt whose batch read it before a PATCH
  // lowered max_in_flight (3 to 1) handed on the old number of places, and the handed jobs went
  // (3 requests open at 1, about 5 s after the change).
  const now: Limited = fresh ? w : await limitsNow(w);
  // Another hand-off at once may claim the same oldest deliveries: the places this one took for
  // them are given back and it goes again for the next ones, a few rounds at most.
  let state = known ?? (await readPlaces(w.namespace, w.id));
  for (let round = 0; round < 3 && (await handOnce(now, state)); round++) state = await readPlaces(w.namespace, w.id);
}

/** One round of {@link handOn}: true when another hand-off claimed some of the deliveries this one took places for. */
async function handOnce(w: Limited, state: PlaceState): Promise<boolean> {
  const max = w.config?.max_in_flight ?? undefined;
  const room = max === undefined ? 25 : Math.max(0, max - state.live);
  const waiters = await oldestWaiting(w.namespace, w.id, room + READ_EXTRA);
  if (!waiters.length) {
    // Counted but none found (a wait whose item was sent and whose count was not taken back): the
    // count goes to 0 unless it moved meanwhile, so newcomers stop waiting behind nobody.
    if (state.waiting > 0) await resetWaiting(w.namespace, w.id, state.waiting);
    return false;
  }
  const now = Date.now();
  const free = waiters.filter((x) => (x.claimedUntil ?? 0) < now).slice(0, room);
  if (!free.length) return false;
  // Run here when this is a delivery batch with the time for it ({@link InlineRuns}), else sent.
  const timeout = w.config?.timeout ?? 30;
  const inline = inlineRuns.getStore()?.fits(timeout) ? inlineRuns.getStore() : undefined;
  // The leases and the claims at once (one round trip less on the way from a place given back to
  // its next request); paired in order, what is left over of either is given back.
  const until = now + (inline ? inlineClaimMs(timeout) : CLAIM_MS);
  // A claim that threw (DynamoDB may have applied it) is given back and not counted.
  const [leases, claims] = await Promise.all([
    max === undefined ? free.map(() => undefined) : takeInFlight(w.namespace, w.id, max, free.map(() => randomUUID()), handedLeaseUntil(now, timeout)),
    Promise.all(free.map((x) => claimWaiting(x.job, until, now).catch(async () => (await unclaimWaiting(x.job, until), false)))),
  ]);
  const claimed = free.filter((_, i) => claims[i]);
  const n = Math.min(claimed.length, leases.length);
  const sent = claimed.slice(0, n).map((x, i) => ({ job: x.job, lease: leases[i] }));
  const spare = leases.slice(n).filter((l): l is string => l !== undefined);
  await Promise.all([spare.length ? releaseInFlight(w.namespace, w.id, spare) : undefined, ...claimed.slice(n).map((x) => unclaimWaiting(x.job, until))]);
  // Another hand-off held some of the oldest: this one goes again for the next ones.
  const again = claims.some((c) => !c);
  if (!sent.length) return again;
  const handed = sent.map(({ job, lease }) => (lease === undefined ? job : { ...job, place_lease: lease }));
  if (inline) {
    handed.forEach((job) => inline.run(job, (outcome) => endInline(w, job as WaitingJob, until, outcome)));
    return again;
  }
  try {
    await enqueueJobs(handed);
  } catch (e) {
    // Not sent (or some, which then go twice: a copy reads its record before any POST): the
    // leases and claims are given back, for the next hand-off.
    await Promise.all([releaseInFlight(w.namespace, w.id, sent.flatMap((s) => (s.lease ? [s.lease] : []))), ...sent.map((s) => unclaimWaiting(s.job, until))]);
    throw e;
  }
  // Sent: removed and counted out. One whose removal failed stays claimed; its claim lapses and a
  // later hand-off sends it again (the copy reads its record before any POST), counted out then.
  const dropped = await Promise.allSettled(sent.map((s) => dropWaiting(s.job)));
  const out = dropped.filter((d) => d.status === 'fulfilled').length;
  if (out) await countWaiting(w.namespace, w.id, -out);
  return again;
}

/**
 * A job run in the hand-off's invocation ended: out of the waiting partition and counted out, as
 * a sent one is once sent. One whose run threw is given back to the next hand-off. Never throws:
 * a job left claimed is run again once its claim lapses (its record read first).
 */
async function endInline(w: Limited, job: WaitingJob, until: number, outcome: string | undefined): Promise<void> {
  try {
    if (outcome === undefined) return await unclaimWaiting(job, until);
    // Not this claim's any more: parked again by its own run (`parked`: put back unclaimed and
    // counted in again, so its first count goes out all the same), or its claim lapsed and
    // another hand-off holds it (that one counts it out).
    if ((await dropClaimed(job, until)) || outcome === 'parked') await countWaiting(w.namespace, w.id, -1);
  } catch (e) {
    logger.warn('webhook delivery run after a hand-off not taken out of the waiting ones; it runs again once its claim lapses', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
  }
}

/** The webhook's place check came back: hands on what is free, then comes back again while deliveries wait. */
export async function checkPlaces(t: PlaceCheck): Promise<void> {
  const s = await readPlaces(t.namespace, t.webhook_id);
  if (s.checkAt !== t.place_check) return; // another check took over
  const target: Limited = { namespace: t.namespace, name: t.webhook_name, id: t.webhook_id };
  await handOn(await limitsNow(target), s, true);
  // The check ends when nothing waits: the count's condition keeps it going when a delivery began
  // to wait meanwhile (its count write found this check noted and sent none). A delivery found
  // waiting with a count at 0 or below (one parked twice: its job received again after a wait
  // that stopped midway) is counted again, so newcomers wait behind it and the check goes on.
  const left = await oldestWaiting(t.namespace, t.webhook_id, 1);
  const after = await readPlaces(t.namespace, t.webhook_id);
  if (left.length && after.waiting <= 0) await resetWaiting(t.namespace, t.webhook_id, after.waiting, 1);
  if (!left.length && (await moveCheck(t.namespace, t.webhook_id, t.place_check, undefined))) return;
  // The next check is sent before the stamp moves to it: a send that failed leaves this one holding
  // the stamp, received again (SQS) to carry on; one sent whose move failed finds another's stamp and stops.
  const next = Date.now();
  await sendCheck(target, next);
  await moveCheck(t.namespace, t.webhook_id, t.place_check, next);
}
