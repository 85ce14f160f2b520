/** Streams: the list, and one stream's partitions with next offsets and its groups' commits and lag. */
import { unwrap, type Session } from '../api';
import { href } from '../router';
import { LagTable } from '../lag-table';
import { LoadState, useLoad, when } from '../ui';

export function StreamList({ session }: { session: Session }) {
  const loaded = useLoad(() => session.api.GET('/streams', { params: { query: { limit: 100 } } }).then(unwrap), [], 10_000);
  return (
    <>
      <h1>Streams</h1>
      <LoadState loaded={loaded}>
        {(list) =>
          list.streams.length === 0 ? (
            <p>No streams yet.</p>
          ) : (
            <table>
              <caption>{list.total} streams</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Topic filter</th>
                  <th scope="col">Messages</th>
                  <th scope="col">Consumer groups</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.streams.map((s) => (
                  <tr key={s.name}>
                    <th scope="row">
                      <a href={href('streams', s.name)}>{s.name}</a>
                    </th>
                    <td>
                      <code>{s.topic_filter}</code>
                    </td>
                    <td>{s.message_count}</td>
                    <td>{s.consumer_count}</td>
                    <td>{when(s.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </LoadState>
    </>
  );
}

export function StreamView({ session, name }: { session: Session; name: string }) {
  const { api } = session;
  const loaded = useLoad(
    async () => {
      const path = { params: { path: { stream_name: name } } };
      const [s, groups] = await Promise.all([api.GET('/streams/{stream_name}', path).then(unwrap), api.GET('/streams/{stream_name}/groups', path).then(unwrap)]);
      return { s, groups };
    },
    [name],
    5000,
  );
  return (
    <>
      <h1>
        Stream <code>{name}</code>
      </h1>
      <p>
        <a href={href('streams')}>All streams</a>
      </p>
      <LoadState loaded={loaded}>
        {({ s, groups }) => (
          <>
            <dl class="facts">
              <dt>Messages</dt>
              <dd>{s.message_count}</dd>
              <dt>Offsets</dt>
              <dd>
                {s.earliest_offset} to {s.latest_offset} (next)
              </dd>
              <dt>Partitions</dt>
              <dd>{s.partition_count}</dd>
              <dt>Retention</dt>
              <dd>
                {s.retention_days} days, {s.max_size_gb} GB
              </dd>
              <dt>Topic filter</dt>
              <dd>
                <code>{s.topic_filter}</code>
              </dd>
            </dl>
            <h2>Partitions</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Partition</th>
                  <th scope="col">Next offset</th>
                </tr>
              </thead>
              <tbody>
                {groups.partitions.map((p) => (
                  <tr key={p.partition}>
                    <th scope="row">{p.partition}</th>
                    <td>{p.next_offset}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Consumer groups</h2>
            <LagTable
              who="Group"
              position="committed"
              caption="Committed offset and lag (offsets behind the partition's next offset) per partition"
              columns={groups.partitions.map((p) => `Partition ${p.partition}`)}
              rows={groups.groups.map((g) => ({ id: g.group, cells: g.partitions.map((p) => ({ position: p.committed_offset, lag: p.lag })), last: g.committed_at }))}
              lastLabel="Last commit"
              empty="No group has consumed yet."
              more={groups.more}
              testIdPrefix="group"
            />
          </>
        )}
      </LoadState>
    </>
  );
}
