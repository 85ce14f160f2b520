/**
 * Young queues (./actors-young.ts): no consume of a live queue answered 404, every publish answered
 * 201 after the queue's create was received (in the step or by the drain), and a queue created
 * again under the same name returned none of the old queue's messages.
 */
import type { YoungSeen } from './actors-young';
import type { Violation } from './checkers';

export function youngQueues(seen: YoungSeen, drained: { marker: string; queue: string }[]): Violation[] {
  const got = new Set([...seen.received, ...drained].map((r) => `${r.queue} ${r.marker}`));
  const out: Violation[] = [];
  const first = (cases: { step: number }[]) => Math.min(...cases.map((c) => c.step));
  if (seen.refused.length) {
    out.push({ checker: 'young-queue-consume-404', step: first(seen.refused), count: seen.refused.length, evidence: `${seen.refused.length} consumes of a queue right after its create answered 404: ${seen.refused.slice(0, 4).map((r) => r.what).join('; ')}` });
  }
  const lost = seen.promised.filter((p) => !got.has(`${p.queue} ${p.marker}`));
  if (lost.length) {
    out.push({ checker: 'young-queue-201-never-delivered', step: first(lost), count: lost.length, evidence: `${lost.length} messages answered 201 right after their queue's create and never received: ${lost.slice(0, 4).map((p) => `${p.queue} ${p.marker}`).join('; ')}` });
  }
  const old = seen.before.filter((p) => got.has(`${p.queue} ${p.marker}`));
  if (old.length) {
    out.push({ checker: 'recreated-queue-old-message', step: first(old), count: old.length, evidence: `${old.length} messages of a deleted queue returned by the queue created again under its name: ${old.slice(0, 4).map((p) => `${p.queue} ${p.marker}`).join('; ')}` });
  }
  return out;
}
