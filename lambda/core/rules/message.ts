/**
 * Messages as published (SPEC.md "Message", DESIGN.md section 5): request schemas, size limits and
 * the stored shape every binding receives.
 */
import { ApiError, validationError } from './errors';
import { intIn, resourceName } from './validation';
import { MAX_LONG_DELAY_SECONDS } from './delays';
import * as z from 'zod/mini';

/** 256 KiB of UTF-8 payload per message. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** 1 MiB per batch request body. */
export const MAX_BATCH_BODY_BYTES = 1024 * 1024;
export const MAX_BATCH_MESSAGES = 100;
export const DEFAULT_CONTENT_TYPE = 'application/json';
/** Property carried by messages that the service itself republishes (hooks, dead-lettering). */
export const HOP_PROPERTY = 'x-hop';
export const MAX_HOPS = 5;
/**
 * Property carrying the application a message is addressed to (extension, docs/portal.md): set
 * from the publish's `application`, it travels with the message like every property (queues,
 * streams, held messages, dead-lettering) and is what the webhook fan-out compares with a
 * webhook's own `application` (lambda/webhooks/fanout.ts).
 */
export const APPLICATION_PROPERTY = 'x-application';
/**
 * Longest delivery delay (extension): SQS's DelaySeconds range is 0 to 900 seconds
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html).
 */
export const MAX_DELAY_SECONDS = 900;
/**
 * `properties` limits: entries, key length (422 beyond them) and the UTF-8
 * bytes of all keys and values together (413 beyond it). Properties travel with the message to
 * every binding (a queue's SQS body, a stream's and a subscription's item, a webhook job) and
 * the service adds a few of its own (`x-hop`, `dlq_*`), so they stay small next to the 256 KiB
 * payload and every store's item limit.
 */
export const MAX_PROPERTIES = 64;
export const MAX_PROPERTY_KEY_CHARS = 128;
export const MAX_PROPERTIES_BYTES = 16 * 1024;

const propertiesField = () =>
  z.record(z.string().check(z.minLength(1), z.maxLength(MAX_PROPERTY_KEY_CHARS)), z.string()).check(
    z.refine((p) => Object.keys(p).length <= MAX_PROPERTIES, `at most ${MAX_PROPERTIES} entries`),
  );

export const messageSchema = z.object({
  payload: z.string(),
  content_type: z.optional(z.string().check(z.minLength(1), z.maxLength(255), z.regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a MIME type like text/plain'))),
  properties: z.optional(propertiesField()),
  partition_key: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  /**
   * Extension: bound queues (standard ones) and webhooks see the message only after this many
   * seconds; streams and subscriptions append it at once. Absent: the queue's own default delay.
   * Up to 900 s it is SQS's DelaySeconds; beyond (up to 365 days) the service holds the message
   * (lambda/schedules/delayed.ts).
   */
  delay_seconds: z.optional(intIn(0, MAX_LONG_DELAY_SECONDS)),
  /** Extension: the time (ISO 8601 with a zone) to deliver at instead of `delay_seconds`; checked by lambda/core/rules/delays.ts `checkDelays`. */
  deliver_at: z.optional(z.string()),
  /**
   * Extension (docs/portal.md): the uid of the application the message is for. Webhooks of that
   * application receive it, webhooks of other applications do not, webhooks of none do as usual.
   * Stored as the property {@link APPLICATION_PROPERTY} ({@link addressed}).
   */
  application: z.optional(resourceName()),
});
export type MessageInput = z.infer<typeof messageSchema>;

export const batchSchema = z.object({
  messages: z.array(messageSchema).check(z.minLength(1), z.maxLength(MAX_BATCH_MESSAGES)),
});

export const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export const messageTooLarge = (what: string, limit: number) =>
  new ApiError(413, 'MESSAGE_TOO_LARGE', `${what} is larger than ${limit} bytes; split it or send a reference to the data instead.`, { limit });

/** Throws 413 when a payload exceeds {@link MAX_PAYLOAD_BYTES}. */
export function assertPayloadSize(payload: string, field = 'payload') {
  const size = utf8Bytes(payload);
  if (size > MAX_PAYLOAD_BYTES) {
    throw new ApiError(413, 'MESSAGE_TOO_LARGE', `${field} is ${size} bytes; the limit is ${MAX_PAYLOAD_BYTES} bytes (256 KiB) of UTF-8.`, {
      field,
      size,
      limit: MAX_PAYLOAD_BYTES,
    });
  }
}

/** The UTF-8 bytes of a message's property keys and values together. */
const propertiesBytes = (p: Record<string, string> | undefined) =>
  Object.entries(p ?? {}).reduce((n, [k, v]) => n + utf8Bytes(k) + utf8Bytes(v), 0);

/**
 * Throws 413 when a message's payload or its properties are larger than allowed; run on every
 * item before anything is reserved or stored. `item` names a batch item (`messages.3`).
 * @example assertMessageSize({ payload: 'p', properties: { a: 'x'.repeat(20000) } }) // throws 413 on properties
 */
export function assertMessageSize(m: Pick<MessageInput, 'payload' | 'properties'>, item?: string) {
  const at = (field: string) => (item ? `${item}.${field}` : field);
  assertPayloadSize(m.payload, at('payload'));
  const size = propertiesBytes(m.properties);
  if (size > MAX_PROPERTIES_BYTES) {
    throw new ApiError(413, 'MESSAGE_TOO_LARGE', `${at('properties')} are ${size} bytes of keys and values; the limit is ${MAX_PROPERTIES_BYTES} bytes (16 KiB) of UTF-8.`, {
      field: at('properties'),
      size,
      limit: MAX_PROPERTIES_BYTES,
    });
  }
}

/**
 * The message with its address among its properties, and the address (undefined: none). A
 * publisher may also give the property itself (the publish endpoint checks the application
 * exists either way); given both, they must agree (422). Run before {@link assertMessageSize}, so
 * the property counts in the properties' limits.
 * @example addressed({ payload: 'p', application: 'cust-1' }) // { message: { payload: 'p', properties: { 'x-application': 'cust-1' } }, application: 'cust-1' }
 */
export function addressed(m: MessageInput, item?: string): { message: MessageInput; application?: string } {
  const { application, ...rest } = m;
  const uid = application ?? rest.properties?.[APPLICATION_PROPERTY];
  if (uid !== (rest.properties?.[APPLICATION_PROPERTY] ?? uid)) {
    throw validationError([{ field: `${item ? `${item}.` : ''}properties.${APPLICATION_PROPERTY}`, message: 'differs from application' }]);
  }
  return uid === undefined ? { message: rest } : { message: { ...rest, properties: { ...rest.properties, [APPLICATION_PROPERTY]: uid } }, application: uid };
}

/** A message as every binding stores it. */
export interface PublishedMessage {
  message_id: string;
  topic: string;
  payload: string;
  content_type: string;
  properties: Record<string, string>;
  partition_key?: string;
  /** Epoch ms of the publish. */
  published_at: number;
  /** Payload length in UTF-8 bytes. */
  size: number;
}

/** The hop count a message carries (0 when none): messages republished by the service count up. */
export function hopCount(properties: Record<string, string> | undefined): number {
  const n = Number(properties?.[HOP_PROPERTY] ?? 0);
  return Number.isInteger(n) && n > 0 ? n : 0;
}
