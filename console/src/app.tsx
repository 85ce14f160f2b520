/** The shell: sign-in with an API key, then the navigation and the view of the address. */
import { useEffect, useState } from 'preact/hooks';
import { describeError, forgetKey, signIn, storedKey, type Session } from './api';
import { href, useRoute, type Route } from './router';
import { Overview } from './views/overview';
import { QueueList, QueueView } from './views/queues';
import { StreamList, StreamView } from './views/streams';
import { SubscriptionList, SubscriptionView } from './views/subscriptions';
import { WebhookList, WebhookView } from './views/webhooks';
import { ScheduleList, ScheduleView } from './views/schedules';

const NAV: { label: string; path: string; views: Route['view'][] }[] = [
  { label: 'Overview', path: '#/', views: ['overview'] },
  { label: 'Queues', path: '#/queues', views: ['queues', 'queue'] },
  { label: 'Streams', path: '#/streams', views: ['streams', 'stream'] },
  { label: 'Subscriptions', path: '#/subscriptions', views: ['subscriptions', 'subscription'] },
  { label: 'Webhooks', path: '#/webhooks', views: ['webhooks', 'webhook'] },
  { label: 'Schedules', path: '#/schedules', views: ['schedules', 'schedule'] },
];

function SignIn({ onSession, error }: { onSession: (s: Session) => void; error?: string }) {
  const [problem, setProblem] = useState(error);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="signin">
      <h1>Messaging console</h1>
      <p>Sign in with an API key of your namespace. It is kept in this tab only (sessionStorage) and sent only to this API.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const key = String(new FormData(e.currentTarget).get('key') ?? '').trim();
          if (!key) return setProblem('Enter an API key.');
          setBusy(true);
          try {
            onSession(await signIn(key));
          } catch (err) {
            setProblem(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label class="field">
          <span>API key</span>
          <input name="key" type="password" autoComplete="off" required autoFocus />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {problem && (
        <p role="alert" class="error">
          {problem}
        </p>
      )}
    </main>
  );
}

function View({ route, session }: { route: Route; session: Session }) {
  switch (route.view) {
    case 'overview':
      return <Overview session={session} />;
    case 'queues':
      return <QueueList session={session} />;
    case 'queue':
      return <QueueView session={session} name={route.name} />;
    case 'streams':
      return <StreamList session={session} />;
    case 'stream':
      return <StreamView session={session} name={route.name} />;
    case 'subscriptions':
      return <SubscriptionList session={session} />;
    case 'subscription':
      return <SubscriptionView session={session} name={route.name} />;
    case 'webhooks':
      return <WebhookList session={session} />;
    case 'webhook':
      return <WebhookView session={session} name={route.name} />;
    case 'schedules':
      return <ScheduleList session={session} />;
    case 'schedule':
      return <ScheduleView session={session} name={route.name} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            Nothing lives at {route.path}. Go to the <a href={href()}>overview</a>.
          </p>
        </>
      );
  }
}

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>();
  const [restoring, setRestoring] = useState(() => Boolean(storedKey()));
  const [error, setError] = useState<string>();
  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    signIn(key)
      .then(setSession, (e) => {
        forgetKey();
        setError(`Signed out: ${describeError(e)}`);
      })
      .finally(() => setRestoring(false));
  }, []);
  // A new view gets the focus (its main region), so keyboard and screen-reader users start there.
  useEffect(() => {
    if (session) document.getElementById('main')?.focus();
  }, [route, session]);

  if (restoring) return <main id="main"><p aria-busy="true">Signing in…</p></main>;
  if (!session) return <SignIn onSession={setSession} error={error} />;
  const { access } = session;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header>
        <span class="brand">Messaging console</span>
        <nav aria-label="Sections">
          <ul>
            {NAV.map((n) => (
              <li key={n.path}>
                <a href={n.path} aria-current={n.views.includes(route.view) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          namespace <strong>{access.namespace}</strong> · scopes <span data-testid="scopes">{access.scopes.join(', ')}</span>
          <button
            type="button"
            class="link"
            onClick={() => {
              forgetKey();
              setSession(undefined);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <View route={route} session={session} />
      </main>
    </>
  );
}
