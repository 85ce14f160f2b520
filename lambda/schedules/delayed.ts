/**
 * Long delays (issue 20 item 1): a message whose delay goes beyond SQS's 900 s is held in the
 * scheduler table from its 201 (lambda/storage/scheduler.ts), and the tick hands it to its
 * standard queues and webhooks once it is due within {@link HANDOVER_WINDOW_MS}, with the rest of
 * its delay as SQS DelaySeconds, so SQS itself makes it visible at its second.
 *
 * - At publish, each bound standard queue reserves the room at once (`message_count` counts the
 *   message from the publish, like any delayed message, in the expiry bucket of its TTL, and as
 *   held: lambda/storage/queues.ts), so it leaves the count when its TTL ends, handed over or
 *   not; a queue over `max_size_mb` gets it dead-lettered then, as the ordinary sink does.
 *   Webhooks' conditions decide at publish too.
 * - At the handover it stops being held (it is in SQS from then on, in the same bucket), once
 *   (lambda/storage/queue-held.ts); when that cannot be done, it stays claimed, recorded as
 *   reached with its held part left (`held_left`), and the retry ends only that. A message whose
 *   TTL has ended by then is not sent to that queue (it already left the count).
 * - At the handover each target is read again (strongly consistent): one deleted since (or
 *   recreated: another id) is skipped and the message counted as dropped for it.
 * - At least once: a handover is claimed, sent, then finished; a tick that dies in between
 *   leaves the claim to expire and the next tick sends again (a duplicate with the same
 *   message_id, never a loss). A send that failed leaves the message claimed for the same retry,
 *   with the targets it reached recorded on the item (and, of a batch SQS partly stored, only
 *   the messages not stored counted as failed): the retry sends only to the others. The tick
 *   answers only once every handover it started has ended.
 */
import type { PublishedMessage } from '../domain/message';
import { HANDOVER_WINDOW_MS, DUE_SHARDS, remainingDelaySeconds } from '../domain/delays';
import { encodeQueueBody } from '../domain/queue-messages';
import type { Binding } from '../storage/resources';
import { byExpiryBucket, expiryBucketEnd, getQueue, queueBindingSettings, releaseQueueRoom, reserveQueueRoom, type QueueBindingSettings } from '../storage/queues';
import { endHeldPartOnce } from '../storage/queue-held';
import { endHeldTogether, touchTogether } from './held-ends';
import { isPastTtl } from '../domain/queue-messages';
import { logger } from '../observability';
import { getWebhook, webhookBindingSettings } from '../storage/webhooks';
import { claimDelayed, dueDelayedKeys, finishDelayed, getDelayedItems, loadDelayedMessages, newDelayedItem, putDelayed, recordHandoverProgress, withdrawDelayed, CLAIM_MS, type DelayedItem } from '../storage/scheduler';
import { ByteBudget, ClaimGate, byNamespaceTurns, inFlightWeight, IN_FLIGHT_BYTES } from './handover-budget';
import { sendToSqsQueue, SqsQueueGoneError } from '../adapters/service-queues';
import { releaseHeld } from '../storage/held-quota';
import { SqsSendError } from '../adapters/sqs';
import { outgoing, overflow } from '../queues/sink';
import { deliveryJobs, enqueueWebhookDeliveries } from '../webhooks/fanout';
import type { SinkContext } from '../publishing/sinks';

const MIB = 1024 * 1024;

/**
 * Holds `messages` (due at `dues`, each beyond 900 s) for `bindings` (standard queues and
 * webhooks): reserves queue room, then stores one item per message that has any target. Throws
 * (after giving the room back) when an item could not be stored: the publish answers 5xx.
 */
export async function holdLongDelays(ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[], dues: number[]): Promise<void> {
  // The publish reserved the namespace's held quota for every message (publish.ts); what is not
  // held in the end (no target after the webhooks' conditions, or not stored) is given back.
  const kept = new Set<PublishedMessage>();
  try {
    await holdEach(ctx, bindings, messages, dues, kept);
  } finally {
    const back = messages.filter((m) => !kept.has(m));
    await releaseHeld(ctx.namespace, back.length, back.reduce((n, m) => n + m.size, 0));
  }
}

async function holdEach(ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[], dues: number[], kept: Set<PublishedMessage>): Promise<void> {
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  const queues: Binding[] = [];
  await Promise.all(
    bindings
      .filter((b) => b.kind === 'QUEUE')
      .map(async (b) => {
        const s = b.settings as unknown as QueueBindingSettings;
        const buckets = byExpiryBucket(messages, s.message_ttl_seconds, (m) => m.published_at, (m) => m.size, { held: true });
        const room = await reserveQueueRoom(ctx.namespace, b.id, messages.length, bytes, s.max_size_mb * MIB, ctx.now, buckets);
        if (room === 'ok') queues.push(b);
        else if (room === 'full') await overflow(ctx, b, s, messages);
      }),
  );
  const hooks = new Map<PublishedMessage, Binding[]>();
  const webhookBindings = bindings.filter((b) => b.kind === 'WEBHOOK');
  for (const job of deliveryJobs(ctx.namespace, webhookBindings, messages)) {
    const b = webhookBindings.find((w) => w.id === job.webhook_id) as Binding;
    hooks.set(job.message, [...(hooks.get(job.message) ?? []), b]);
  }
  const held = messages
    .map((m, i) => ({ m, targets: [...queues, ...(hooks.get(m) ?? [])], due: dues[i] }))
    .filter((h) => h.targets.length > 0);
  const items = held.map((h) => newDelayedItem(ctx.namespace, h.m, h.targets, h.due, ctx.now));
  const { failed, error } = await putDelayed(items);
  // An item whose store failed may be stored all the same (an answer lost after the write): it is
  // deleted before its room is given back, or, if that fails, kept counted as the held message
  // it may be (a tick would hand it over and end its held part).
  const withdrawn = failed.length ? (await withdrawDelayed(failed.map((i) => items[i]))).map((k) => failed[k]) : [];
  const lost = withdrawn.map((i) => held[i].m);
  for (const h of held) if (!lost.includes(h.m)) kept.add(h.m);
  if (!failed.length) return;
  if (!lost.length) throw error ?? new Error('held messages were not stored');
  const lostBytes = lost.reduce((n, m) => n + m.size, 0);
  await Promise.all(
    queues.map((b) => {
      const ttl = (b.settings as unknown as QueueBindingSettings).message_ttl_seconds;
      const buckets = byExpiryBucket(lost, ttl, (m) => m.published_at, (m) => m.size, { held: true });
      return releaseQueueRoom(ctx.namespace, b.id, { count: lost.length, bytes: lostBytes, buckets }, ctx.now);
    }),
  );
  throw error ?? new Error('held messages were not stored');
}

export interface HandoverStats {
  /** Held messages read from the due index that were due within the window. */
  found: number;
  /** Handed to every target that still exists. */
  handed: number;
  /** Of those, whose every target had been deleted: dropped (and counted). */
  dropped: number;
  /** (message, target) pairs skipped because the target was deleted. */
  droppedTargets: number;
  /** Left claimed after a failed send (or a held part not ended): the next tick after the claim expires retries them. */
  failed: number;
  /** How late the latest handover was against the message's due time (ms, 0 when on time). */
  maxLateMs: number;
  /** The most bytes of held messages the tick held in memory at once, by their in-flight weight (./handover-budget.ts). */
  peakInFlightBytes: number;
  /** The most messages claimed and not yet finished at once. */
  peakClaimed: number;
  /** Handovers finished after the deadline (claimed before it): what a Lambda timeout would have cut off. */
  finishedAfterDeadline: number;
}

interface Group {
  ns: string;
  target: Binding;
  items: DelayedItem[];
}

/**
 * Hands over every held message due within {@link HANDOVER_WINDOW_MS} of `now` in `shards` (all
 * of them by default; a shard worker gets its own: ./shard-tasks.ts), shard by shard, at most
 * `pageSize` a query, pages followed while the deadline leaves room.
 */
export async function handOverDue(now: number, opts: { shards?: number[]; pageSize?: number; deadline?: number; inFlightBytes?: number; republish: SinkContext['republish']; log?: (msg: string, data: unknown) => void }): Promise<HandoverStats> {
  const stats: HandoverStats = { found: 0, handed: 0, dropped: 0, droppedTargets: 0, failed: 0, maxLateMs: 0, peakInFlightBytes: 0, peakClaimed: 0, finishedAfterDeadline: 0 };
  const budget = new ByteBudget(opts.inFlightBytes ?? IN_FLIGHT_BYTES);
  const pageSize = opts.pageSize ?? 100;
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const upTo = now + HANDOVER_WINDOW_MS;
  // The rest of each delay is computed when its send goes out, not at the tick's start: a tick
  // that takes seconds (pages of claims, a slow table) would otherwise deliver every message
  // that much late. `now` may be ahead of the wall clock (tests and the bench move it), so the
  // time passed since the start is added to it.
  const startedWall = Date.now();
  const clock = () => now + (Date.now() - startedWall);
  // A step that fails (a claim, a finish, a page's read) is left to a later tick and the others go
  // on; the tick answers only once every handover it started has ended, then fails with the first
  // such error. It must not end before: Lambda freezes the execution environment once the handler
  // has answered (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html),
  // and a send left running would hold its messages' claims (two minutes) unsent or unfinished.
  const errors: unknown[] = [];
  const claims = { now: 0 };
  const failed = (e: unknown, where: Record<string, unknown>) => {
    errors.push(e);
    opts.log?.('delayed handover step failed; left to a later tick', { ...where, error: (e as Error).message });
  };
  // Claims are bounded by what can finish before the deadline (./handover-budget.ts): a page is
  // read for as many messages as the gate admits, and each claim checks the deadline again.
  const gate = new ClaimGate(deadline);
  await Promise.all(
    (opts.shards ?? Array.from({ length: DUE_SHARDS }, (_, shard) => shard)).map(async (shard) => {
      let start: Record<string, unknown> | undefined;
      try {
        for (;;) {
          const admitted = await gate.admit(pageSize);
          if (!admitted) break;
          let claimed = 0;
          try {
            const page = await dueDelayedKeys(shard, upTo, admitted, start);
            start = page.next;
            if (page.keys.length) claimed = await handOverKeys(page.keys, now, clock, stats, budget, { ...opts, deadline, failed, claims });
          } finally {
            gate.done(admitted, claimed);
          }
          if (!start) break;
        }
      } catch (e) {
        failed(e, { shard }); // the index or the items unreadable: the shard's rest waits for the next tick
      }
    }),
  );
  stats.peakInFlightBytes = budget.peak;
  if (errors.length) throw errors[0];
  return stats;
}

type PageOpts = { deadline: number; claims: { now: number }; republish: SinkContext['republish']; log?: (msg: string, data: unknown) => void; failed: (e: unknown, where: Record<string, unknown>) => void };

/**
 * A page of the due index: its state items (small: keys, size, targets) are read first, the
 * namespaces take turns in it (an oldest-first page of one busy namespace no longer goes whole
 * before the others' messages), and it is handed over in parts, each holding its messages'
 * weight of the tick's byte budget while its bodies are read and sent.
 */
async function handOverKeys(keys: { pk: string; sk: string }[], now: number, clock: () => number, stats: HandoverStats, budget: ByteBudget, opts: PageOpts): Promise<number> {
  const items = (await getDelayedItems(keys)).filter((i) => i.state === 'pending' || (i.state === 'handing' && (i.claim_until ?? 0) < now));
  const claimed = await Promise.all(
    budget.parts(byNamespaceTurns(items), inFlightWeight).map((part) =>
      budget.holding(part.weight, () => handOverPage(part.items, now, clock, stats, opts)).catch((e) => {
        opts.failed(e, { messages: part.items.length });
        return 0;
      }),
    ),
  );
  return claimed.reduce((a, b) => a + b, 0);
}

/** Claims, sends and finishes `items`: how many it claimed. */
async function handOverPage(items: DelayedItem[], now: number, clock: () => number, stats: HandoverStats, opts: PageOpts): Promise<number> {
  // Each claim's token: the finish is conditional on it, so a claim applied with its answer lost
  // is recognised as this tick's own.
  const tokens = new Map<DelayedItem, string>();
  const where = (i: DelayedItem) => ({ namespace: i.namespace, message_id: i.message_id });
  await Promise.all(
    items.map(async (i) => {
      try {
        const token = Date.now() < opts.deadline ? await claimDelayed(i, now) : undefined;
        if (token) tokens.set(i, token);
      } catch (e) {
        opts.failed(e, where(i)); // not claimed (or claimed with its answer lost: the claim expires)
      }
    }),
  );
  const claimed = items.filter((i) => tokens.has(i));
  stats.found += claimed.length;
  opts.claims.now += claimed.length;
  stats.peakClaimed = Math.max(stats.peakClaimed, opts.claims.now);
  try {
    await sendAndFinish(claimed, tokens, now, clock, stats, opts);
  } finally {
    opts.claims.now -= claimed.length;
  }
  return claimed.length;
}

async function sendAndFinish(claimed: DelayedItem[], tokens: Map<DelayedItem, string>, now: number, clock: () => number, stats: HandoverStats, opts: PageOpts) {
  const where = (i: DelayedItem) => ({ namespace: i.namespace, message_id: i.message_id });
  // Unreadable bodies: nothing sent, the claims expire and a later tick takes the messages again.
  await loadDelayedMessages(claimed);
  // A body gone while its state item waited (its TTL is a week past the due time): nothing to send,
  // so no group; the message is finished as dropped and logged.
  for (const item of claimed.filter((i) => !i.message)) opts.log?.('held message body not found; the message is dropped', { namespace: item.namespace, message_id: item.message_id });
  // One send per target, however many of its messages came due together; a retry of a handover
  // that partly failed skips the targets it already reached.
  const groups = new Map<string, Group>();
  // Queues a retried handover reached in SQS without ending the held part there: only that is done.
  const heldParts: { item: DelayedItem; target: Binding }[] = [];
  for (const item of claimed.filter((i) => i.message)) {
    for (const t of item.targets ?? []) {
      if (item.held_left?.has(t.id)) heldParts.push({ item, target: t });
      if (item.handed_to?.has(t.id) || item.gone_from?.has(t.id)) continue;
      const key = `${item.namespace}#${t.kind}#${t.id}`;
      const g = groups.get(key) ?? { ns: item.namespace, target: t, items: [] };
      g.items.push(item);
      groups.set(key, g);
    }
  }
  type Outcome = { delivered: string[]; gone: string[]; heldLeft: string[]; failed: number };
  const outcome = new Map<DelayedItem, Outcome>(claimed.map((i) => [i, { delivered: [], gone: [], heldLeft: [], failed: 0 }]));
  await Promise.all([
    ...heldParts.map(async ({ item, target }) => {
      try {
        await endHeldOf(item, target, clock());
      } catch (e) {
        (outcome.get(item) as Outcome).failed++; // stays in held_left: the next retry ends it
        opts.log?.('held part of a handed-over message not ended; retried after the claim expires', { namespace: item.namespace, message_id: item.message_id, queue: target.name, error: (e as Error).message });
      }
    }),
    ...[...groups.values()].map(async (g) => {
      let results: Result[];
      try {
        results = await handTo(g, clock, opts.republish);
      } catch (e) {
        results = g.items.map(() => 'failed');
        opts.log?.('delayed handover failed; the message stays claimed and is retried after the claim expires', { namespace: g.ns, target: g.target.name, error: (e as Error).message, retry_after_ms: CLAIM_MS });
      }
      g.items.forEach((item, i) => {
        const o = outcome.get(item) as Outcome;
        if (results[i] === 'failed') o.failed++;
        else if (results[i] === 'unended') {
          // In SQS, its held part not ended: recorded as both, so the retry ends it without sending.
          o.failed++;
          o.delivered.push(g.target.id);
          o.heldLeft.push(g.target.id);
        } else o[results[i] as 'delivered' | 'gone'].push(g.target.id);
      });
    }),
  ]);
  const left = new Map<string, { count: number; bytes: number }>();
  await Promise.all(
    claimed.map(async (item) => {
      const o = outcome.get(item) as Outcome;
      stats.droppedTargets += o.gone.length;
      try {
        if (o.failed) {
          stats.failed++;
          // Only the targets not reached are sent again once the claim expires.
          return await recordHandoverProgress(item, o.delivered, o.gone, o.heldLeft);
        }
        const delivered = o.delivered.length > 0 || (item.handed_to?.size ?? 0) > 0;
        const finished = await finishDelayed(item, delivered ? 'sent' : 'dropped', now, tokens.get(item) as string).catch(async (e) => {
          // The sends are made (and their held parts ended): recorded, so that the retry after
          // the claim expires makes neither again.
          await recordHandoverProgress(item, o.delivered, o.gone).catch(() => undefined);
          throw e;
        });
        if (!finished) return;
        if (Date.now() > opts.deadline) stats.finishedAfterDeadline++;
        const l = left.get(item.namespace) ?? { count: 0, bytes: 0 };
        l.count++;
        l.bytes += item.size ?? 0;
        left.set(item.namespace, l);
        if (delivered) stats.handed++;
        else stats.dropped++;
        stats.maxLateMs = Math.max(stats.maxLateMs, clock() - item.due_at);
      } catch (e) {
        opts.failed(e, where(item)); // left claimed: a later tick takes it over once the claim expires
      }
    }),
  );
  // The namespaces' held quotas: one update per namespace of the page.
  await Promise.all([...left].map(([ns, l]) => releaseHeld(ns, l.count, l.bytes).catch((e) => opts.failed(e, { namespace: ns, held_quota: l }))));
}

/**
 * Ends a handed-over message's held part in one queue, left by an earlier handover that reached
 * SQS but could not end it: once, conditional on the item still naming the queue in `held_left`
 * (lambda/storage/queue-held.ts). Its bucket is the one its publish counted it in (the binding's TTL).
 */
async function endHeldOf(item: DelayedItem, target: Binding, at: number): Promise<void> {
  const ttl = (target.settings as unknown as QueueBindingSettings).message_ttl_seconds;
  const end = expiryBucketEnd(item.message?.published_at ?? item.created_at, ttl);
  await endHeldPartOnce(item.namespace, target.id, item.size ?? 0, end, { pk: item.pk, sk: item.sk }, at);
}

/**
 * Ends the held part of messages SQS stored: the totals once (tried a few times:
 * lambda/storage/queue-held.ts), then their buckets. False when the totals could not be written
 * (the messages are then left for the retry); a bucket not written is logged (buckets are read
 * once they have ended, after the messages' TTL).
 */
async function endHeld(ns: string, queueId: string, queueName: string, messages: PublishedMessage[], ttl: number, at: number): Promise<boolean> {
  try {
    await endHeldTogether(ns, queueId, messages, ttl, at);
  } catch (e) {
    logger.error('held part not ended at handover; the messages stay claimed and it is ended after the claim expires', { queue: queueName, messages: messages.length, error: (e as Error).message });
    return false;
  }
  return true;
}

type Result = 'delivered' | 'gone' | 'failed' | 'unended';

/**
 * Sends a group's messages to its target as it is now: per message, delivered, gone (the target
 * was deleted) or failed (SQS did not store it: a batch send that stored some messages retries
 * only the others). Throws when the whole send failed.
 */
async function handTo(g: Group, clock: () => number, republish: SinkContext['republish']): Promise<Result[]> {
  const all = (r: Result) => g.items.map(() => r);
  const messages = g.items.map((i) => i.message as PublishedMessage);
  if (g.target.kind === 'QUEUE') {
    const q = await getQueue(g.ns, g.target.name);
    if (!q || q.id !== g.target.id) return all('gone');
    const s = queueBindingSettings(q);
    const sendAt = clock();
    // Past its TTL: not sent (it left the count when its TTL ended, by its expiry bucket).
    const live = g.items.filter((i) => !isPastTtl((i.message as PublishedMessage).published_at, s.message_ttl_seconds, sendAt));
    const liveMessages = live.map((i) => i.message as PublishedMessage);
    // Of the live ones, those SQS did not store: all of them when the whole send failed, or the
    // unstored part of a batch (SqsSendError.unsent, indices into the live ones).
    let unstored = new Set<DelayedItem>();
    let sendError: unknown;
    try {
      // Between the send and the end of the held part below, SQS's count and the held amounts
      // both hold these messages: the quiet-queue reconciliation (lambda/sweeper/queues.ts) must
      // not read both then. Marking the counters changed first makes it skip or refuse its write.
      if (live.some((i) => i.bucketed)) await touchTogether(g.ns, q.id, sendAt);
      // The rest of each delay as the send goes out: the write above may take seconds on a
      // loaded table, and SQS counts DelaySeconds from its receipt of the message.
      const goesAt = clock();
      const delivery = live.map((i) => ({ delaySeconds: remainingDelaySeconds(i.due_at, goesAt), dedupId: i.message_id }));
      if (live.length) await sendToSqsQueue(s.sqs_queue, outgoing(liveMessages.map((m) => encodeQueueBody(m)), liveMessages, delivery, false));
    } catch (e) {
      if (e instanceof SqsQueueGoneError) return all('gone');
      sendError = e;
      unstored = e instanceof SqsSendError && e.unsent.length < live.length ? new Set(e.unsent.map((i) => live[i])) : new Set(live);
    }
    // Nothing reached this queue (every message live and unstored): the whole handover to it is retried.
    if (sendError && unstored.size === g.items.length) throw sendError;
    if (sendError) logger.error('delayed handover partly failed; the unstored messages stay claimed and are retried after the claim expires', { queue: q.name, unstored: unstored.size, error: (sendError as Error).message });
    // Reached (stored in SQS, or past its TTL and not sent): no longer held, counted in the same
    // buckets from now on. Only those: an unstored message stays held until its retry reaches the
    // queue (the retry skips the targets reached, so each target's held part ends once). Ended
    // once (lambda/storage/queue-held.ts); when it cannot be, the messages are 'unended': recorded
    // as reached with their held part left, so the retry ends it and does not send them again.
    const held = g.items.filter((i) => i.bucketed && !unstored.has(i));
    const ended = !held.length || (await endHeld(g.ns, q.id, q.name, held.map((i) => i.message as PublishedMessage), s.message_ttl_seconds, sendAt));
    return g.items.map((i) => (unstored.has(i) ? 'failed' : !ended && held.includes(i) ? 'unended' : 'delivered'));
  }
  const w = await getWebhook(g.ns, g.target.name);
  if (!w || w.id !== g.target.id) return all('gone');
  const binding: Binding = { ...g.target, settings: webhookBindingSettings(w) as unknown as Record<string, unknown> };
  const sendAt = clock();
  const delivery = g.items.map((i) => ({ delaySeconds: remainingDelaySeconds(i.due_at, sendAt), dedupId: i.message_id }));
  await enqueueWebhookDeliveries({ namespace: g.ns, now: sendAt, republish, delivery }, [binding], messages);
  return all('delivered');
}
