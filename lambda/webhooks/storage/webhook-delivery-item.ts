/**
 * Where a webhook delivery's items live (keys.ts `webhookDelivery`, `webhookSendClaim`): below
 * both ./webhook-deliveries.ts and ./webhook-delivery-once.ts, which write the same record.
 */
import { metaKeys } from '../../core/storage/keys';

/** Which delivery: the webhook incarnation and the message. */
export interface DeliveryKey {
  namespace: string;
  webhookId: string;
  messageId: string;
  /** The message is stored apart (a job by reference): the delivery's end releases it. */
  stored?: boolean;
  /** A replay (extension) of the delivery: a delivery of its own, with its own record. */
  replayId?: string;
}

const deliveryId = (k: DeliveryKey) => (k.replayId ? `${k.messageId}#REPLAY#${k.replayId}` : k.messageId);

/** The key of the delivery's record. */
export const recordKey = (k: DeliveryKey) => metaKeys.webhookDelivery(k.namespace, k.webhookId, deliveryId(k));

/** The key of the claim of the delivery's POST, beside its record. */
export const sendClaimKey = (k: DeliveryKey) => metaKeys.webhookSendClaim(k.namespace, k.webhookId, deliveryId(k));
