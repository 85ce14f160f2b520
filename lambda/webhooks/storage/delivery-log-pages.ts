/**
 * The pages of the webhook delivery log (./delivery-log.ts "by time"): how a run's entries are
 * packed into page items and read back. An entry is a JSON tuple; the messages' address
 * (`x-application`, which a portal session's list filters on) is kept once per page when every
 * entry shares it.
 */
import { LOG_RETENTION_SECONDS, LOG_SHARDS, type AttemptEntry, type AttemptOutcome } from '../rules/delivery-log';
import { deliveryLogKeys as keys, ttlSeconds } from '../../core/storage/keys';

/** An entry as listed: with its time key (the cursor of the page it ends). */
export interface ListedAttempt extends AttemptEntry {
  at: string;
}

/** A page holds at most this many entries (about 100 bytes each)... */
const PAGE_ENTRIES = 25;
/** ...whose attempts started within this span, so a reader knows how far back a page reaches. */
export const PAGE_SPAN_MS = 60_000;

type PageEntry = [at: string, duration: number, status: number | null, final: 0 | 1, replay: 0 | 1, error: string | null, application?: string];

/** The page items of one webhook's entries (oldest first within each outcome; built apart for tests). */
export function buildPages(ns: string, webhookId: string, entries: ListedAttempt[], shard = () => Math.floor(Math.random() * LOG_SHARDS)): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const outcome of ['succeeded', 'failed'] as const) {
    const mine = entries.filter((e) => e.outcome === outcome).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    let page: ListedAttempt[] = [];
    const close = () => {
      if (!page.length) return;
      const newest = Math.max(...page.map((e) => e.attempted_at));
      // The messages' address: once for the page (`a`) when every entry has the same one, as a
      // webhook of an application's do, so a page of ten stays within 1 KB (1 write unit).
      const apps = new Set(page.map((x) => x.application));
      const a = apps.size === 1 ? page[0].application : undefined;
      items.push({
        pk: keys.byTime(ns, webhookId, outcome, shard()),
        sk: pageSk(page[0].at),
        e: JSON.stringify(page.map((x) => [x.at, x.duration_ms, x.status_code, x.final ? 1 : 0, x.replay ? 1 : 0, x.error, ...(x.application !== a ? [x.application] : [])] as PageEntry)),
        ...(a !== undefined ? { a } : {}),
        ttl: ttlSeconds(newest) + LOG_RETENTION_SECONDS,
      });
      page = [];
    };
    for (const e of mine) {
      if (page.length >= PAGE_ENTRIES || (page.length && e.attempted_at - page[0].attempted_at > PAGE_SPAN_MS)) close();
      page.push(e);
    }
    close();
  }
  return items;
}

export const pageSk = (at: string) => `P#${at}`;

/** The entries of a page item. */
export function pageEntries(item: Record<string, unknown>, outcome: AttemptOutcome): ListedAttempt[] {
  const pageApp = typeof item.a === 'string' ? item.a : undefined;
  return (JSON.parse(String(item.e)) as PageEntry[]).map(([at, duration_ms, status_code, final, replay, error, application = pageApp]) => {
    const [t, message_id, attempt] = at.split('#');
    return { at, message_id, attempt: Number(attempt), attempted_at: Number(t), duration_ms, status_code, outcome, error, final: final === 1, replay: replay === 1, ...(application !== undefined ? { application } : {}) };
  });
}
