/**
 * Who a webhook of an application answers to, and what it may carry (docs/portal.md "A webhook
 * moved to another application"). Two rules, each judged on data the caller already holds:
 *
 * - **Ownership**: a portal session acts only on its application's webhooks, judged on the very
 *   read its action uses (and, for a write, held by the write's condition), never on an earlier
 *   read: the platform may move the webhook to another application between two reads.
 * - **Addressing**: a webhook of an application carries only messages addressed to that
 *   application (`x-application`), as the fan-out decides (./fanout.ts). A delivery, retry or
 *   replay checks it again against the webhook as it is now, since the webhook may have been moved
 *   since the fan-out (or the job redriven from a dead-letter queue).
 */
import { notFound } from '../core/rules/errors';
import { APPLICATION_PROPERTY, type PublishedMessage } from '../core/rules/message';
import type { WebhookConfig } from './rules/webhooks';
import type { JobTarget } from './rules/delivery';
import type { WebhookItem } from './storage/webhooks';
import { logger } from '../core/observability';

/**
 * The webhook, or 404 WEBHOOK_NOT_FOUND when it does not exist or `owner` (a portal session's
 * application; undefined for an API key) is not its application: another application's webhook,
 * or one of none, answers exactly like a webhook that does not exist.
 */
export function ownedWebhook<W extends { config: Pick<WebhookConfig, 'application'> }>(w: W | undefined, name: string, owner: string | undefined): W {
  if (!w || (owner !== undefined && w.config?.application !== owner)) throw notFound('WEBHOOK_NOT_FOUND', `Webhook ${name}`);
  return w;
}

/** The application a message is addressed to, if any. */
export const addressOf = (m: Pick<PublishedMessage, 'properties'>): string | undefined => m.properties?.[APPLICATION_PROPERTY];

/**
 * Whether a webhook of `application` (undefined: of none) may carry message `m`: one of none
 * carries every message, one of an application only those addressed to it.
 * @example reachesWebhook({ properties: { 'x-application': 'b' } }, 'a') // false
 */
export const reachesWebhook = (m: Pick<PublishedMessage, 'properties'>, application: string | undefined): boolean =>
  application === undefined || addressOf(m) === application;

/** Why a delivery of `m` to a webhook of `application` is not sent (for the log line), or undefined when it may be. */
export function misaddressed(m: Pick<PublishedMessage, 'properties'>, application: string | undefined): string | undefined {
  if (reachesWebhook(m, application)) return undefined;
  const to = addressOf(m);
  return `message addressed to ${to === undefined ? 'no application' : 'another application'}, webhook of application ${application}: not sent`;
}

/**
 * Whether a delivery job's message may no longer go to webhook `w` as it is now (moved to another
 * application since the fan-out); logs why. Costs nothing for a webhook of no application; for
 * one of an application, the message is in the job, or loaded once (`message`) as the attempt
 * would load it anyway.
 */
export async function notCarried(job: JobTarget, w: Pick<WebhookItem, 'config'>, message: () => Promise<PublishedMessage>): Promise<boolean> {
  if (w.config.application === undefined) return false;
  const m = await message();
  const why = misaddressed(m, w.config.application);
  if (why) logger.warn('webhook delivery skipped', { namespace: job.namespace, webhook: job.webhook_name, message_id: m.message_id, reason: why });
  return why !== undefined;
}
