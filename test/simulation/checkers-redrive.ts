/**
 * Redrive: each dead letter arrives once more at the topic it is redriven to. `arrived` is what
 * the target queue held (markers, one per receive of a distinct message id) once every dead
 * letter was redriven. Twice is allowed only when some redrive call may have failed midway (the
 * docs' at-least-once: an answer not 200, or `published_not_removed` above 0); when the calls
 * moved as many messages as arrived, the second copy was already in the dead-letter queue: the
 * dead-lettering's defect (dead-lettered-more-than-once), not the redrive's.
 */
import type { RedriveSeen } from './actors-redrive';
import type { Violation } from './checkers';
import type { Ledger } from './ledger';

export function redrivenOnce(ledger: Ledger, seen: RedriveSeen, arrived: [string, string][]): Violation[] {
  const ids = new Map<string, Set<string>>();
  for (const [m, id] of arrived) ids.set(m, (ids.get(m) ?? new Set()).add(id));
  const step = (m: string) => ledger.promised.get(m)?.step ?? 0;
  const never = seen.markers.filter((m) => !ids.has(m));
  const twice = seen.markers.filter((m) => (ids.get(m)?.size ?? 0) > 1);
  const mayRepeat = seen.calls.some((c) => c.status !== 200 || c.notRemoved > 0);
  const moved = seen.calls.reduce((s, c) => s + c.moved, 0);
  const copies = [...ids.values()].reduce((s, v) => s + v.size, 0);
  const out: Violation[] = [];
  if (never.length) out.push({ checker: 'redrive-never-arrived', step: Math.min(...never.map(step)), count: never.length, evidence: `${never.length} dead letters never arrived at the redrive's topic: ${never.slice(0, 4).map((m) => `${ledger.promised.get(m)?.id} (${m})`).join('; ')}` });
  if (twice.length && !mayRepeat) {
    const checker = copies <= moved ? 'dead-lettered-more-than-once' : 'redrive-arrived-twice';
    out.push({ checker, step: Math.min(...twice.map(step)), count: twice.length, evidence: `${twice.length} redriven messages arrived more than once (${copies} copies arrived, the redrive calls moved ${moved}, every call 200 with nothing published and not removed): ${twice.slice(0, 4).map((m) => `${m} x${ids.get(m)!.size}`).join('; ')}` });
  }
  return out;
}
