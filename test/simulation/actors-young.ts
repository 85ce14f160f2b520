/**
 * Young queues (docs/design/0005-queues-on-sqs.md, "Create"): a queue created mid-run, and at times
 * deleted and created again under the same name at once, is published to and consumed from right
 * after its 201, while SQS may still refuse the new queue (AWS: "wait at least one second after
 * the queue is created"; the harsh layer refuses it for a second, local/aws-harsh/sqs.ts). The
 * docs promise that a publish and a consume right after the create work: a consume never answers
 * 404 for the live queue, every publish answered 201 after the create is delivered, and a
 * recreated queue never sees the old queue's messages. ./checkers-young.ts judges them.
 */
import { markerOf } from './ledger';
import type { World } from './world';

export interface YoungSeen {
  /** The queues created, with the step (drained at the end). */
  queues: { name: string; step: number }[];
  /** Markers answered 201 while the queue's last create stood. */
  promised: { marker: string; queue: string; step: number }[];
  /** Markers answered 201 to a queue the step then deleted: the recreated queue must not return them. */
  before: { marker: string; queue: string; step: number }[];
  /** Markers returned by a consume, with the queue. */
  received: { marker: string; queue: string }[];
  /** Consumes of a live queue answered 404. */
  refused: { step: number; what: string }[];
  /** Steps whose create or delete was not answered 2xx (nothing judged), with the answer, for the log. */
  skipped: string[];
}

export const newYoungSeen = (): YoungSeen => ({ queues: [], promised: [], before: [], received: [], refused: [], skipped: [] });

export type YoungAction = { kind: 'young-queue'; n: number; consumers: number; recreate: boolean };

export async function actYoungQueue(w: World, seen: YoungSeen, a: { n: number; consumers: number; recreate: boolean }, step: number): Promise<void> {
  const { ledger } = w;
  const name = `${w.names.root}-y${step}`;
  const topic = `${w.names.root}/y/${step}/x`;
  const create = () => ledger.call('young-admin', 'POST', '/queues', { name, topic_filter: `${w.names.root}/y/${step}/#` });
  // Only what the management calls answered 2xx is judged: a create or delete answered 5xx may
  // or may not have been applied.
  const skip = (what: string, ans: { status: number; code?: string }) => void seen.skipped.push(`step ${step} ${what}: ${ans.status}${ans.code ? ` ${ans.code}` : ''}`);
  const first = await create();
  if (first.status !== 201) return skip('create', first);
  if (a.recreate) {
    // The first queue gets a few messages right after its create, then goes, and a queue of the
    // same name is created at once: a new SQS queue, younger than a second again.
    await Promise.all(
      Array.from({ length: 3 }, async (_, i) => {
        const m = `y${step}.old.${i}`;
        if ((await ledger.publish('young-publisher', topic, [m])).status === 201) seen.before.push({ marker: m, queue: name, step });
      }),
    );
    const del = await ledger.call('young-admin', 'DELETE', `/queues/${name}`);
    if (del.status >= 300) return skip('delete', del);
    const again = await create();
    if (again.status !== 201) return skip('create again', again);
  }
  seen.queues.push({ name, step });
  const createdAt = Date.now();
  await Promise.all([
    ...Array.from({ length: a.n }, async (_, i) => {
      const m = `y${step}.${i}`;
      if ((await ledger.publish('young-publisher', topic, [m])).status === 201) seen.promised.push({ marker: m, queue: name, step });
    }),
    ...Array.from({ length: a.consumers }, async () => {
      for (let round = 0; round < 3; round++) {
        // The first consume at once and without a wait, as a client that creates and reads.
        const sentAt = Date.now();
        const got = await ledger.call('young-consumer', 'POST', `/queues/${name}/messages/consume`, { max_messages: 10, timeout_seconds: round === 0 ? 0 : 1, visibility_timeout_seconds: 5 });
        if (got.status === 404) seen.refused.push({ step, what: `${name}: a consume sent ${sentAt - createdAt} ms after the create's 201 answered 404 ${got.code}` });
        if (got.status !== 200) continue;
        const msgs = got.body!.data.messages as { message_id: string; payload: string; receipt_handle: string }[];
        seen.received.push(...msgs.map((m) => ({ marker: markerOf(m.payload) ?? '?', queue: name })));
        if (msgs.length) await ledger.call('young-consumer', 'POST', `/queues/${name}/messages/ack`, { entries: msgs.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
      }
    }),
  ]);
}
