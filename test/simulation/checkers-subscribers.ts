/**
 * Subscribers (docs/streams-and-subscriptions.md): each subscriber id receives every retained
 * message, and at most once (the cursor moves with a conditional write, so two concurrent consumes
 * with one id never get the same message). `retained` is what the checker's own subscriber read
 * from the start once settled: a message answered 201 and not retained at all is the
 * exactly-once checker's finding (subscription-201-missing), not each subscriber's again.
 */
import type { SubscriberSeen } from './actors-subscribers';
import type { Violation } from './checkers';
import type { Ledger } from './ledger';

function collect(checker: string, cases: { step: number; what: string }[], what: string): Violation[] {
  if (!cases.length) return [];
  const sorted = [...cases].sort((a, b) => a.step - b.step);
  return [{ checker, step: sorted[0].step, count: cases.length, evidence: `${cases.length} ${what}: ${sorted.slice(0, 4).map((c) => c.what).join('; ')}` }];
}

export function subscribersOnce(ledger: Ledger, seen: SubscriberSeen, topicPrefix: string, retained: string[]): Violation[] {
  const kept = new Set(retained);
  const promised = [...ledger.promised.values()].filter((p) => p.topic.startsWith(topicPrefix) && kept.has(p.marker));
  const missing: { step: number; what: string }[] = [];
  const twice: { step: number; what: string }[] = [];
  for (const [id, consumes] of seen.got) {
    const n = new Map<string, { count: number; step: number }>();
    for (const c of consumes) for (const m of c.markers) n.set(m, { count: (n.get(m)?.count ?? 0) + 1, step: Math.min(n.get(m)?.step ?? c.step, c.step) });
    const lost = promised.filter((p) => !n.has(p.marker));
    if (lost.length) missing.push({ step: Math.min(...lost.map((p) => p.step)), what: `${id}: ${lost.length} (first ${lost[0].id})` });
    const dup = [...n].filter(([, v]) => v.count > 1);
    if (dup.length) twice.push({ step: Math.min(...dup.map(([, v]) => v.step)), what: `${id}: ${dup.length} (first ${dup[0][0]} x${dup[0][1].count})` });
  }
  return [
    ...collect('subscriber-201-missing', missing, 'subscribers that never received messages answered 201 and retained'),
    ...collect('subscriber-received-twice', twice, 'subscribers that received a message more than once'),
  ];
}
