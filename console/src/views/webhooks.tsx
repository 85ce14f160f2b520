/**
 * Webhooks: the list, and one webhook's health and counters, its delivery log (filters by outcome
 * and message id), replay of one delivery or of everything failed since a time, a test delivery
 * and secret rotation (the new secret shown once, with a copy button).
 */
import { useState } from 'preact/hooks';
import { unwrap, type Schemas, type Session } from '../api';
import { href } from '../router';
import { ActionButton, ago, Field, formValues, LoadState, Notice, useAction, useLoad, when } from '../ui';

export function WebhookList({ session }: { session: Session }) {
  const loaded = useLoad(() => session.api.GET('/webhooks', { params: { query: { limit: 100 } } }).then(unwrap), [], 10_000);
  return (
    <>
      <h1>Webhooks</h1>
      <LoadState loaded={loaded}>
        {(list) =>
          list.webhooks.length === 0 ? (
            <p>No webhooks yet.</p>
          ) : (
            <table>
              <caption>{list.total} webhooks</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">URL</th>
                  <th scope="col">Topic filter</th>
                  <th scope="col">Enabled</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {list.webhooks.map((w) => (
                  <tr key={w.name}>
                    <th scope="row">
                      <a href={href('webhooks', w.name)}>{w.name}</a>
                    </th>
                    <td>
                      <code>{w.url}</code>
                    </td>
                    <td>
                      <code>{w.topic_filter}</code>
                    </td>
                    <td>{w.enabled ? 'yes' : 'no'}</td>
                    <td>{w.status}</td>
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

type Filter = { status?: 'failed' | 'succeeded'; message_id?: string };

function SecretOnce({ secret, expires }: { secret: string; expires: string | null }) {
  const [copied, setCopied] = useState('');
  return (
    <div class="secret" role="status">
      <p>
        New secret, shown this once: copy it to your receiver now. {expires ? <>The old one still signs until {when(expires)}.</> : null}
      </p>
      <code data-testid="new-secret">{secret}</code>{' '}
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(secret).then(
            () => setCopied('Copied.'),
            () => setCopied('The browser refused the clipboard: select the secret and copy it.'),
          )
        }
      >
        Copy secret
      </button>{' '}
      <span>{copied}</span>
    </div>
  );
}

export function WebhookView({ session, name }: { session: Session; name: string }) {
  const { api } = session;
  const path = { webhook_name: name };
  const [filter, setFilter] = useState<Filter>({});
  const loaded = useLoad(
    async () => {
      const [w, status, log] = await Promise.all([
        api.GET('/webhooks/{webhook_name}', { params: { path } }).then(unwrap),
        api.GET('/webhooks/{webhook_name}/status', { params: { path } }).then(unwrap),
        api.GET('/webhooks/{webhook_name}/deliveries', { params: { path, query: { limit: 50, ...filter } } }).then(unwrap),
      ]);
      return { w, status, log };
    },
    [name, filter.status, filter.message_id],
    5000,
  );
  const replay = useAction();
  const bulk = useAction();
  const test = useAction();
  const rotate = useAction();
  const [secret, setSecret] = useState<Schemas['WebhookSecretRotated']>();

  const replayOne = (messageId: string) =>
    replay.run(async () => {
      const r = unwrap(await api.POST('/webhooks/{webhook_name}/deliveries/{message_id}/replay', { params: { path: { webhook_name: name, message_id: messageId } } }));
      loaded.reload();
      return `Replay of ${r.message_id} queued (${r.replay_id}).`;
    });

  return (
    <>
      <h1>
        Webhook <code>{name}</code>
      </h1>
      <p>
        <a href={href('webhooks')}>All webhooks</a>
      </p>
      <LoadState loaded={loaded}>
        {({ w, status }) => (
          <dl class="facts">
            <dt>URL</dt>
            <dd>
              <code>{w.url}</code>
            </dd>
            <dt>Enabled</dt>
            <dd>{w.enabled ? 'yes' : 'no'}</dd>
            <dt>Status</dt>
            <dd data-testid="webhook-status">{status.status}</dd>
            <dt>Delivered</dt>
            <dd data-testid="success-count">{status.success_count}</dd>
            <dt>Failed</dt>
            <dd data-testid="failure-count">{status.failure_count}</dd>
            <dt>Last delivery</dt>
            <dd>
              {when(status.last_delivery)} ({ago(status.last_delivery)})
            </dd>
            <dt>Last error</dt>
            <dd data-testid="last-error">{status.last_error ?? 'none'}</dd>
            <dt>Next retry</dt>
            <dd>{when(status.next_retry)}</dd>
            <dt>Refused hooks</dt>
            <dd>
              {status.hook_failure_count}
              {status.last_hook_error ? ` (${status.last_hook_error})` : ''}
            </dd>
          </dl>
        )}
      </LoadState>

      <h2>Delivery log</h2>
      <form
        class="inline"
        aria-label="Filter deliveries"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          setFilter({ ...(v.status ? { status: v.status as Filter['status'] } : {}), ...(v.message_id ? { message_id: v.message_id } : {}) });
        }}
      >
        <Field label="Outcome">
          <select name="status">
            <option value="">all</option>
            <option value="failed">failed</option>
            <option value="succeeded">succeeded</option>
          </select>
        </Field>
        <Field label="Message id">
          <input name="message_id" />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <Notice ok={replay.ok} error={replay.error} />
      <LoadState loaded={loaded}>
        {({ log }) =>
          log.deliveries.length === 0 ? (
            <p>No delivery attempts{filter.status || filter.message_id ? ' match the filter' : ' in the last 7 days'}.</p>
          ) : (
            <table data-testid="deliveries">
              <caption>Attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Message</th>
                  <th scope="col">Attempt</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">HTTP</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Error</th>
                  <th scope="col">Action</th>
                </tr>
              </thead>
              <tbody>
                {log.deliveries.map((d) => (
                  <tr key={`${d.message_id}-${d.attempted_at}-${d.attempt}`} class={d.outcome} data-outcome={d.outcome}>
                    <td>{when(d.attempted_at)}</td>
                    <td>
                      <code>{d.message_id}</code>
                    </td>
                    <td>
                      {d.attempt}
                      {d.final ? ' (last)' : ''}
                      {d.replay ? ' replay' : ''}
                    </td>
                    <th scope="row">{d.outcome}</th>
                    <td>{d.status_code ?? '—'}</td>
                    <td>{d.duration_ms} ms</td>
                    <td>{d.error ?? ''}</td>
                    <td>
                      {d.outcome === 'failed' && d.final && (
                        <ActionButton session={session} scope="manage" type="button" busy={replay.busy} onClick={() => void replayOne(d.message_id)} aria-label={`Replay ${d.message_id}`}>
                          Replay
                        </ActionButton>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </LoadState>

      <h2>Replay failed deliveries</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          void bulk.run(async () => {
            const since = new Date(v.since).toISOString();
            const r = unwrap(await api.POST('/webhooks/{webhook_name}/replay', { params: { path }, body: { since } }));
            loaded.reload();
            return `Queued ${r.queued} replays${r.next_since ? `; more left from ${r.next_since}` : ''}.`;
          });
        }}
      >
        <Field label="Failed since (your local time)">
          <input name="since" type="datetime-local" required defaultValue={localInput(Date.now() - 3600_000)} />
        </Field>
        <ActionButton session={session} scope="manage" type="submit" busy={bulk.busy}>
          Replay failed since
        </ActionButton>
        <Notice ok={bulk.ok} error={bulk.error} />
      </form>

      <h2>Test delivery</h2>
      <p>Sends one signed test request to the webhook's URL now and shows the answer.</p>
      <ActionButton
        session={session}
        scope="manage"
        type="button"
        busy={test.busy || !loaded.data}
        onClick={() =>
          void test.run(async () => {
            const w = loaded.data!.w;
            const r = unwrap(await api.POST('/webhooks/test', { body: { name: w.name, url: w.url, topic_filter: w.topic_filter, ...(w.method ? { method: w.method } : {}) } }));
            return r.success ? `Answered ${r.status_code} in ${r.response_time_ms} ms.` : `Failed: ${r.error ?? `HTTP ${r.status_code}`} (${r.response_time_ms} ms).`;
          })
        }
      >
        Send test delivery
      </ActionButton>
      <Notice ok={test.ok} error={test.error} />

      <h2>Signing secret</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e);
          setSecret(undefined);
          void rotate.run(async () => {
            const r = unwrap(await api.POST('/webhooks/{webhook_name}/secret/rotate', { params: { path }, body: v.grace_seconds ? { grace_seconds: Number(v.grace_seconds) } : {} }));
            setSecret(r);
            return `Rotated at ${r.rotated_at}.`;
          });
        }}
      >
        <Field label="Grace period (seconds)" hint="the old secret keeps signing this long; default 24 h">
          <input name="grace_seconds" type="number" min={0} />
        </Field>
        <ActionButton session={session} scope="manage" type="submit" busy={rotate.busy}>
          Rotate secret
        </ActionButton>
        <Notice ok={rotate.ok} error={rotate.error} />
      </form>
      {secret && <SecretOnce secret={secret.secret} expires={secret.previous_secret_expires_at} />}
    </>
  );
}

/** A time as a datetime-local input value (local time, minutes). */
function localInput(ms: number) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}
