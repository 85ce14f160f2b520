/**
 * Schedules (docs/schedules.md): the list with each one's timing, next and last run and last
 * error, one schedule with its message, and enabling or disabling one (PATCH, manage scope).
 */
import { useState } from 'preact/hooks';
import { unwrap, type Schemas, type Session } from '../api';
import { href } from '../router';
import { ActionButton, LoadState, Notice, useAction, useLoad, when } from '../ui';

type Schedule = Schemas['Schedule'];

const timing = (s: Schedule) => (s.cron !== undefined ? <code>{s.cron}</code> : s.every !== undefined ? `every ${s.every} s` : '—');

/** Enables or disables one schedule; `onDone` reloads the view that shows it. */
function EnableToggle({ session, s, onDone }: { session: Session; s: Schedule; onDone: () => void }) {
  const action = useAction();
  return (
    <>
      <ActionButton
        session={session}
        scope={['manage', 'publish']}
        type="button"
        busy={action.busy}
        aria-label={`${s.enabled ? 'Disable' : 'Enable'} schedule ${s.name}`}
        onClick={() =>
          void action.run(async () => {
            const r = unwrap(await session.api.PATCH('/schedules/{schedule_name}', { params: { path: { schedule_name: s.name } }, body: { enabled: !s.enabled } }));
            onDone();
            return `${r.name} ${r.enabled ? 'enabled' : 'disabled'}.`;
          })
        }
      >
        {s.enabled ? 'Disable' : 'Enable'}
      </ActionButton>
      <Notice ok={action.ok} error={action.error} />
    </>
  );
}

export function ScheduleList({ session }: { session: Session }) {
  const { api } = session;
  // Cursors of the pages before this one, so "Previous page" goes back without a reverse read.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const loaded = useLoad(() => api.GET('/schedules', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }).then(unwrap), [cursor], 10_000);
  return (
    <>
      <h1>Schedules</h1>
      <LoadState loaded={loaded}>
        {(list) =>
          list.schedules.length === 0 ? (
            <p>No schedules yet. Create one with <code>POST /schedules</code> (docs/schedules.md).</p>
          ) : (
            <>
              <table>
                <caption>Schedules{cursors.length > 1 ? `, page ${cursors.length}` : ''}: times in UTC</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Runs</th>
                    <th scope="col">Time zone</th>
                    <th scope="col">Topic</th>
                    <th scope="col">Next run</th>
                    <th scope="col">Last run</th>
                    <th scope="col">Last error</th>
                    <th scope="col">Enabled</th>
                  </tr>
                </thead>
                <tbody>
                  {list.schedules.map((s) => (
                    <tr key={s.name} data-testid={`schedule-${s.name}`}>
                      <th scope="row">
                        <a href={href('schedules', s.name)}>{s.name}</a>
                      </th>
                      <td>{timing(s)}</td>
                      <td>{s.timezone}</td>
                      <td>
                        <code>{s.topic}</code>
                      </td>
                      <td>{when(s.next_run_at)}</td>
                      <td>{when(s.last_run_at)}</td>
                      <td class={s.last_error ? 'error' : undefined}>{s.last_error ?? 'none'}</td>
                      <td>
                        <span data-testid={`enabled-${s.name}`}>{s.enabled ? 'yes' : 'no'}</span> <EnableToggle session={session} s={s} onDone={loaded.reload} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p>
                {cursors.length > 1 && (
                  <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
                    Previous page
                  </button>
                )}{' '}
                {list.next_cursor && (
                  <button type="button" onClick={() => setCursors([...cursors, list.next_cursor!])}>
                    Next page
                  </button>
                )}
              </p>
            </>
          )
        }
      </LoadState>
    </>
  );
}

export function ScheduleView({ session, name }: { session: Session; name: string }) {
  const loaded = useLoad(() => session.api.GET('/schedules/{schedule_name}', { params: { path: { schedule_name: name } } }).then(unwrap), [name], 5000);
  return (
    <>
      <h1>
        Schedule <code>{name}</code>
      </h1>
      <p>
        <a href={href('schedules')}>All schedules</a>
      </p>
      <LoadState loaded={loaded}>
        {(s) => (
          <>
            <dl class="facts">
              <dt>Runs</dt>
              <dd>{timing(s)}</dd>
              <dt>Time zone</dt>
              <dd>{s.timezone}</dd>
              <dt>Enabled</dt>
              <dd data-testid="enabled">{s.enabled ? 'yes' : 'no'}</dd>
              <dt>Next run</dt>
              <dd data-testid="next-run">{when(s.next_run_at)}</dd>
              <dt>Last run</dt>
              <dd>{when(s.last_run_at)}</dd>
              <dt>Last message</dt>
              <dd>{s.last_message_id ? <code>{s.last_message_id}</code> : '—'}</dd>
              <dt>Last error</dt>
              <dd data-testid="last-error">{s.last_error ?? 'none'}</dd>
              <dt>Between</dt>
              <dd>
                {s.start_at ? when(s.start_at) : 'now'} and {s.end_at ? when(s.end_at) : 'forever'}
              </dd>
              <dt>Topic</dt>
              <dd>
                <code>{s.topic}</code>
              </dd>
              <dt>Payload</dt>
              <dd>
                <pre>{s.payload}</pre>
              </dd>
              {Object.keys(s.properties).length > 0 && (
                <>
                  <dt>Properties</dt>
                  <dd>
                    {Object.entries(s.properties).map(([k, v]) => (
                      <code key={k}>
                        {k}={v}{' '}
                      </code>
                    ))}
                  </dd>
                </>
              )}
            </dl>
            <EnableToggle session={session} s={s} onDone={loaded.reload} />
          </>
        )}
      </LoadState>
    </>
  );
}
