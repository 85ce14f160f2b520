/**
 * Publishing: `POST /topics/{topic}/messages` and `/messages/batch` (DESIGN.md section 5).
 */
import { httpHandler } from './http';
import { reply, type ApiRequest } from '../core/middleware/api-request';
import { isoTime } from '../core/rules/envelope';
import { validationError } from '../core/rules/errors';
import { topicNameProblem } from '../core/rules/topics';
import { parse } from '../core/rules/validation';
import { addressed, assertMessageSize, batchSchema, MAX_BATCH_BODY_BYTES, messageSchema, messageTooLarge } from '../core/rules/message';
import { publishMessages } from '../publishing/publish';
import { idempotencyKeyOf, once, REPLAYED_HEADER } from '../publishing/idempotency';
import { countMetric, METRIC } from '../core/observability';
import { checkDelays } from '../core/rules/delays';
import { holdLongDelays } from '../schedules/delayed';
import { cancelDelivery } from '../schedules/cancel';
import { enforceCatalog } from '../catalog/enforce';
import { requireAddressees } from '../applications/addressees';

/**
 * Checks that the applications the messages are addressed to exist, started at once so its reads
 * run beside publish's own first read; awaited before anything is written (`checkPayloads`).
 */
function addresseesChecked(ns: string, uids: (string | undefined)[], batch: boolean): Promise<void> {
  const check = requireAddressees(ns, uids, batch);
  check.catch(() => undefined); // awaited later; a publish refused earlier (404 TOPIC_NOT_FOUND) never awaits it
  return check;
}

function topicOf(req: ApiRequest): string {
  const topic = req.params.topic ?? '';
  const why = topicNameProblem(topic);
  if (why) throw validationError([{ field: 'topic', message: why }]);
  return topic;
}

/**
 * Runs the publish once per Idempotency-Key when the client sent one; `run` gets the key too
 * (ordered queues deduplicate by it, lambda/core/rules/ordering.ts).
 */
async function publishOnce<R extends object>(req: ApiRequest, topic: string, run: (idempotencyKey?: string) => Promise<R>) {
  const key = idempotencyKeyOf(req.headers);
  if (key === undefined) return reply(await run(), { status: 201 });
  const { result, replayed } = await once([req.namespace, topic, key], req.body, req.lambda, () => run(key));
  return reply(result, { status: 201, headers: replayed ? { [REPLAYED_HEADER]: 'true' } : {} });
}

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('publish', {
  publish: async (req) => {
    const topic = topicOf(req);
    const { message, application } = addressed(parse(messageSchema, req.body));
    assertMessageSize(message);
    checkDelays([message], Date.now(), false);
    return publishOnce(req, topic, async (idempotencyKey) => {
      const addressees = addresseesChecked(req.namespace, [application], false);
      const [m] = await publishMessages(req.namespace, topic, [message], Date.now(), {
        idempotencyKey,
        holdLongDelays,
        requestCount: req.deferredCount,
        checkPayloads: async (catalogVersion) => {
          await addressees;
          await enforceCatalog(req.namespace, topic, [message.payload], catalogVersion, false);
        },
      });
      countMetric(METRIC.published, 1, { namespace: req.namespace });
      return { message_id: m.message_id, topic, timestamp: isoTime(m.published_at), size: m.size };
    });
  },

  publishBatch: async (req) => {
    const topic = topicOf(req);
    if (req.bodyBytes > MAX_BATCH_BODY_BYTES) throw messageTooLarge('The batch request body', MAX_BATCH_BODY_BYTES);
    const items = parse(batchSchema, req.body).messages.map((m, i) => addressed(m, `messages.${i}`));
    const messages = items.map((m) => m.message);
    // Every item is checked before anything is stored: one bad item refuses the whole batch.
    messages.forEach((m, i) => assertMessageSize(m, `messages.${i}`));
    checkDelays(messages, Date.now(), true);
    return publishOnce(req, topic, async (idempotencyKey) => {
      const addressees = addresseesChecked(req.namespace, items.map((m) => m.application), true);
      // The event catalog's enforced schema checks every message before any is stored (docs/catalog.md).
      const stored = await publishMessages(req.namespace, topic, messages, Date.now(), {
        idempotencyKey,
        holdLongDelays,
        requestCount: req.deferredCount,
        checkPayloads: async (catalogVersion) => {
          await addressees;
          await enforceCatalog(req.namespace, topic, messages.map((m) => m.payload), catalogVersion, true);
        },
      });
      countMetric(METRIC.published, stored.length, { namespace: req.namespace });
      return { published_count: stored.length, message_ids: stored.map((m) => m.message_id), timestamp: isoTime(stored[0].published_at) };
    });
  },

  /** Extension: cancels a message held for a delay beyond 900 s. */
  cancelDelivery: async (req) => reply(await cancelDelivery(req.namespace, req.params.message_id ?? '', Date.now())),
});
