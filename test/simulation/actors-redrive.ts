/**
 * Redrive (docs/publishing-and-queues.md "Redrive", POST /queues/{name}/redrive): messages
 * published to a `max_retries` 0 queue are dead-lettered by consumers that never ack, then the
 * dead-letter queue is redriven to a topic a third queue reads. Every redrive answer is kept:
 * ./checkers-redrive.ts allows a message to arrive twice only when a call may have failed midway
 * (an answer not 200, or `published_not_removed` above 0), as the docs' at-least-once says.
 */
import type { World } from './world';

export interface RedriveSeen {
  /** Markers answered 201 to the redrive chain's poison queue. */
  markers: string[];
  calls: { step: number; status: number; moved: number; notRemoved: number }[];
}

export const newRedriveSeen = (): RedriveSeen => ({ markers: [], calls: [] });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Consumers that never ack (visibility 1 s) for `ms`: each message is dead-lettered at its first receive's settle. */
async function exhaust(w: World, consumers: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      while (Date.now() < until) {
        const got = await w.ledger.call('redrive-consumer', 'POST', `/queues/${w.names.redrive.source}/messages/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 1 });
        if (got.status !== 200) await sleep(200);
      }
    }),
  );
}

/**
 * Redrives the dead-letter queue to the target topic until a call moves nothing (at most `calls`
 * calls). With `until` (the drain), a call that moved nothing ends it only once `until.empty()`
 * (SQS holds none, in flight included) or after `until.ms`: a batch a failed call of a step left
 * hidden comes back after the redrive's visibility (docs/publishing-and-queues.md "Redrive"), and
 * a client retries then.
 */
export async function redriveAll(w: World, seen: RedriveSeen, step: number, calls: number, until?: { empty: () => Promise<boolean>; ms: number; pauseMs?: number }): Promise<void> {
  const end = Date.now() + (until?.ms ?? 0);
  for (let i = 0; i < calls; i++) {
    const a = await w.ledger.call('redriver', 'POST', `/queues/${w.names.redrive.dead}/redrive`, { to_topic: `${w.names.root}/rr/x`, max: 100 });
    const d = a.body?.data as { moved?: number; published_not_removed?: number; remaining?: number } | undefined;
    seen.calls.push({ step, status: a.status, moved: d?.moved ?? 0, notRemoved: d?.published_not_removed ?? 0 });
    if (a.status !== 200 || d?.moved || d?.published_not_removed) continue;
    if (!until || Date.now() >= end || (await until.empty())) return;
    await sleep(until.pauseMs ?? 2000);
  }
}

export async function actRedrive(w: World, seen: RedriveSeen, a: { n: number; consumers: number }, step: number): Promise<void> {
  const markers = Array.from({ length: a.n }, (_, i) => `rd${step}.${i}`);
  for (let i = 0; i < markers.length; i += 10) {
    const part = markers.slice(i, i + 10);
    const ans = await w.ledger.publish('redrive-publisher', `${w.names.root}/rq/x`, part);
    if (ans.status === 201) seen.markers.push(...part);
  }
  await exhaust(w, a.consumers, 3000);
  await redriveAll(w, seen, step, 5);
}
