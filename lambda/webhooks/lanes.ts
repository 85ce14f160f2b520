/**
 * Which lane a webhook's jobs take (lambda/webhooks/rules/delivery-lanes.ts): from the durations of its
 * recent requests as this container saw them. Nothing is stored: each container learns a slow
 * webhook from its own first request to it (the jobs it receives before that request ends land in
 * the fast lane), and a container that never saw a webhook treats it as fast. Kept for the most recently seen
 * webhooks only, so memory stays bounded.
 */
import { nextLatency, type Lane, type Latency } from './rules/delivery-lanes';

const MAX_WEBHOOKS = 1000;
const seen = new Map<string, Latency>();

/** Notes one request of webhook `webhookId` (its id: a recreated webhook starts afresh). */
export function noteRequest(webhookId: string, durationMs: number): void {
  const next = nextLatency(seen.get(webhookId), durationMs);
  seen.delete(webhookId);
  if (seen.size >= MAX_WEBHOOKS) seen.delete(seen.keys().next().value as string);
  seen.set(webhookId, next);
}

/** Whether this container has measured a request of webhook `webhookId` (recently). */
export const measured = (webhookId: string): boolean => seen.has(webhookId);

/** The lane of webhook `webhookId`'s next jobs. */
export const laneOf = (webhookId: string): Lane => seen.get(webhookId)?.lane ?? 'fast';

