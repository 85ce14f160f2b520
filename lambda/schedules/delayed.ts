/**
 * Long delays: a message whose delay goes beyond SQS's 900 s is held in the
 * scheduler table from its 201 (lambda/schedules/storage/scheduler.ts), and the tick hands it to its
 * standard queues and webhooks once it is due within {@link HANDOVER_WINDOW_MS}, with the rest of
 * its delay as SQS DelaySeconds, so SQS itself makes it visible at its second.
 *
 * - At publish, each bound standard queue reserves the room at once (`message_count` counts the
 *   message from the publish, like any delayed message, in the expiry bucket of its TTL, and as
 *   held: lambda/queues/storage/queues.ts), so it leaves the count when its TTL ends, handed over or
 *   not; a queue over `max_size_mb` gets it dead-lettered then, as the ordinary sink does.
 *   Webhooks' conditions decide at publish too.
 * - At the handover it stops being held (it is in SQS from then on, in the same bucket), once
 *   (lambda/queues/storage/queue-held.ts); when that cannot be done, it stays claimed, recorded as
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
 * - Packs (lambda/schedules/storage/held-packs.ts): the messages of one publish request due in the same
 *   minute for the same targets are held, claimed and finished together; each is handed over
 *   (and its progress recorded) as a message of its own.
 */
import type { PublishedMessage } from '../core/rules/message';
import { HANDOVER_WINDOW_MS, DUE_SHARDS } from '../core/rules/delays';
import type { Binding } from '../core/storage/resources';
import { byExpiryBucket, releaseQueueRoom, reserveQueueRoom, type QueueBindingSettings } from '../queues/storage/queues';
import { isPack, messagesOf, packsOf, putPacks, slotEntry, unpack, type PackItem, type PackedMessage } from './storage/held-packs';
import { claimDelayed, dueDelayedKeys, finishDelayed, getDelayedItems, loadDelayedMessages, newDelayedItem, putDelayed, recordHandoverProgress, withdrawDelayed, CLAIM_MS, type DelayedItem } from './storage/scheduler';
import { ByteBudget, ClaimGate, byNamespaceTurns, inFlightWeight, IN_FLIGHT_BYTES } from './rules/handover-budget';
import { endHeldOf, handTo, type Group, type Result } from './handover-send';
import { releaseHeld } from '../limits/storage/held-quota';
import { overflow } from '../queues/sink';
import { deliveryJobs } from '../webhooks/fanout';
import type { SinkContext } from '../publishing/sink';

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
  // The messages of this request due in the same minute for the same targets are packed (one
  // body, one claim and finish for all: lambda/schedules/storage/held-packs.ts); a lone one is one item.
  const { packs, single } = packsOf(ctx.namespace, held, ctx.now);
  const items = single.map((h) => newDelayedItem(ctx.namespace, h.m, h.targets, h.due, ctx.now));
  const [one, packed] = await Promise.all([putDelayed(items), putPacks(packs)]);
  // Each unit stored or not as a whole: its key (what the tick finds) and its messages.
  const units = [...single.map((h, k) => ({ key: items[k], messages: [h.m] })), ...packs.map((p) => ({ key: p.state, messages: p.messages }))];
  const failed = [...one.failed, ...packed.failed.map((k) => single.length + k)];
  const error = one.error ?? packed.error;
  // When any unit's store failed the publish answers 5xx, so the client never learns these ids
  // and retries: every unit of the request is withdrawn, the stored ones too (a failed one may be
  // stored all the same: an answer lost after the write). Each is deleted before its room is
  // given back, or, if that fails, kept counted as the held messages it may be (a tick would hand
  // them over and end their held part).
  const all = failed.length ? units.map((_, i) => i) : [];
  const withdrawn = all.length ? (await withdrawDelayed(all.map((i) => units[i].key))).map((k) => all[k]) : [];
  const lost = withdrawn.flatMap((i) => units[i].messages);
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
  /** The most bytes of held messages the tick held in memory at once, by their in-flight weight (./rules/handover-budget.ts). */
  peakInFlightBytes: number;
  /** The most messages claimed and not yet finished at once. */
  peakClaimed: number;
  /** Handovers finished after the deadline (claimed before it): what a Lambda timeout would have cut off. */
  finishedAfterDeadline: number;
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
  // Claims are bounded by what can finish before the deadline (./rules/handover-budget.ts): a page is
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
            if (page.keys.length) {
              const read = new Map((await getDelayedItems(page.keys)).map((i) => [i.pk, i]));
              // A page takes what the gate admitted in messages (a pack counts its slots), at least
              // one item; the next page starts after the last item taken.
              let weight = 0;
              let taken = 0;
              for (const k of page.keys) {
                const i = read.get(k.pk);
                const w = i ? messagesOf(i) : 0;
                if (taken > 0 && weight + w > admitted) break;
                weight += w;
                taken++;
              }
              if (taken < page.keys.length) start = page.indexKeys[taken - 1];
              const items = page.keys.slice(0, taken).flatMap((k) => read.get(k.pk) ?? []);
              claimed = await handOverKeys(items, now, clock, stats, budget, { ...opts, deadline, failed, claims });
            }
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
 * A page of the due index: its state items (small: keys, size, targets; a pack's count of slots)
 * as read, the namespaces taking turns in it (an oldest-first page of one busy namespace no longer
 * goes whole before the others' messages), handed over in parts, each holding its messages'
 * weight of the tick's byte budget while its bodies are read and sent. How many messages it claimed.
 */
async function handOverKeys(read: DelayedItem[], now: number, clock: () => number, stats: HandoverStats, budget: ByteBudget, opts: PageOpts): Promise<number> {
  const items = read.filter((i) => i.state === 'pending' || (i.state === 'handing' && (i.claim_until ?? 0) < now));
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

/** Claims, sends and finishes `items` (held messages and packs): how many messages it claimed. */
async function handOverPage(items: DelayedItem[], now: number, clock: () => number, stats: HandoverStats, opts: PageOpts): Promise<number> {
  // Each claim's token: the finish is conditional on it, so a claim applied with its answer lost
  // is recognised as this tick's own. The items as claimed: a pack's cancelled slots are final.
  const tokens = new Map<DelayedItem, string>();
  const where = (i: DelayedItem) => ({ namespace: i.namespace, message_id: i.message_id });
  await Promise.all(
    items.map(async (i) => {
      try {
        const claim = Date.now() < opts.deadline ? await claimDelayed(i, now) : undefined;
        if (claim) tokens.set(claim.item, claim.token);
      } catch (e) {
        opts.failed(e, where(i)); // not claimed (or claimed with its answer lost: the claim expires)
      }
    }),
  );
  const claimed = [...tokens.keys()];
  const messages = claimed.reduce((n, i) => n + messagesOf(i), 0);
  stats.found += messages;
  opts.claims.now += messages;
  stats.peakClaimed = Math.max(stats.peakClaimed, opts.claims.now);
  try {
    await sendAndFinish(claimed, tokens, now, clock, stats, opts);
  } finally {
    opts.claims.now -= messages;
  }
  return messages;
}

async function sendAndFinish(claimed: DelayedItem[], tokens: Map<DelayedItem, string>, now: number, clock: () => number, stats: HandoverStats, opts: PageOpts) {
  const where = (i: DelayedItem) => ({ namespace: i.namespace, message_id: i.message_id });
  // Unreadable bodies: nothing sent, the claims expire and a later tick takes the messages again.
  // A pack is handed over as its messages not cancelled, each with its own progress.
  const packs = claimed.filter(isPack) as PackItem[];
  const [unpacked] = await Promise.all([unpack(packs), loadDelayedMessages(claimed.filter((i) => !isPack(i)))]);
  const unitsOf = (i: DelayedItem): DelayedItem[] => (isPack(i) ? (unpacked.get(i) as PackedMessage[]) : [i]);
  const units = claimed.flatMap(unitsOf);
  // A body gone while its state item waited (its TTL is a week past the due time): nothing to send,
  // so no group; the message is finished as dropped and logged.
  for (const item of claimed.filter((i) => (isPack(i) ? !unitsOf(i).length && messagesOf(i) > 0 : !i.message))) opts.log?.('held message body not found; the message is dropped', where(item));
  // One send per target, however many of its messages came due together; a retry of a handover
  // that partly failed skips the targets it already reached.
  const groups = new Map<string, Group>();
  // Queues a retried handover reached in SQS without ending the held part there: only that is done.
  const heldParts: { item: DelayedItem; target: Binding }[] = [];
  for (const item of units.filter((i) => i.message)) {
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
  const outcome = new Map<DelayedItem, Outcome>(units.map((i) => [i, { delivered: [], gone: [], heldLeft: [], failed: 0 }]));
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
      // The item's messages' outcomes, named as its sets name them (a pack: `{slot}:{id}`).
      const mine = unitsOf(item).map((u) => ({ u, o: outcome.get(u) as Outcome }));
      const named = (u: DelayedItem, ids: string[]) => ((u as Partial<PackedMessage>).packOf ? ids.map((id) => slotEntry((u as PackedMessage).slot, id)) : ids);
      const all = (k: 'delivered' | 'gone' | 'heldLeft') => mine.flatMap(({ u, o }) => named(u, o[k]));
      stats.droppedTargets += all('gone').length;
      try {
        if (mine.some(({ o }) => o.failed)) {
          stats.failed += mine.filter(({ o }) => o.failed).length;
          // Only the targets not reached are sent again once the claim expires.
          return await recordHandoverProgress(item, all('delivered'), all('gone'), all('heldLeft'));
        }
        const reached = mine.filter(({ u, o }) => o.delivered.length > 0 || (u.handed_to?.size ?? 0) > 0).length;
        const count = messagesOf(item);
        const finished = await finishDelayed(item, reached > 0 || (item.handed_to?.size ?? 0) > 0 ? 'sent' : 'dropped', now, tokens.get(item) as string).catch(async (e) => {
          // The sends are made (and their held parts ended): recorded, so that the retry after
          // the claim expires makes neither again.
          await recordHandoverProgress(item, all('delivered'), all('gone')).catch(() => undefined);
          throw e;
        });
        if (!finished) return;
        if (Date.now() > opts.deadline) stats.finishedAfterDeadline++;
        // The namespace's held quota: every message the item still held (a pack's bytes exclude its cancelled slots).
        const l = left.get(item.namespace) ?? { count: 0, bytes: 0 };
        l.count += count;
        l.bytes += item.size ?? 0;
        left.set(item.namespace, l);
        stats.handed += reached;
        stats.dropped += count - reached;
        for (const { u } of mine) stats.maxLateMs = Math.max(stats.maxLateMs, clock() - u.due_at);
      } catch (e) {
        opts.failed(e, where(item)); // left claimed: a later tick takes it over once the claim expires
      }
    }),
  );
  // The namespaces' held quotas: one update per namespace of the page.
  await Promise.all([...left].map(([ns, l]) => releaseHeld(ns, l.count, l.bytes).catch((e) => opts.failed(e, { namespace: ns, held_quota: l }))));
}
