/**
 * What happens after a delivery ends (DESIGN.md sections 9 and 13): `on_success` publishes its
 * payload template (with `{{.response}}`), `on_failure` either publishes its template (with
 * `{{.error}}`) or, as `send_to_dlq`, the original message to `dead_letter_topic`. Every message
 * published here carries `x-hop` one above the delivered message's; a message whose `x-hop` is
 * already 5 triggers no hook.
 */
import { ApiError } from '../domain/errors';
import { HOP_PROPERTY, hopCount, MAX_HOPS, type PublishedMessage } from '../domain/message';
import { messageVars } from '../domain/delivery';
import { renderTemplate } from '../domain/templates';
import type { WebhookConfig } from '../domain/webhooks';
import { deadLetter } from '../publishing/dead-letter';
import { publishMessages } from '../publishing/publish';
import { logger } from '../observability';

export interface DeliveryEnd {
  ok: boolean;
  response?: string;
  error?: string;
}

/** Property naming the webhook whose hook published a message. */
export const HOOK_SOURCE_PROPERTY = 'webhook_source';

/** Runs the hook that applies to how the delivery ended; returns what it published (for tests and logs). */
export async function runHooks(ns: string, webhookName: string, c: WebhookConfig, m: PublishedMessage, end: DeliveryEnd, now: number): Promise<'published' | 'none' | 'hop-limit' | 'no-topic'> {
  const hook = end.ok ? c.on_success : c.on_failure;
  if (!hook) return 'none';
  const hops = hopCount(m.properties);
  if (hops >= MAX_HOPS) return 'hop-limit';
  if (hook === 'send_to_dlq') {
    const sent = await deadLetter(publishMessages, ns, c.dead_letter_topic, m, { dlq_source_webhook: webhookName, dlq_error: end.error ?? '' }, now);
    return sent ? 'published' : 'no-topic';
  }
  const payload = renderTemplate(hook.payload, { ...messageVars(m), response: end.response ?? '', error: end.error ?? '' });
  try {
    await publishMessages(ns, hook.topic, [{ payload, properties: { [HOP_PROPERTY]: String(hops + 1), [HOOK_SOURCE_PROPERTY]: webhookName } }], now);
    return 'published';
  } catch (e) {
    if (e instanceof ApiError && e.code === 'TOPIC_NOT_FOUND') {
      logger.warn('webhook hook topic has no binding; hook message dropped', { webhook: webhookName, topic: hook.topic });
      return 'no-topic';
    }
    throw e;
  }
}
