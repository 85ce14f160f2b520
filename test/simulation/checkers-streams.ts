/**
 * Stream consumer groups (docs/streams-and-subscriptions.md): a page read from a known start
 * (earliest, an integer, or the group's acknowledged commit, which a consume without
 * `start_offset` resumes at) holds every message the stream holds from that start up to its
 * `next_offset`, none before the start; offsets strictly increase within a page (so within each
 * partition), and `next_offset` is the last returned offset + 1. `log` is the whole stream read
 * from 0 once settled (offset → marker), which includes every message answered 201 that the
 * stream kept (one answered 201 and missing is the exactly-once checker's).
 */
import type { StreamPage } from './actors-streams';
import type { Violation } from './checkers';

function collect(checker: string, cases: { step: number; what: string }[], what: string): Violation[] {
  if (!cases.length) return [];
  const sorted = [...cases].sort((a, b) => a.step - b.step);
  return [{ checker, step: sorted[0].step, count: cases.length, evidence: `${cases.length} ${what}: ${sorted.slice(0, 4).map((c) => c.what).join('; ')}` }];
}

export function streamGroups(pages: StreamPage[], log: Map<number, string>): Violation[] {
  const skipped: { step: number; what: string }[] = [];
  const before: { step: number; what: string }[] = [];
  const order: { step: number; what: string }[] = [];
  const ordered = [...log.keys()].sort((a, b) => a - b);
  for (const p of pages) {
    const offs = p.messages.map((m) => m.offset);
    const where = `group ${p.group} (${p.how}${p.from === undefined ? '' : ` ${p.from}`})`;
    const bad = offs.findIndex((o, i) => i > 0 && o <= offs[i - 1]);
    if (bad > 0) order.push({ step: p.step, what: `${where}: offset ${offs[bad]} after ${offs[bad - 1]}` });
    if (offs.length && p.next !== offs[offs.length - 1] + 1) order.push({ step: p.step, what: `${where}: next_offset ${p.next} after last offset ${offs[offs.length - 1]}` });
    if (p.from === undefined) continue;
    if (offs.length && offs[0] < p.from) before.push({ step: p.step, what: `${where}: offset ${offs[0]} before its start` });
    const have = new Set(offs);
    const end = offs.length ? p.next : p.from;
    const missing = ordered.filter((o) => o >= p.from! && o < end && !have.has(o));
    if (missing.length) skipped.push({ step: p.step, what: `${where}: ${missing.length} messages from ${p.from} to next_offset ${end} not returned (first ${missing[0]}: ${log.get(missing[0])})` });
  }
  return [
    ...collect('stream-group-skipped', skipped, 'pages that skipped messages between their start (or the committed offset) and next_offset'),
    ...collect('stream-group-before-start', before, 'pages that returned a message before their start or committed offset'),
    ...collect('stream-group-offsets-not-increasing', order, 'pages whose offsets do not strictly increase or whose next_offset is not the last offset + 1'),
  ];
}

/**
 * A log's `message_count` once settled (after the drain) equals the messages a reader reads from
 * its start: the count is positions less gaps, so a message stored inside a gap (a chunk that
 * landed after its block was settled as dead) must not be read either. `step` is where the
 * evidence points (the last step, or the first late chunk's).
 */
export function countsAgree(checker: string, log: string, counted: number | undefined, read: number, step: number, detail: string): Violation[] {
  return counted === read ? [] : [{ checker, step, count: 1, evidence: `${log}: message_count ${counted}, read from its start ${read} (${detail})` }];
}
