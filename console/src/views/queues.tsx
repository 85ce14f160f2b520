/** Queues: the list with a create form, and one queue with its counts, a chart, publish and redrive. */
import { useRef } from 'preact/hooks';
import { unwrap, type Session } from '../api';
import { href } from '../router';
import { Sparkline, type Sample } from '../chart';
import { ActionButton, ago, duration, Field, formValues, LoadState, Notice, useAction, useLoad, when } from '../ui';

export function QueueList({ session }: { session: Session }) {
  const { api } = session;
  const loaded = useLoad(() => api.GET('/queues', { params: { query: { limit: 100 } } }).then(unwrap), [], 10_000);
  const create = useAction();
  return (
    <>
      <h1>Queues</h1>
      <LoadState loaded={loaded}>
        {(list) =>
          list.queues.length === 0 ? (
            <p>No queues yet.</p>
          ) : (
            <table>
              <caption>{list.total} queues</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Topic filter</th>
                  <th scope="col">Messages</th>
                  <th scope="col">Consumers</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.queues.map((q) => (
                  <tr key={q.name}>
                    <th scope="row">
                      <a href={href('queues', q.name)}>{q.name}</a>
                    </th>
                    <td>
                      <code>{q.topic_filter}</code>
                    </td>
                    <td>{q.message_count}</td>
                    <td>{q.consumer_count}</td>
                    <td>{when(q.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </LoadState>
      <h2>Create a queue</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          void create.run(async () => {
            const q = unwrap(
              await api.POST('/queues', {
                body: {
                  name: v.name,
                  topic_filter: v.topic_filter,
                  ...(v.max_retries ? { max_retries: Number(v.max_retries) } : {}),
                  ...(v.dead_letter_topic ? { dead_letter_topic: v.dead_letter_topic } : {}),
                },
              }),
            );
            loaded.reload();
            return (
              <>
                Created queue <a href={href('queues', q.name)}>{q.name}</a>.
              </>
            );
          });
        }}
      >
        <Field label="Name">
          <input name="name" required />
        </Field>
        <Field label="Topic filter" hint="MQTT filter, e.g. orders/#">
          <input name="topic_filter" required />
        </Field>
        <Field label="Max retries" hint="optional">
          <input name="max_retries" type="number" min={0} />
        </Field>
        <Field label="Dead-letter topic" hint="optional; the key needs the publish scope as well">
          <input name="dead_letter_topic" />
        </Field>
        <ActionButton session={session} scope="manage" type="submit" busy={create.busy}>
          Create queue
        </ActionButton>
        <Notice ok={create.ok} error={create.error} />
      </form>
    </>
  );
}

/** Samples of each queue's message count, kept while the console is open (last 5 minutes). */
const HISTORY = new Map<string, Sample[]>();
const WINDOW_MS = 5 * 60_000;
/** Two management requests per poll: 24 a minute of the namespace's management limit. */
const POLL_MS = 5000;

export function QueueView({ session, name }: { session: Session; name: string }) {
  const { api } = session;
  const history = useRef(HISTORY.get(name) ?? []);
  HISTORY.set(name, history.current);
  const loaded = useLoad(
    async () => {
      const path = { params: { path: { queue_name: name } } };
      const [q, stats] = await Promise.all([api.GET('/queues/{queue_name}', path).then(unwrap), api.GET('/queues/{queue_name}/stats', path).then(unwrap)]);
      const now = Date.now();
      history.current.push({ at: now, value: q.message_count });
      while (history.current.length && history.current[0].at < now - WINDOW_MS) history.current.shift();
      return { q, stats };
    },
    [name],
    POLL_MS,
  );
  const publish = useAction();
  const redrive = useAction();
  return (
    <>
      <h1>
        Queue <code>{name}</code>
      </h1>
      <p>
        <a href={href('queues')}>All queues</a>
      </p>
      <LoadState loaded={loaded}>
        {({ q, stats }) => (
          <>
            <dl class="facts">
              <dt>Depth (messages stored)</dt>
              <dd data-testid="depth">{q.message_count}</dd>
              <dt>Visible</dt>
              <dd data-testid="visible">{stats.visible}</dd>
              <dt>In flight</dt>
              <dd data-testid="in-flight">{stats.in_flight}</dd>
              <dt>Delayed</dt>
              <dd>{stats.delayed}</dd>
              <dt>Oldest message</dt>
              <dd data-testid="oldest-age">
                {stats.oldest_message_age_seconds === null ? (
                  'none'
                ) : (
                  <>
                    {duration(stats.oldest_message_age_seconds)} old{' '}
                    <small>(at most {stats.oldest_message_age_precision_seconds} s over)</small>
                  </>
                )}
              </dd>
              <dt>Consumers (last 5 min)</dt>
              <dd data-testid="consumers">{q.consumer_count}</dd>
              <dt>Max retries</dt>
              <dd>{q.max_retries}</dd>
              <dt>Dead-letter topic</dt>
              <dd>{q.dead_letter_topic ? <code>{q.dead_letter_topic}</code> : 'none'}</dd>
              <dt>Topic filter</dt>
              <dd>
                <code>{q.topic_filter}</code>
              </dd>
              <dt>Message TTL</dt>
              <dd>{q.message_ttl_seconds} s</dd>
              <dt>Created</dt>
              <dd>
                {when(q.created_at)} ({ago(q.created_at)})
              </dd>
            </dl>
            <Sparkline samples={[...history.current]} label="Messages stored" windowMs={WINDOW_MS} />
          </>
        )}
      </LoadState>
      <h2>Publish</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          void publish.run(async () => {
            const r = unwrap(await api.POST('/topics/{topic}/messages', { params: { path: { topic: v.topic } }, body: { payload: v.payload } }));
            loaded.reload();
            return `Published ${r.message_id} to ${r.topic}.`;
          });
        }}
      >
        <Field label="Topic" hint={loaded.data ? `this queue's filter: ${loaded.data.q.topic_filter}` : undefined}>
          <input name="topic" required />
        </Field>
        <Field label="Payload">
          <textarea name="payload" rows={3} required />
        </Field>
        <ActionButton session={session} scope="publish" type="submit" busy={publish.busy}>
          Publish
        </ActionButton>
        <Notice ok={publish.ok} error={publish.error} />
      </form>
      <h2>Redrive</h2>
      <p>Moves this queue's messages (for example those of a dead-letter topic) to a topic, up to 100 per run.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          void redrive.run(async () => {
            const r = unwrap(await api.POST('/queues/{queue_name}/redrive', { params: { path: { queue_name: name } }, body: { to_topic: v.to_topic } }));
            loaded.reload();
            return `Moved ${r.moved} to ${r.topic}; ${r.remaining} left${r.expired ? `, ${r.expired} expired removed` : ''}.`;
          });
        }}
      >
        <Field label="To topic">
          <input name="to_topic" required />
        </Field>
        <ActionButton session={session} scope={['manage', 'publish']} type="submit" busy={redrive.busy}>
          Redrive
        </ActionButton>
        <Notice ok={redrive.ok} error={redrive.error} />
      </form>
    </>
  );
}
