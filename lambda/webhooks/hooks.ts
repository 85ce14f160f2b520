/**
 * What happens after a delivery ends (DESIGN.md sections 9 and 13): `on_success` publishes its
 * payload template (with `{{.response}}`), `on_failure` either publishes its template (with
 * `{{.error}}`) or, as `send_to_dlq`, the original message to `dead_letter_topic`. Every message
 * published here carries `x-hop` one above the delivered message's; a message whose `x-hop` is
 * already 5 triggers no hook. A hook publish is one publish request of the namespace's rate
 * limit (./hook-budget.ts) and pays its writes to the fan-out budget like any publish; over
 * either, nothing is published and the webhook's status records a hook failure.
 */
import { ApiError } from '../core/rules/errors';
import { HOP_PROPERTY, hopCount, MAX_HOPS, MAX_PAYLOAD_BYTES, type PublishedMessage } from '../core/rules/message';
import { messageVars } from './rules/delivery';
import { renderWithin } from './rules/templates';
import type { WebhookConfig } from './rules/webhooks';
import { deadLetter } from '../publishing/rules';
import { publishMessages } from '../publishing/publish';
import { recordHookFailure } from './storage/webhooks';
import { countMetric, logger, METRIC } from '../core/observability';
import { spendHookPublish } from './hook-budget';
import { isFanoutRefusal } from '../publishing/write-budget';

export interface DeliveryEnd {
  ok: boolean;
  response?: string;
  error?: string;
}

/** Property naming the webhook whose hook published a message. */
const HOOK_SOURCE_PROPERTY = 'webhook_source';

/** Which webhook incarnation a hook belongs to. */
export interface HookSource {
  name: string;
  id: string;
}

/** Runs the hook that applies to how the delivery ended; returns what it published (for tests and logs). */
export async function runHooks(ns: string, webhook: HookSource, c: WebhookConfig, m: PublishedMessage, end: DeliveryEnd, now: number): Promise<'published' | 'none' | 'hop-limit' | 'no-topic' | 'refused' | 'too-large'> {
  const webhookName = webhook.name;
  const hook = end.ok ? c.on_success : c.on_failure;
  if (!hook) return 'none';
  const hops = hopCount(m.properties);
  if (hops >= MAX_HOPS) return 'hop-limit';
  const which = end.ok ? 'on_success' : 'on_failure';
  const refuse = (reason: string) => {
    logger.warn('webhook hook refused; nothing published', { namespace: ns, webhook: webhookName, hook: which, reason });
    countMetric(METRIC.webhookHookRefused, 1, { namespace: ns });
    recordHookFailure(ns, webhook.id, `${which} ${reason}`, now);
    return 'refused' as const;
  };
  const refused = await spendHookPublish(ns, now);
  if (refused) return refuse(refused);
  if (hook === 'send_to_dlq') {
    try {
      const sent = await deadLetter(publishMessages, ns, c.dead_letter_topic, m, { dlq_source_webhook: webhookName, dlq_error: end.error ?? '' }, now);
      return sent ? 'published' : 'no-topic';
    } catch (e) {
      if (isFanoutRefusal(e)) return refuse(fanoutReason(e));
      throw e;
    }
  }
  // Sized before it is rendered: a 64 KiB template of `{{.payload}}` would be over a gigabyte.
  const payload = renderWithin(hook.payload, { ...messageVars(m), response: end.response ?? '', error: end.error ?? '' }, MAX_PAYLOAD_BYTES);
  if (typeof payload !== 'string') {
    const why = `${which} payload too large: ${payload.tooLarge} bytes rendered, over ${MAX_PAYLOAD_BYTES}; nothing published`;
    logger.warn('webhook hook payload too large; nothing published', { namespace: ns, webhook: webhookName, hook: which, size: payload.tooLarge });
    recordHookFailure(ns, webhook.id, why, now);
    return 'too-large';
  }
  try {
    await publishMessages(ns, hook.topic, [{ payload, properties: { [HOP_PROPERTY]: String(hops + 1), [HOOK_SOURCE_PROPERTY]: webhookName } }], now);
    return 'published';
  } catch (e) {
    if (e instanceof ApiError && e.code === 'TOPIC_NOT_FOUND') {
      logger.warn('webhook hook topic has no binding; hook message dropped', { webhook: webhookName, topic: hook.topic });
      return 'no-topic';
    }
    if (isFanoutRefusal(e)) return refuse(fanoutReason(e));
    throw e;
  }
}

/**
 * A hook the fan-out budget refused is not retried: the delivery is done, and a retried job would
 * deliver again; the hook failure is on the webhook's status, and a failed delivery stays
 * replayable.
 */
const fanoutReason = (e: ApiError) => `refused: namespace fan-out budget (${String(e.details.limit)} writes a minute) reached`;
