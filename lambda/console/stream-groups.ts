/**
 * `GET /streams/{name}/groups`: a stream's partitions with their next offsets and every consumer group's positions and lag (docs/console.md). A fixed number of calls per request: at most one Query page of
 * `limit` members, never a walk of the log.
 */
import { notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { getStream } from '../streams/storage/streams';
import { getHead } from '../logs/storage/log-heads';
import { listGroupPositions } from '../logs/storage/log-members';

/**
 * Partition p's next offset: one past the last offset reserved in it (the head's `lp`), or the
 * stream's earliest offset when nothing was written there. Offsets are numbered across the whole
 * stream, so a group's lag in a partition is the offsets between its position and that next offset:
 * the most messages it can have left there.
 */
export async function streamGroups(ns: string, name: string, limit: number) {
  const s = await getStream(ns, name);
  const head = s && (await getHead({ namespace: ns, id: s.id }));
  if (!s || !head) throw notFound('STREAM_NOT_FOUND', `Stream ${name}`);
  const partitions = Array.from({ length: s.partition_count }, (_, p) => {
    const last = head.lp?.[String(p)];
    return { partition: p, next_offset: last === undefined ? head.earliest : Math.max(head.earliest, last + 1) };
  });
  const { groups, more } = await listGroupPositions(ns, s.id, limit);
  return {
    name: s.name,
    earliest_offset: head.earliest,
    latest_offset: head.next,
    partitions,
    groups: groups.map((g) => ({
      group: g.group,
      committed_offset: g.committed ?? null,
      committed_at: g.committed_at === undefined ? null : isoTime(g.committed_at),
      partitions: partitions.map(({ partition, next_offset }) => {
        const committed = g.partitions[partition] ?? g.committed ?? null;
        return { partition, committed_offset: committed, lag: Math.max(0, next_offset - Math.max(committed ?? head.earliest, head.earliest)) };
      }),
    })),
    more,
  };
}

