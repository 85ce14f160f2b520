/**
 * The ordered queue's promises (docs/publishing-and-queues.md "Ordered queues"): every message
 * answered 201 is received; one key's messages come in publish order, and no consume gets a later
 * one of a key while an earlier one is in flight (received, not acked, visibility not ended); SQS
 * FIFO hands no message to two consumers within its visibility. Times are judged conservatively:
 * a receive happened between its consume's send and answer, a deletion no earlier than its ack's send.
 */
import { fifoGroupOf, type FifoSeen, type FifoReceive } from './actors-fifo';
import type { Violation } from './checkers';
import type { Ledger } from './ledger';

function collect(checker: string, cases: { step: number; what: string }[], what: string): Violation[] {
  if (!cases.length) return [];
  const sorted = [...cases].sort((a, b) => a.step - b.step);
  return [{ checker, step: sorted[0].step, count: cases.length, evidence: `${cases.length} ${what}: ${sorted.slice(0, 4).map((c) => c.what).join('; ')}` }];
}

/** Publish order of a marker within its key: `f{step}.{group}.{seq}[.{item}]` → [seq, item]. */
const orderOf = (m: string) => m.split('.').slice(2).map(Number);
const before = (a: number[], b: number[]) => a[0] < b[0] || (a[0] === b[0] && (a[1] ?? 0) < (b[1] ?? 0));

/** Fauxqs's visibility timers may fire a little early; below this it is not judged. */
const SLACK_MS = 100;

export function fifoQueue(ledger: Ledger, seen: FifoSeen, topicPrefix: string): Violation[] {
  const byMarker = new Map<string, FifoReceive[]>();
  for (const r of seen.receives) byMarker.set(r.marker, [...(byMarker.get(r.marker) ?? []), r]);
  const promised = [...ledger.promised.values()].filter((p) => p.topic.startsWith(topicPrefix));
  const lost = promised.filter((p) => !byMarker.has(p.marker)).map((p) => ({ step: p.step, what: `${p.id} (${p.marker})` }));

  const groups = new Map<string, string[]>();
  for (const p of promised) if (byMarker.has(p.marker)) groups.set(fifoGroupOf(p.marker), [...(groups.get(fifoGroupOf(p.marker)) ?? []), p.marker]);
  const order: { step: number; what: string }[] = [];
  const blocked: { step: number; what: string }[] = [];
  for (const markers of groups.values()) {
    markers.sort((a, b) => (before(orderOf(a), orderOf(b)) ? -1 : 1));
    for (let k = 1; k < markers.length; k++) {
      const rk = byMarker.get(markers[k])!;
      const firstK = Math.min(...rk.map((r) => r.answeredAt));
      for (let j = 0; j < k; j++) {
        const rj = byMarker.get(markers[j])!;
        const step = ledger.promised.get(markers[j])!.step;
        // Out of order: the later message was handed out before the earlier one was even asked for.
        if (firstK < Math.min(...rj.map((r) => r.sentAt))) order.push({ step, what: `${markers[k]} received before ${markers[j]}` });
        // A later message handed out while an earlier one was surely in flight.
        for (const a of rj) {
          const until = Math.min(a.sentAt + a.visibility * 1000 - SLACK_MS, a.ackSentAt ?? Infinity);
          const hit = rk.find((b) => b.sentAt > a.answeredAt && b.answeredAt < until);
          if (hit) blocked.push({ step, what: `${markers[k]} to ${hit.consumer} while ${markers[j]} was in flight at ${a.consumer}` });
        }
      }
    }
  }

  const twice: { step: number; what: string }[] = [];
  for (const rs of byMarker.values()) {
    const sorted = [...rs].sort((a, b) => a.sentAt - b.sentAt);
    for (let i = 1; i < sorted.length; i++) {
      const [a, b] = [sorted[i - 1], sorted[i]];
      if (b.answeredAt < a.sentAt + a.visibility * 1000 - SLACK_MS) twice.push({ step: a.step, what: `${a.id} to ${a.consumer} and, ${b.answeredAt - a.sentAt} ms later (visibility ${a.visibility} s), to ${b.consumer}` });
    }
  }
  return [
    ...collect('fifo-201-never-delivered', lost, 'ordered-queue messages answered 201 and never received'),
    ...collect('fifo-out-of-order', order, 'messages of one key received before an earlier one'),
    ...collect('fifo-later-while-earlier-in-flight', blocked, 'later messages of a key handed out while an earlier one was in flight'),
    ...collect('fifo-two-consumers-within-visibility', twice, 'messages handed out again within their visibility'),
  ];
}
