/**
 * Secret rotation (extension, lambda/webhooks/rotation.ts) on the webhook's own item: the new
 * secret replaces `secret`, and the one it replaces stays as `previous_secret` until
 * `previous_secret_expires_at`, so every delivery attempt, which reads the item anyway, signs with
 * both at no extra read.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { seal } from './sealed';
import { openWebhook, rateVersion, storedSecretOf, unopenedSecrets, type WebhookItem } from './webhooks';

/** What a rotation adds to a webhook item. */
export interface RotatedSecret {
  /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
  previous_secret?: string;
  /** Epoch ms. */
  previous_secret_expires_at?: number;
}

export type WebhookWithRotation = WebhookItem & RotatedSecret;

/** The webhook's item, read strongly consistently (a rotation decides on the secret it holds), its secrets opened. */
export async function readWebhookForRotation(ns: string, name: string): Promise<WebhookWithRotation | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, 'WEBHOOK', name), ConsistentRead: true }));
  return openWebhook(out.Item as WebhookWithRotation | undefined);
}

/**
 * The UpdateItem of a rotation (built apart from sending, for unit tests), with the values as
 * stored (`sealed`: the new and the previous secret sealed, ./sealed.ts; `stored`: the secret as
 * read, sealed or a plaintext from before encryption): only over the incarnation, secret and
 * application it read, so two rotations at once cannot both win, a recreated webhook is never
 * touched, and a webhook moved to another application meanwhile is not rotated for the one whose
 * portal session judged ownership on that read. `version` counts the item's writes, as PUT and PATCH do with their
 * optimistic concurrency, so one of those that read the item before the rotation writes again
 * instead of putting the old secret back.
 */
export function buildRotation(
  ns: string,
  w: WebhookItem,
  next: { secret: string; previousExpiresAt?: number; now: number },
  stored: { secret: string; previous: string; current: string } = { secret: next.secret, previous: w.secret, current: w.secret },
) {
  const keep = next.previousExpiresAt !== undefined;
  const app = w.config?.application;
  return new UpdateCommand({
    TableName: tableName('meta'),
    Key: metaKeys.resource(ns, 'WEBHOOK', w.name),
    UpdateExpression: keep
      ? 'SET secret = :new, previous_secret = :prev, previous_secret_expires_at = :exp, updated_at = :now, rate_of = if_not_exists(rate_of, :rateOf) ADD version :one'
      : 'SET secret = :new, updated_at = :now, rate_of = if_not_exists(rate_of, :rateOf) REMOVE previous_secret, previous_secret_expires_at ADD version :one',
    ConditionExpression: `id = :id AND secret = :old AND ${app === undefined ? 'attribute_not_exists(config.application)' : 'config.application = :app'}`,
    ExpressionAttributeValues: {
      ...(app === undefined ? {} : { ':app': app }),
      ':new': stored.secret,
      ':old': stored.current,
      // Above the version read, as PUT and PATCH write it (../operations.ts `updateWebhook`): the
      // rate's slots are numbered under the newest `updated_at`, and a rotation written after a
      // PATCH with its earlier start time would put the webhook's version below it.
      ':now': Math.max(next.now, Date.now(), (w.updated_at ?? 0) + 1),
      // A rotation keeps the rate: the slots stay numbered under the version before it.
      ':rateOf': rateVersion(w),
      ':id': w.id,
      ':one': 1,
      ...(keep ? { ':exp': next.previousExpiresAt, ':prev': stored.previous } : {}),
    },
  });
}

/** Applies a rotation; false when the item changed since it was read (or is gone). */
export async function rotateWebhookSecret(ns: string, w: WebhookItem, next: { secret: string; previousExpiresAt?: number; now: number }): Promise<boolean> {
  try {
    // A current secret that did not open is not kept for a grace period: it could sign nothing.
    if (unopenedSecrets(w).has('secret')) next = { ...next, previousExpiresAt: undefined };
    const context = (field: string) => ['webhook', ns, w.name, field];
    const stored = { secret: await seal(next.secret, context('secret')), previous: await seal(w.secret, context('previous_secret')), current: storedSecretOf(w) };
    await ddb().send(buildRotation(ns, w, next, stored));
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
