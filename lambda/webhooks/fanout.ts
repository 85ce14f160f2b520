/**
 * The publish sink of webhooks: one delivery job per (matching enabled webhook whose condition
 * holds and whose application, if any, the message is addressed to; message), queued before
 * publish answers 201. The binding carries `enabled`, the condition and the application, so
 * deciding costs no read. A large message goes by reference (domain/delivery.ts
 * `packJobs`).
 */
import { conditionHolds, ParsedPayload } from './rules/conditions';
import { isReferenceJob, packJobs, type InlineJob } from './rules/delivery-jobs';
import { APPLICATION_PROPERTY, type PublishedMessage } from '../core/rules/message';
import type { Binding } from '../core/storage/resources';
import type { WebhookBindingSettings } from './storage/webhooks';
import { storeWebhookMessages } from './storage/webhook-messages';
import { enqueueJobs } from './storage/delivery-queue';
import type { SinkContext } from '../publishing/sink';

/**
 * The jobs a publish creates, webhook by webhook (pure; exported for tests). Each payload is
 * parsed at most once, by the first condition that looks into it, and not at all when none does.
 */
export function deliveryJobs(ns: string, bindings: Binding[], messages: PublishedMessage[]): InlineJob[] {
  const payloads = messages.map((m) => new ParsedPayload(m.payload));
  const jobs: InlineJob[] = [];
  for (const b of bindings) {
    const s = b.settings as unknown as WebhookBindingSettings;
    if (!s.enabled) continue;
    messages.forEach((m, i) => {
      // A webhook of an application takes only messages addressed to it, never unaddressed ones
      // (docs/portal.md); a webhook of none takes every message its filter matches.
      if (s.application !== undefined && m.properties[APPLICATION_PROPERTY] !== s.application) return;
      if (conditionHolds(s.condition, payloads[i], m.properties)) jobs.push({ namespace: ns, webhook_id: b.id, webhook_name: b.name, message: m });
    });
  }
  return jobs;
}

/**
 * Queues the jobs of a publish. Messages too large to travel in a job are stored first, once
 * each, so no queued job ever points at a message that is not yet durable. A message published
 * with `delay_seconds` (extension) has its jobs delayed by SQS, so its first attempt comes after.
 */
export async function enqueueWebhookDeliveries(ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  const inline = deliveryJobs(ctx.namespace, bindings, messages);
  const delayOf = new Map(messages.map((m, i) => [m, ctx.delivery?.[i]?.delaySeconds]));
  // packJobs keeps the jobs' order, so the delays line up with its jobs.
  const { jobs, stored } = packJobs(inline);
  // Each stored message counts the jobs that refer to it: it is deleted when all have ended.
  const refs = new Map<string, number>();
  for (const j of jobs) if (isReferenceJob(j)) refs.set(j.message_ref.message_id, (refs.get(j.message_ref.message_id) ?? 0) + 1);
  await storeWebhookMessages(ctx.namespace, stored.map((message) => ({ message, jobs: refs.get(message.message_id) ?? 0 })), ctx.now);
  await enqueueJobs(jobs, inline.map((j) => delayOf.get(j.message)));
}
