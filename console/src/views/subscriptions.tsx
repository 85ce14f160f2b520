/** Subscriptions: the list, and one subscription's subscribers with their cursors and lag. */
import { unwrap, type Session } from '../api';
import { href } from '../router';
import { LagTable } from '../lag-table';
import { LoadState, useLoad, when } from '../ui';

export function SubscriptionList({ session }: { session: Session }) {
  const loaded = useLoad(() => session.api.GET('/subscriptions', { params: { query: { limit: 100 } } }).then(unwrap), [], 10_000);
  return (
    <>
      <h1>Subscriptions</h1>
      <LoadState loaded={loaded}>
        {(list) =>
          list.subscriptions.length === 0 ? (
            <p>No subscriptions yet.</p>
          ) : (
            <table>
              <caption>{list.total} subscriptions</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Topic filter</th>
                  <th scope="col">Messages</th>
                  <th scope="col">Subscribers</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.subscriptions.map((s) => (
                  <tr key={s.name}>
                    <th scope="row">
                      <a href={href('subscriptions', s.name)}>{s.name}</a>
                    </th>
                    <td>
                      <code>{s.topic_filter}</code>
                    </td>
                    <td>{s.message_count}</td>
                    <td>{s.subscriber_count}</td>
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

export function SubscriptionView({ session, name }: { session: Session; name: string }) {
  const { api } = session;
  const loaded = useLoad(
    async () => {
      const path = { params: { path: { subscription_name: name } } };
      const [s, subs] = await Promise.all([
        api.GET('/subscriptions/{subscription_name}', path).then(unwrap),
        api.GET('/subscriptions/{subscription_name}/subscribers', path).then(unwrap),
      ]);
      return { s, subs };
    },
    [name],
    5000,
  );
  return (
    <>
      <h1>
        Subscription <code>{name}</code>
      </h1>
      <p>
        <a href={href('subscriptions')}>All subscriptions</a>
      </p>
      <LoadState loaded={loaded}>
        {({ s, subs }) => (
          <>
            <dl class="facts">
              <dt>Messages retained</dt>
              <dd>{s.message_count}</dd>
              <dt>Positions</dt>
              <dd>
                {subs.earliest_position} to {subs.next_position} (next)
              </dd>
              <dt>Topic filter</dt>
              <dd>
                <code>{s.topic_filter}</code>
              </dd>
              <dt>Message TTL</dt>
              <dd>{s.message_ttl_seconds} s</dd>
            </dl>
            <h2>Subscribers</h2>
            <LagTable
              who="Subscriber"
              position="cursor"
              caption="Cursor (the next position read) and lag (retained positions not read yet)"
              columns={['Position']}
              rows={subs.subscribers.map((c) => ({ id: c.subscriber_id, cells: [{ position: c.cursor, lag: c.lag }], last: c.last_seen }))}
              lastLabel="Last consume"
              empty="No subscriber has consumed yet."
              more={subs.more}
              testIdPrefix="subscriber"
            />
          </>
        )}
      </LoadState>
    </>
  );
}
