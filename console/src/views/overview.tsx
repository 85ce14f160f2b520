/** The namespace: its resources and the rate-limit headroom of each category in this minute. */
import { unwrap, type Session } from '../api';
import { href } from '../router';
import { LoadState, useLoad, when } from '../ui';

export function Overview({ session }: { session: Session }) {
  const { api } = session;
  const loaded = useLoad(
    async () => {
      const page = { params: { query: { limit: 1 } } } as const;
      const [ns, access, queues, streams, subscriptions, webhooks] = await Promise.all([
        api.GET('/namespace').then(unwrap),
        api.GET('/namespace/access').then(unwrap),
        api.GET('/queues', page).then(unwrap),
        api.GET('/streams', page).then(unwrap),
        api.GET('/subscriptions', page).then(unwrap),
        api.GET('/webhooks', page).then(unwrap),
      ]);
      return { ns, access, counts: { queues: queues.total, streams: streams.total, subscriptions: subscriptions.total, webhooks: webhooks.total } };
    },
    [],
    15_000,
  );
  return (
    <>
      <h1>Namespace</h1>
      <LoadState loaded={loaded}>
        {({ ns, access, counts }) => (
          <>
            <dl class="facts">
              <dt>Name</dt>
              <dd>{ns.name}</dd>
              <dt>Endpoint</dt>
              <dd>
                <code>{ns.endpoint}</code>
              </dd>
              <dt>Status</dt>
              <dd>{ns.status}</dd>
              <dt>Created</dt>
              <dd>{when(ns.created_at)}</dd>
              <dt>This key</dt>
              <dd>
                <code>{access.key_id}</code>, scopes {access.scopes.join(', ')}
              </dd>
            </dl>
            <h2>Resources</h2>
            <ul class="cards">
              {(Object.keys(counts) as (keyof typeof counts)[]).map((k) => (
                <li key={k}>
                  <a href={href(k)}>
                    <strong data-testid={`count-${k}`}>{counts[k]}</strong> {k}
                  </a>
                </li>
              ))}
            </ul>
            <h2>Rate-limit headroom (this minute)</h2>
            <table>
              <caption>Requests left per category until the window resets</caption>
              <thead>
                <tr>
                  <th scope="col">Category</th>
                  <th scope="col">Remaining</th>
                  <th scope="col">Limit per minute</th>
                  <th scope="col">Headroom</th>
                  <th scope="col">Resets</th>
                </tr>
              </thead>
              <tbody>
                {access.rate_limits.map((r) => (
                  <tr key={r.category} data-testid={`rate-${r.category}`}>
                    <th scope="row">{r.category}</th>
                    <td>{r.remaining}</td>
                    <td>{r.limit}</td>
                    <td>
                      <meter min={0} max={r.limit} low={r.limit * 0.2} optimum={r.limit} value={r.remaining} aria-label={`${r.category} headroom`}>
                        {r.remaining} of {r.limit}
                      </meter>{' '}
                      {r.limit ? Math.round((100 * r.remaining) / r.limit) : 0}%
                    </td>
                    <td>{when(new Date(r.reset * 1000).toISOString())}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </LoadState>
    </>
  );
}
