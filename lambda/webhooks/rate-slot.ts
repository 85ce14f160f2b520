/**
 * A rate-limited delivery's slot, for the gate (./endpoint-limits.ts, docs/webhooks.md "Delivery
 * limits"): the slot a job carries back from waiting or the next one reserved, how it waits for
 * it, and when it makes the reads its POST goes on, so that they never move the POST off its slot.
 *
 * The reads before a POST (its delivery record again, so that a copy of the job that ended
 * meanwhile is not POSTed again; its webhook again, so that a changed `rate_limit` applies; its
 * in-flight lease; its stored message) are made {@link readLeadMs} before the slot, and the job
 * then waits the rest and POSTs with no other call in between. Made after the wait, a read that
 * answered late (slow storage) sent a POST late while the next job, whose read was quick, went
 * on time: requests released 1/rate apart arrived together, 5 in one second at a limit of 3.
 * A job whose reads still ended more than half a slot past its slot does not go in it: it takes
 * the next free slot, once, and goes at that one with no further read.
 */
import { reserveRateSlots } from './storage/webhook-limits';
import { getWebhook, rateVersion, webhookReadAt, type WebhookItem } from './storage/webhooks';

/** How long the takes of one container gather before one storage call. */
const GATHER_MS = 5;

/** Takes gathered per key: each waiter gets its place in arrival order. */
export function gatherer<R>(run: (key: string, n: number) => Promise<R[]>) {
  const pending = new Map<string, { resolve: (r: R) => void; reject: (e: unknown) => void }[]>();
  return (key: string): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      let waiters = pending.get(key);
      if (!waiters) {
        waiters = [];
        pending.set(key, waiters);
        setTimeout(() => {
          const ws = pending.get(key) ?? [];
          pending.delete(key);
          run(key, ws.length).then(
            (rs) => ws.forEach((w, i) => w.resolve(rs[i])),
            (e) => ws.forEach((w) => w.reject(e)),
          );
        }, GATHER_MS);
      }
      waiters.push({ resolve, reject });
    });
}

/** Per key and rate: the slots reserved for a gathered group, one per waiter in arrival order (none: contended). */
const reserveGathered = gatherer<number | undefined>(async (key, n) => {
  const [ns, id, rate, of] = JSON.parse(key) as [string, string, number, number];
  const times = await reserveRateSlots(ns, id, rate, n, of);
  return Array.from({ length: n }, (_, i) => times[i]);
});

/** The next free slot of the webhook's rate, reserved with the container's other takes (undefined: contended). */
export const reserveSlot = (w: WebhookItem): Promise<number | undefined> => reserveGathered(JSON.stringify([w.namespace, w.id, w.config.rate_limit, rateVersion(w)]));

/**
 * A job whose slot is further ahead than {@link WAIT_HERE_MS} waits on SQS, never in the function:
 * it goes back to the queue as a new message carrying its slot, delayed by whole seconds (SQS
 * `DelaySeconds`, 0 to 900 s:
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html)
 * so that it becomes visible {@link BACK_EARLY_MS} to 1.5 s before its slot: received again (a
 * receive, an admission and a read take time, more when the event source is busy), it is not late
 * for it (a job back after its slot reserves another, and its slot goes unused). Only what a
 * delay cannot express, under 1.5 s, is waited here, once per slot (and the read lead, in which the
 * job makes its reads before the POST).
 * (Not a batch item failure with a changed visibility: that receive would count toward the
 * redrive policy's `maxReceiveCount`, so a job that waited a few slots would end in the DLQ, and
 * the message's body could not carry the slot it reserved, so it would reserve again on each
 * receive, a loop: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html.)
 */
const BACK_EARLY_MS = 500;
const WAIT_HERE_MS = 1000 + BACK_EARLY_MS;

/**
 * Whether a job whose slot is `ahead` ms away waits for it on the queue (or in the workflow's
 * Wait), and how many seconds: it comes back {@link BACK_EARLY_MS} to 1.5 s before its slot and
 * the read lead besides (at most 1 s of it), so that its reads before the POST end in time for
 * it. Not all of a long lead: a lead learnt from a few slow reads would hold every job that long
 * in the function, where jobs waiting keep the event source from receiving the next ones.
 */
const backLeadMs = () => Math.min(1000, readLeadMs());
export const waitsOnQueue = (ahead: number): boolean => ahead > WAIT_HERE_MS + backLeadMs();
export const queueWaitSeconds = (ahead: number): number => Math.max(1, Math.floor((ahead - BACK_EARLY_MS - backLeadMs()) / 1000));

/**
 * How late a request may still go in its slot: half the slots' spacing. Requests at most that late
 * after their slots, which are 1/rate apart, still put at most `rate_limit` + 1 in any second (the
 * slots of a window widened by half a spacing), the bound on-time slots keep at a window's edges;
 * and a job the event source received a little late (busy pollers, slow calls) keeps its slot
 * instead of leaving it unused and reserving one at the end of the backlog.
 */
export const lateInSlotMs = (rate: number) => 500 / rate;

/**
 * The job's slot: the one it carries if not more than half a slot past ({@link lateInSlotMs}) and
 * reserved under the configuration in force; else the next free one. A slot numbered before a
 * change of the webhook is not kept: a lowered `rate_limit` applies to the slots already reserved,
 * not only to new ones (the first reservation at the new rate numbers the slots again from now,
 * ../storage/webhook-limits.ts). Undefined: no slot (other takes kept renumbering); `changed`: the
 * webhook changed since `w` was read.
 */
export async function slotOf(w: WebhookItem, reserved: { at?: number; of?: number } | undefined, now: number): Promise<number | undefined | 'changed'> {
  const at = reserved?.at;
  const current = at !== undefined && at >= now - lateInSlotMs(w.config.rate_limit!) && reserved?.of === rateVersion(w);
  if (current) return at;
  // A slot is reserved under a webhook read started at most FRESH_READ_MS ago ({@link readFresh}):
  // a batch read that answered late is made again first (one GetItem, only then).
  if (!readFresh(webhookReadAt(w) ?? 0) && (await stillCurrent(w, Date.now())) === false) return 'changed';
  return reserveSlot(w);
}

/**
 * How long before its slot a job starts its reads: the second slowest of this container's last
 * {@link LEAD_SAMPLES} rounds of them (one outlier does not hold every job in the function for
 * the next few) and a margin, from 100 ms to {@link MAX_LEAD_MS}. Slow
 * storage makes it start earlier (and come back from the queue earlier); when storage is quick
 * the reads stay close to the POST, which keeps short the window in which a copy of the job that
 * ended is not seen (./delivery-key.ts). Reads slower than the cap make a job miss its slot; it
 * takes the next (below), and may miss that one too while storage stays that slow.
 */
const LEAD_SAMPLES = 8;
const MAX_LEAD_MS = 3000;
const recentReadMs: number[] = [];
export function readLeadMs(): number {
  const sorted = [...recentReadMs].sort((a, b) => b - a);
  return Math.min(MAX_LEAD_MS, Math.max(100, (sorted[1] ?? sorted[0] ?? 0) + 50));
}
export function noteReadMs(ms: number): void {
  recentReadMs.push(ms);
  if (recentReadMs.length > LEAD_SAMPLES) recentReadMs.shift();
}

export const sleepUntil = (t: number): Promise<void> => (t > Date.now() ? new Promise((r) => setTimeout(r, t - Date.now())) : Promise.resolve());

/**
 * How old the webhook read a rate-limited POST goes on may be. A job reads its webhook when its
 * batch starts and may then wait for its slot: a `rate_limit` changed meanwhile would not apply
 * to its POST. So a job whose read would be older than this at its POST reads it again before it
 * (a strongly consistent GetItem, with its other reads), and a change sends it back through the
 * whole path.
 */
const FRESH_READ_MS = 1000;

/**
 * Whether the webhook is still as `w` shows it, by a read started at most {@link FRESH_READ_MS}
 * before `postAt`: when that read started (epoch ms), or false when it changed.
 */
export async function stillCurrent(w: WebhookItem, postAt: number): Promise<number | false> {
  const readAt = webhookReadAt(w) ?? 0;
  if (postAt - readAt <= FRESH_READ_MS) return readAt;
  const at = Date.now();
  const now = await getWebhook(w.namespace, w.name);
  return now && now.id === w.id && now.updated_at === w.updated_at ? at : false;
}

/**
 * Whether a webhook read started at `readAt` is recent enough for a job that missed its slot to
 * reserve the next under it. Reserved under a webhook read before a change (a read answered late),
 * the slot would be taken from the new numbering but carried with the old version, so wasted when
 * the job comes back (it reserves again): a batch of such jobs took the first 20 s of slots after
 * a lowered `rate_limit` and left them all unused.
 */
export const readFresh = (readAt: number): boolean => Date.now() - readAt <= FRESH_READ_MS;
