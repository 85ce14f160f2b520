/**
 * Held messages packed per publish request (docs/design/0015-long-delays-held-in-dynamodb.md,
 * "Packs"): the messages of one publish request held for the same targets and due in the same
 * minute are one pack, so the handover claims, reads and finishes one item for all of them.
 *
 * - The pack's body (`#BODY` of the pack's partition): every message of the pack and its due time,
 *   written first, never written again; it expires by TTL a week after the pack's due time (TTL
 *   deletes cost no write units:
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
 * - One slot item per message at the key a held message always had
 *   (`NS#{ns}#DELAYED#{message_id}`, ./scheduler.ts), naming its pack and slot, so a cancel by
 *   message id finds it. It is never in the due index, and expires a week after its due time.
 * - The pack's state item, written last, the one in the due index: state, claim, targets, the
 *   number of slots, the bytes still held and the set of cancelled slots. It stays small (no
 *   message in it), so a claim and a finish cost 1 write unit each for the whole pack (DynamoDB
 *   bills an update by the larger of the item's size before and after:
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
 *
 * A cancel marks its slot on the pack's state item, conditional on the pack not being claimed, in
 * the same write that takes its bytes out of the pack's (so the handover's release of the
 * namespace's held quota counts only the slots not cancelled). One write decides between the
 * cancel and the claim: the claim reads the cancelled slots it won against (ALL_NEW). The slot
 * item then becomes the cancel's tombstone (state, release hold) as an unpacked item is.
 *
 * A handover's progress on a pack (targets reached, targets found deleted, held parts left) is
 * recorded in the state item's sets as `{slot}:{binding id}`, so a retry sends only what was not
 * stored, per message and target.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { batchGet, putEach } from '../../core/storage/batch';
import { schedulerKeys, ttlSeconds } from '../../core/storage/keys';
import type { Binding } from '../../core/storage/resources';
import type { PublishedMessage } from '../../core/rules/message';
import { dueShard, timeKey } from '../../core/rules/delays';
import type { DelayedItem } from './scheduler';

const TABLE = () => tableName('scheduler');
const STATE_SK = schedulerKeys.delayed('', '').sk;
const BODY_SK = schedulerKeys.delayedBody('', '').sk;
const TOMBSTONE_MS = 7 * 24 * 3600_000;

/** A pack's id starts with this: never a message id (those are letters and digits), so a cancel never names one. */
export const PACK_PREFIX = 'pack-';
/** Messages and bytes (their JSON) per pack at most: items are at most 400 KB. */
const PACK_MAX_MESSAGES = 100;
const PACK_MAX_BYTES = 300 * 1024;

/** The slot item of a packed message (at its message id's key). */
export interface SlotItem {
  pk: string;
  sk: string;
  namespace: string;
  message_id: string;
  /** The pack's state item's partition key. */
  pack: string;
  slot: number;
  due_at: number;
  size: number;
  /** The publish's time (the message's `published_at`): the expiry bucket a cancel gives back. */
  created_at: number;
  bucketed: true;
  ttl: number;
}

export interface NewPack {
  state: DelayedItem & Record<string, unknown>;
  body: Record<string, unknown>;
  slots: SlotItem[];
  messages: PublishedMessage[];
}

/** The messages of one publish request cut into packs: same targets, due in the same minute, at most {@link PACK_MAX_MESSAGES} and {@link PACK_MAX_BYTES} each. Lone messages are left out (`single`): a pack of one would cost more than an unpacked item. */
export function packsOf(ns: string, held: { m: PublishedMessage; targets: Binding[]; due: number }[], now: number): { packs: NewPack[]; single: typeof held } {
  const groups = new Map<string, typeof held>();
  for (const h of held) {
    const key = `${Math.floor(h.due / 60_000)}#${h.targets.map((t) => `${t.kind}:${t.id}`).join(',')}`;
    groups.set(key, [...(groups.get(key) ?? []), h]);
  }
  const packs: NewPack[] = [];
  const single: typeof held = [];
  for (const g of groups.values()) {
    let cut: typeof held = [];
    let bytes = 0;
    const flush = () => {
      if (cut.length === 1) single.push(cut[0]);
      else if (cut.length) packs.push(newPack(ns, cut, now));
      cut = [];
      bytes = 0;
    };
    for (const h of g) {
      const b = Buffer.byteLength(JSON.stringify(h.m)) + 32;
      if (cut.length >= PACK_MAX_MESSAGES || (cut.length && bytes + b > PACK_MAX_BYTES)) flush();
      cut.push(h);
      bytes += b;
    }
    flush();
  }
  return { packs, single };
}

function newPack(ns: string, held: { m: PublishedMessage; targets: Binding[]; due: number }[], now: number): NewPack {
  const id = `${PACK_PREFIX}${randomUUID()}`;
  const key = schedulerKeys.delayed(ns, id);
  const due = Math.min(...held.map((h) => h.due));
  const last = Math.max(...held.map((h) => h.due));
  const state = {
    ...key,
    namespace: ns,
    message_id: id,
    due_at: due,
    state: 'pending' as const,
    targets: held[0].targets,
    size: held.reduce((n, h) => n + h.m.size, 0),
    slots: held.length,
    created_at: now,
    bucketed: true,
    ...heldMarks(held.flatMap((h, slot) => h.targets.flatMap((t, k) => (t.kind === 'QUEUE' ? [slotEntry(slot, String(k))] : [])))),
    due_shard: schedulerKeys.dueShard('M', dueShard(id)),
    due_sk: schedulerKeys.dueSk(timeKey(due), ns, id),
  };
  const body = { pk: key.pk, sk: BODY_SK, messages: held.map((h) => h.m), dues: held.map((h) => h.due), ttl: ttlSeconds(last + TOMBSTONE_MS) };
  const slots = held.map((h, slot): SlotItem => ({
    ...schedulerKeys.delayed(ns, h.m.message_id),
    namespace: ns,
    message_id: h.m.message_id,
    pack: key.pk,
    slot,
    due_at: h.due,
    size: h.m.size,
    created_at: h.m.published_at,
    bucketed: true,
    ttl: ttlSeconds(h.due + TOMBSTONE_MS),
  }));
  return { state, body, slots, messages: held.map((h) => h.m) };
}

/**
 * Stores packs: the bodies, then the slot items, then the state items of the packs whose body and
 * slots are all stored (BatchWriteItem), so the tick never finds a pack it cannot hand over and a
 * cancel finds every message of a pack the tick can. The indexes of the packs not confirmed
 * stored (slots or a body stored without their state item are never handed over, and a cancel of
 * them answers 404; they expire by TTL).
 */
export async function putPacks(packs: NewPack[]): Promise<{ failed: number[]; error?: unknown }> {
  const bodies = await putEach(TABLE(), packs.map((p) => p.body));
  const slotOwner = packs.flatMap((p, k) => p.slots.map(() => k));
  const slots = await putEach(TABLE(), packs.flatMap((p) => p.slots) as unknown as Record<string, unknown>[]);
  const lost = new Set([...bodies.failed, ...slots.failed.map((j) => slotOwner[j])]);
  const ready = packs.map((_, k) => k).filter((k) => !lost.has(k));
  const states = await putEach(TABLE(), ready.map((k) => packs[k].state));
  for (const j of states.failed) lost.add(ready[j]);
  return { failed: [...lost].sort((a, b) => a - b), error: bodies.error ?? slots.error ?? states.error };
}

/** A new held item's open held parts (`held_open`, no attribute when none: DynamoDB has no empty set). */
export const heldMarks = (entries: string[]) => ({ held_marked: true, ...(entries.length ? { held_open: new Set(entries) } : {}) });

/**
 * How a held item's `held_open` names its held part in a queue: the queue id, or in a pack
 * `{slot}:{index of the queue in the pack's targets}` (short: a pack of 100 keeps its state item
 * near 1 KB, which its claim and finish are billed by).
 */
export const openEntry = (item: DelayedItem, queueId: string) => {
  const slot = (item as Partial<PackedMessage>).slot;
  return slot === undefined ? queueId : slotEntry(slot, String((item.targets ?? []).findIndex((t) => t.id === queueId)));
};

/** Whether a held item is a pack's state item. */
/** A state item's held-part entries, taken out of its `held_open` at handover. */
export interface OpenMark {
  pk: string;
  sk: string;
  entries: string[];
}

/**
 * The updates that take each mark's entries out of its state item's `held_open`, conditional on
 * all being there (made in the transaction that ends the held part: ./queue-held.ts `addHeldOnce`).
 */
export const openMarkUpdates = (marks: OpenMark[]) =>
  marks.map((m) => ({
    Update: {
      TableName: TABLE(),
      Key: { pk: m.pk, sk: m.sk },
      UpdateExpression: 'DELETE held_open :e',
      ConditionExpression: m.entries.map((_, k) => `contains(held_open, :e${k})`).join(' AND '),
      ExpressionAttributeValues: { ':e': new Set(m.entries), ...Object.fromEntries(m.entries.map((e, k) => [`:e${k}`, e])) },
    },
  }));

export const isPack = (item: Pick<DelayedItem, 'message_id'>) => item.message_id.startsWith(PACK_PREFIX);

/** How many messages a held item still holds (a pack: its slots not cancelled). */
export const messagesOf = (item: DelayedItem) => (isPack(item) ? Math.max(0, ((item as PackItem).slots ?? 1) - ((item as PackItem).cancelled?.size ?? 0)) : 1);

/** A pack's state item as read. */
export type PackItem = DelayedItem & { slots?: number; cancelled?: Set<number> };

/** One message of a claimed pack, as the handover treats a held message (its progress read from the pack's sets). */
export type PackedMessage = DelayedItem & { packOf: PackItem; slot: number };

/** `{slot}:{binding id}`: a pack's progress entry. */
export const slotEntry = (slot: number, id: string) => `${slot}:${id}`;

/**
 * The messages of claimed packs not cancelled, read from their bodies (strongly consistent, like
 * the state items), each with its own progress. A pack whose body is gone yields none.
 */
export async function unpack(packs: PackItem[]): Promise<Map<PackItem, PackedMessage[]>> {
  const out = new Map<PackItem, PackedMessage[]>(packs.map((p) => [p, []]));
  if (!packs.length) return out;
  const bodies = await batchGet<{ pk: string; messages: PublishedMessage[]; dues: number[] }>(TABLE(), packs.map((p) => ({ pk: p.pk, sk: BODY_SK })), true);
  const byPk = new Map(bodies.map((b) => [b.pk, b]));
  for (const p of packs) {
    const body = byPk.get(p.pk);
    if (!body) continue;
    const of = (set: Set<string> | undefined, slot: number) => {
      const prefix = `${slot}:`;
      const ids = [...(set ?? [])].filter((e) => e.startsWith(prefix)).map((e) => e.slice(prefix.length));
      return ids.length ? new Set(ids) : undefined;
    };
    body.messages.forEach((m, slot) => {
      if (p.cancelled?.has(slot)) return;
      (out.get(p) as PackedMessage[]).push({
        ...p,
        message_id: m.message_id,
        due_at: body.dues[slot],
        message: m,
        size: m.size,
        created_at: m.published_at,
        handed_to: of(p.handed_to, slot),
        gone_from: of(p.gone_from, slot),
        held_left: of(p.held_left, slot),
        packOf: p,
        slot,
      });
    });
  }
  return out;
}

export type SlotCancel = { outcome: 'cancelled' | 'already'; item: DelayedItem } | { outcome: 'unknown' };

/**
 * Cancels one packed message: marks its slot on the pack's state item while the pack is pending
 * (taking its bytes out of the pack's), then makes its slot item the cancel's tombstone (with the
 * pack's targets and the cancel's release hold, as ./scheduler-cancel.ts `cancelDelayed` leaves an
 * unpacked item). A slot marked whose tombstone was not written (the cancel failed between the
 * two) is finished by the retry, which then gives the room back.
 */
export async function cancelSlot(slot: SlotItem, now: number, lease: number): Promise<SlotCancel> {
  const packKey = { pk: slot.pack, sk: STATE_SK };
  let pack: PackItem | undefined;
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: packKey,
        UpdateExpression: 'ADD cancelled :slot, size :minus',
        ConditionExpression: '#s = :pending AND NOT contains(cancelled, :n)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':slot': new Set([slot.slot]), ':n': slot.slot, ':minus': -slot.size, ':pending': 'pending' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    pack = out.Attributes as PackItem;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const [now_] = await batchGet<PackItem>(TABLE(), [packKey], true);
    if (!now_) return { outcome: 'unknown' };
    if (!now_.cancelled?.has(slot.slot)) return { outcome: 'already', item: { ...now_, message_id: slot.message_id, due_at: slot.due_at } };
    pack = now_; // marked by an earlier try of this cancel, whose tombstone may be missing
  }
  // The tombstone write's token: a resend of this very write by the SDK (its answer lost) fails
  // its condition on the write itself, and reads it back (ALL_OLD) as this cancel's, not another's.
  const token = randomUUID();
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: slot.pk, sk: slot.sk },
        UpdateExpression: 'SET #s = :cancelled, done_at = :now, release_until = :lease, targets = :targets, cancel_token = :tok',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#s)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':now': now, ':lease': lease, ':targets': pack.targets ?? [], ':tok': token },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { outcome: 'cancelled', item: out.Attributes as DelayedItem };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const old = (e as { Item?: Record<string, unknown> }).Item;
    const item = old && (unmarshall(old as Parameters<typeof unmarshall>[0]) as DelayedItem & { cancel_token?: string });
    if (!item) return { outcome: 'unknown' };
    // This cancel's own write, applied: it goes on to give the room back.
    if (item.cancel_token === token) return { outcome: 'cancelled', item };
    // Another try of this cancel wrote the tombstone meanwhile: answered as a repeated cancel.
    return { outcome: 'already', item };
  }
}

/**
 * The state of held messages by id, as a reader outside the tick sees them (tests, the
 * simulation): an unpacked item as it is; a packed message as its pack's state with its own
 * progress (`handed_to` of its slot), or `cancelled` (its tombstone).
 */
export async function heldStates(ns: string, ids: string[]): Promise<DelayedItem[]> {
  const items = await batchGet<DelayedItem & Partial<SlotItem>>(TABLE(), ids.map((id) => schedulerKeys.delayed(ns, id)), true);
  const packKeys = [...new Set(items.filter((i) => i.pack && !i.state).map((i) => i.pack as string))].map((pk) => ({ pk, sk: STATE_SK }));
  const packs = new Map((await batchGet<PackItem>(TABLE(), packKeys, true)).map((p) => [p.pk, p]));
  return items.flatMap((i): DelayedItem[] => {
    if (!i.pack || i.state) return [i];
    const p = packs.get(i.pack);
    if (!p) return [];
    const prefix = `${i.slot}:`;
    const handed = [...(p.handed_to ?? [])].filter((e) => e.startsWith(prefix)).map((e) => e.slice(prefix.length));
    return [{ ...p, message_id: i.message_id, due_at: i.due_at as number, size: i.size as number, handed_to: handed.length ? new Set(handed) : undefined }];
  });
}
