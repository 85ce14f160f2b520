/** Shared pieces of the views: polling loads, permission-aware buttons, notices, small formatters. */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError, type Scope, type Session } from './api';

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now, on `deps` changes, and every `everyMs` while the view is shown. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], everyMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const current = useRef(load);
  current.current = load;
  const seq = useRef(0);
  const reload = useCallback(() => {
    const n = ++seq.current;
    current.current().then(
      (data) => n === seq.current && setState({ data, loading: false }),
      (e) => n === seq.current && setState((s) => ({ data: s.data, error: describeError(e), loading: false })),
    );
  }, []);
  useEffect(() => {
    setState({ loading: true });
    reload();
    if (!everyMs) return undefined;
    // A hidden tab does not poll: polls count against the management rate limit (the namespace's,
    // or in portal mode the application's own: docs/rate-limits.md).
    const t = setInterval(() => document.hidden || reload(), everyMs);
    return () => clearInterval(t);
  }, deps);
  return { ...state, reload };
}

const SCOPE_REASON = (scope: Scope) => `Not allowed: this key lacks the ${scope} scope`;

/**
 * A button for an action a scope guards: disabled, with the reason beside it, when the key's
 * scopes do not allow it, so what is not allowed shows as such and never as an error.
 */
export function ActionButton(props: { session: Session; scope: Scope | readonly Scope[]; busy?: boolean; children: ComponentChildren } & ButtonHTMLAttributes<HTMLButtonElement>) {
  const { session, busy, children, ...rest } = props;
  // An action may need a second scope (docs/security.md): the first one the key lacks is named.
  const needed: readonly Scope[] = typeof props.scope === 'string' ? [props.scope] : props.scope;
  const scope = needed.find((s) => !session.can(s)) ?? needed[0];
  const allowed = needed.every((s) => session.can(s));
  const id = useRef(`why-${Math.random().toString(36).slice(2)}`).current;
  return (
    <span class="action">
      <button {...rest} disabled={!allowed || busy || Boolean(rest.disabled)} aria-describedby={allowed ? undefined : id} data-scope={scope}>
        {children}
      </button>
      {!allowed && (
        <span id={id} class="not-allowed">
          {SCOPE_REASON(scope)}
        </span>
      )}
    </span>
  );
}

/** A form's outcome: a result (polite status) or an error (alert). */
export function Notice({ ok, error }: { ok?: ComponentChildren; error?: string }) {
  if (error) return <p role="alert" class="error">{error}</p>;
  if (ok) return <p role="status" class="ok">{ok}</p>;
  return null;
}

/** Runs an action, keeping its busy state and its outcome for a Notice. */
export function useAction() {
  const [state, setState] = useState<{ busy: boolean; ok?: ComponentChildren; error?: string }>({ busy: false });
  const run = async (fn: () => Promise<ComponentChildren>) => {
    setState({ busy: true });
    try {
      setState({ busy: false, ok: await fn() });
    } catch (e) {
      setState({ busy: false, error: describeError(e) });
    }
  };
  return { ...state, run };
}

export function LoadState<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.data === undefined) {
    if (loaded.error) return <p role="alert" class="error">{loaded.error}</p>;
    return <p aria-busy="true">Loading…</p>;
  }
  return (
    <>
      {loaded.error && <p role="alert" class="error">Refresh failed: {loaded.error}</p>}
      {children(loaded.data)}
    </>
  );
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((now - Date.parse(iso)) / 1000);
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

/** A duration in seconds as the two largest units: `42 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`. */
export function duration(seconds: number): string {
  const units: [string, number][] = [['d', 86_400], ['h', 3600], ['min', 60], ['s', 1]];
  const parts: string[] = [];
  let left = Math.max(0, Math.round(seconds));
  for (const [u, n] of units) {
    if (parts.length === 2) break;
    const v = Math.floor(left / n);
    left -= v * n;
    if (v || parts.length || n === 1) parts.push(`${v} ${u}`);
  }
  return parts.filter((p, i) => i === 0 || !p.startsWith('0 ')).join(' ');
}

export const when = (iso: string | null | undefined) => (iso ? <time dateTime={iso}>{iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time> : '—');

export function Field(props: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small>{props.hint}</small>}
    </label>
  );
}

/** Reads a form's named inputs as strings. */
export const formValues = (e: Event) => Object.fromEntries(new FormData(e.currentTarget as HTMLFormElement)) as Record<string, string>;
