/**
 * Queues: create, list, get, delete, consume (long polling), ack and batch ack (DESIGN.md
 * section 6). Thin: parsing, then the queue operations in ../queues/.
 */
import { httpHandler } from './http';
import { queueConsoleOperations } from './queues-console';
import { reply } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { ackSchema, batchAckSchema, consumeAnswerDeadline, consumeSchema, createQueueSchema, queueScopes } from '../queues/rules/queues';
import { requireScopes } from '../core/rules/auth';
import { isoTime } from '../core/rules/envelope';
import { createQueue, deleteQueue, describeQueue, listQueues } from '../queues/operations';
import { consume } from '../queues/consume';
import { ackBatch, ackOne } from '../queues/ack';
import { countMetric, METRIC, timeConsume } from '../core/observability';
import { withLongPollSlot } from '../queues/bulkhead';
import { listPage } from '../core/rules/response-budget';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('queues', {
  createQueue: async (req) => {
    const input = parse(createQueueSchema, req.body);
    requireScopes(req.scopes, queueScopes(input)); // 403 before anything is created
    return reply(await createQueue(req.namespace, input, Date.now()), { status: 201 });
  },

  listQueues: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    const { items, total } = await listQueues(req.namespace, limit, offset, Date.now());
    return reply(listPage('queues', items, total, limit, offset)); // under Lambda's 6 MB response limit
  },

  getQueue: async (req) => reply(await describeQueue(req.namespace, req.params.queue_name, Date.now())),

  deleteQueue: async (req) => {
    const now = Date.now();
    await deleteQueue(req.namespace, req.params.queue_name, now);
    return reply({ deleted_at: isoTime(now) });
  },

  consume: async (req) => {
    const input = parse(consumeSchema, req.body);
    const deadlineMs = consumeAnswerDeadline(Date.now(), req.lambda?.getRemainingTimeInMillis());
    // The long-poll bulkhead grants the wait (lambda/queues/bulkhead.ts).
    const messages = await withLongPollSlot(req, input.timeout_seconds, (timeout_seconds) => timeConsume('queue', () =>
      consume(req.namespace, req.params.queue_name, {
        ...input,
        timeout_seconds,
        consumer: input.consumer_id ?? `key:${req.keyId}`,
        deadlineMs,
      }),
    ), { seconds: 0, isEmpty: (got) => got.length === 0 });
    countMetric(METRIC.consumed, messages.length, { namespace: req.namespace, dimensions: { kind: 'queue' } });
    return reply({ messages, count: messages.length });
  },

  ack: async (req) => {
    const { receipt_handle } = parse(ackSchema, req.body);
    const at = await ackOne(req.namespace, req.params.queue_name, req.params.message_id, receipt_handle, Date.now());
    countMetric(METRIC.acked, 1, { namespace: req.namespace });
    return reply({ acknowledged_at: isoTime(at) });
  },

  ackBatch: async (req) => {
    const { entries } = parse(batchAckSchema, req.body);
    const out = await ackBatch(req.namespace, req.params.queue_name, entries, Date.now());
    countMetric(METRIC.acked, out.acknowledged_count, { namespace: req.namespace });
    return reply(out);
  },
  ...queueConsoleOperations,
});
