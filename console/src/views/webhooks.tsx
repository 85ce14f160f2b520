/**
 * Webhooks: the list, and one webhook's health and counters, its delivery log (filters by outcome
 * and message id), replay of one delivery or of everything failed since a time, a test delivery
 * and secret rotation (the new secret shown once, with a copy button).
 */
import { useState } from 'preact/hooks';
import { unwrap, type Schemas, type Scope, type Session } from '../api';
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
                    <td>{statusText(w as WebhookWithLimits, w.status)}</td>
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

/**
 * Endpoint limits and health as a webhook's answer carries them: a key without the `manage` scope
 * is not shown the limits (client/api.ts `Webhook`), so they are optional here and shown only when present.
 */
export interface EndpointLimits {
  /** Deliveries per second, 1-10000; null: no limit. */
  rate_limit?: number | null;
  /** Deliveries in flight at once, 1-1000; null: no limit. */
  max_in_flight?: number | null;
  /** `active`, `failing` or `disabled`. */
  status?: string;
  /** Why it is disabled, e.g. `user` or `health`. */
  disabled_reason?: string | null;
  disabled_at?: string | null;
}
type WebhookWithLimits = Schemas['Webhook'] & EndpointLimits;

/** A replay sends retained payloads to the webhook's URL: `consume` as well (docs/security.md). */
const REPLAY_SCOPES = ['manage', 'consume'] as const;

/** What a PATCH of `w` needs (docs/security.md): `consume` while it is enabled, `publish` while it has a hook. */
const writeScopes = (w: Schemas['Webhook']): Scope[] => ['manage', ...(w.enabled === false ? [] : (['consume'] as const)), ...(w.on_success || w.on_failure ? (['publish'] as const) : [])];

const limitsReported = (w: EndpointLimits) => 'rate_limit' in w || 'max_in_flight' in w;
const limitText = (v: number | null | undefined, unit: string) => (v === null || v === undefined ? 'no limit' : `${v} ${unit}`);
const statusText = (w: EndpointLimits, fallback: string) =>
  `${w.status ?? fallback}${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`;

/** Edits rate_limit and max_in_flight (PATCH; an empty field removes the limit). */
function LimitsForm({ session, w, onDone }: { session: Session; w: WebhookWithLimits; onDone: () => void }) {
  const action = useAction();
  return (
    <form
      aria-label="Endpoint limits"
      onSubmit={(e) => {
        e.preventDefault();
        const v = formValues(e);
        void action.run(async () => {
          const limits: EndpointLimits = { rate_limit: v.rate_limit ? Number(v.rate_limit) : null, max_in_flight: v.max_in_flight ? Number(v.max_in_flight) : null };
          const body: Schemas['PatchWebhookRequest'] & EndpointLimits = limits;
          const r: WebhookWithLimits = unwrap(await session.api.PATCH('/webhooks/{webhook_name}', { params: { path: { webhook_name: w.name } }, body }));
          onDone();
          if (!limitsReported(r)) return 'Saved, but this API does not report endpoint limits: they may not apply.';
          return `Limits saved: ${limitText(r.rate_limit, 'deliveries/s')}, ${limitText(r.max_in_flight, 'in flight')}.`;
        });
      }}
    >
      <Field label="Rate limit (deliveries per second)" hint="1 to 10000; empty: no limit">
        <input name="rate_limit" type="number" min={1} max={10000} defaultValue={w.rate_limit == null ? '' : String(w.rate_limit)} />
      </Field>
      <Field label="Max in flight" hint="1 to 1000; empty: no limit">
        <input name="max_in_flight" type="number" min={1} max={1000} defaultValue={w.max_in_flight == null ? '' : String(w.max_in_flight)} />
      </Field>
      <ActionButton session={session} scope={writeScopes(w)} type="submit" busy={action.busy}>
        Save limits
      </ActionButton>
      <Notice ok={action.ok} error={action.error} />
    </form>
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
        api.GET('/webhooks/{webhook_name}', { params: { path } }).then((r) => unwrap(r) as WebhookWithLimits),
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
            <dd data-testid="webhook-status">{statusText({ ...(status as EndpointLimits), ...w }, status.status)}</dd>
            {w.disabled_at && (
              <>
                <dt>Disabled</dt>
                <dd data-testid="disabled-at">
                  {when(w.disabled_at)} ({ago(w.disabled_at)})
                </dd>
              </>
            )}
            {limitsReported(w) && (
              <>
                <dt>Rate limit</dt>
                <dd data-testid="rate-limit">{limitText(w.rate_limit, 'deliveries/s')}</dd>
                <dt>Max in flight</dt>
                <dd data-testid="max-in-flight">{limitText(w.max_in_flight, 'in flight')}</dd>
              </>
            )}
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

      {loaded.data && limitsReported(loaded.data.w) && (
        <>
          <h2>Endpoint limits</h2>
          <LimitsForm session={session} w={loaded.data.w} onDone={loaded.reload} />
        </>
      )}

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
                        <ActionButton session={session} scope={REPLAY_SCOPES} type="button" busy={replay.busy} onClick={() => void replayOne(d.message_id)} aria-label={`Replay ${d.message_id}`}>
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
        <ActionButton session={session} scope={REPLAY_SCOPES} type="submit" busy={bulk.busy}>
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
