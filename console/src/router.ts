/**
 * Hash routing: every view has its own address (`#/queues/orders`), so it can be shared and works
 * from static hosting without rewrite rules.
 */
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'overview' }
  | { view: 'queues' }
  | { view: 'queue'; name: string }
  | { view: 'streams' }
  | { view: 'stream'; name: string }
  | { view: 'subscriptions' }
  | { view: 'subscription'; name: string }
  | { view: 'webhooks' }
  | { view: 'webhook'; name: string }
  | { view: 'schedules' }
  | { view: 'schedule'; name: string }
  | { view: 'not-found'; path: string };

const LISTS = { queues: 'queue', streams: 'stream', subscriptions: 'subscription', webhooks: 'webhook', schedules: 'schedule' } as const;

function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { view: 'overview' };
  const list = parts[0] as keyof typeof LISTS;
  if (list in LISTS && parts.length === 1) return { view: list };
  if (list in LISTS && parts.length === 2) return { view: LISTS[list], name: parts[1] };
  return { view: 'not-found', path };
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
