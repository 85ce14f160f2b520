/**
 * The portal (docs/portal.md): the console in portal mode, served under /portal/ from
 * the same build. A platform's customer arrives with a single-use link (`#token=plink.…`), which
 * the page exchanges at once for a session scoped to one application (POST /portal/session); the
 * session credential lives in this tab only (sessionStorage). The customer sees and manages that
 * application's webhooks with the console's own webhook views, and adds endpoints picked from the
 * namespace's event catalog.
 */
import { useEffect, useState } from 'preact/hooks';
import { createMessagingClient, unwrap, type Schemas } from '../../client/index';
import { API_BASE, describeError, type Session } from './api';
import { href, useRoute } from './router';
import { WebhookList, WebhookView } from './views/webhooks';
import { AddEndpoint } from './views/add-endpoint';
import { logoUrl } from './theme';

const SESSION_ITEM = 'messaging-portal.session';

export interface PortalSession extends Session {
  token: string;
  me: Schemas['PortalSession'];
}

/** A session of the console's shape: the webhook views call only what a portal session may. */
async function open(token: string): Promise<PortalSession> {
  const api = createMessagingClient({ baseUrl: API_BASE, apiKey: token });
  const me = unwrap(await api.GET('/portal/session'));
  sessionStorage.setItem(SESSION_ITEM, token);
  // What the service judges a session as (lambda/handlers/authorizer.ts): manage and consume, never publish.
  const access: Schemas['NamespaceAccess'] = { namespace: me.namespace, key_id: `portal:${me.application.uid}`, scopes: ['manage', 'consume'], rate_limits: [] };
  return { api, access, can: (s) => s === 'manage' || s === 'consume', token, me };
}

let pendingLink: string | undefined;

/**
 * Takes the link's token from the address and removes it at once (it works once; no one should
 * copy it), before the first render, so the router starts on the endpoints view, not on the token.
 */
export function captureLinkToken(): void {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, '', `${location.pathname}${location.search}#/`);
  pendingLink = decodeURIComponent(m[1]);
}

async function signIn(): Promise<PortalSession | undefined> {
  const link = pendingLink;
  pendingLink = undefined;
  if (link) {
    const r = unwrap(await createMessagingClient({ baseUrl: API_BASE, apiKey: link }).POST('/portal/session'));
    return open(r.session_token);
  }
  const stored = sessionStorage.getItem(SESSION_ITEM);
  return stored ? open(stored) : undefined;
}

export function PortalApp() {
  const route = useRoute();
  const [session, setSession] = useState<PortalSession>();
  const [state, setState] = useState<'signing-in' | 'signed-out'>('signing-in');
  const [error, setError] = useState<string>();
  useEffect(() => {
    signIn().then(
      (s) => (s ? setSession(s) : setState('signed-out')),
      (e) => {
        sessionStorage.removeItem(SESSION_ITEM);
        setError(describeError(e));
        setState('signed-out');
      },
    );
  }, []);
  useEffect(() => {
    if (session) document.getElementById('main')?.focus();
  }, [route, session]);

  if (!session) {
    return (
      <main id="main">
        <h1>Webhook portal</h1>
        {state === 'signing-in' ? (
          <p aria-busy="true">Signing in…</p>
        ) : (
          <p role="alert" class={error ? 'error' : undefined}>
            {error ? `Could not sign in: ${error}. ` : ''}Open the portal with the link you were given; each link works once, for 10 minutes.
          </p>
        )}
      </main>
    );
  }
  const app = session.me.application;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header>
        {logoUrl() && <img class="logo" src={logoUrl()} alt="" height={28} />}
        <span class="brand">Webhooks of {app.name ?? app.uid}</span>
        <nav aria-label="Sections">
          <ul>
            <li>
              <a href={href('webhooks')} aria-current={route.view === 'webhooks' || route.view === 'overview' ? 'page' : undefined}>
                Endpoints
              </a>
            </li>
          </ul>
        </nav>
        <span class="who">
          session until <time dateTime={session.me.expires_at}>{session.me.expires_at.slice(0, 10)}</time>
          <button
            type="button"
            class="link"
            onClick={() => {
              sessionStorage.removeItem(SESSION_ITEM);
              setSession(undefined);
              setState('signed-out');
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {route.view === 'webhook' ? (
          <WebhookView session={session} name={route.name} />
        ) : route.view === 'webhooks' || route.view === 'overview' ? (
          <>
            <WebhookList session={session} />
            <AddEndpoint session={session} />
          </>
        ) : (
          <>
            <h1>Not found</h1>
            <p>
              The portal shows your endpoints only. Go to <a href={href('webhooks')}>your endpoints</a>.
            </p>
          </>
        )}
      </main>
    </>
  );
}
