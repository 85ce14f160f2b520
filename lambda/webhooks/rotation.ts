/**
 * Secret rotation (extension): `POST /webhooks/{name}/secret/rotate` makes a new signing secret
 * and answers it once; for the grace period the old one signs every delivery too (two signatures
 * in `webhook-signature`), so a receiver can switch to the new secret whenever it likes within
 * that time without failing a delivery. A grace of 0 ends the old secret at once. Rotating again
 * within a grace period ends the older secret at once: one previous secret at a time.
 */
import { ApiError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { newSecret } from './rules/signatures';
import { readWebhookForRotation, rotateWebhookSecret, type RotatedSecret, type WebhookWithRotation } from './storage/webhook-secrets';
import type { WebhookItem } from './storage/webhooks';
import { ownedWebhook } from './application-scope';

/** Rotations that meet concurrent writes of the webhook before it answers 409. */
const ATTEMPTS = 5;

/**
 * The secrets that sign beside the current one at `now`: the previous secret while its grace
 * period lasts.
 * @example graceSecrets({ ...webhook, previous_secret: 'whsec_old', previous_secret_expires_at: Date.now() + 1000 }, Date.now()) // ['whsec_old']
 */
export function graceSecrets(w: WebhookItem, now: number): string[] {
  const r = w as WebhookWithRotation;
  return r.previous_secret && (r.previous_secret_expires_at ?? 0) > now ? [r.previous_secret] : [];
}

/**
 * What a PUT or PATCH keeps of a rotation: the previous secret and its expiry, unless the request
 * sets a secret of its own (an explicit replacement, as the spec's PUT does: no grace).
 */
export function keptRotation(stored: WebhookItem, newSecretGiven: string | undefined): RotatedSecret {
  const r = stored as WebhookWithRotation;
  return newSecretGiven === undefined && r.previous_secret ? { previous_secret: r.previous_secret, previous_secret_expires_at: r.previous_secret_expires_at } : {};
}

/**
 * Rotates the secret. `owner`, a portal session's application, must own the webhook as the
 * rotation's own read finds it, and the write holds only over the application it read
 * (storage/webhook-secrets.ts): a webhook moved to another application meanwhile is read again,
 * and answers 404.
 */
export async function rotateSecret(ns: string, name: string, graceSeconds: number, now: number, owner?: string) {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const w: WebhookWithRotation = ownedWebhook(await readWebhookForRotation(ns, name), name, owner);
    const secret = newSecret();
    const previousExpiresAt = graceSeconds > 0 ? now + graceSeconds * 1000 : undefined;
    if (await rotateWebhookSecret(ns, w, { secret, previousExpiresAt, now })) {
      // The only answer that carries the new secret.
      return { name, secret, rotated_at: isoTime(now), previous_secret_expires_at: previousExpiresAt === undefined ? null : isoTime(previousExpiresAt) };
    }
  }
  throw new ApiError(409, 'CONFLICT', `Webhook ${name} is being changed by other requests at the same time; retry the rotation.`);
}
