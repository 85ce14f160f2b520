/**
 * Streams: create, list, get, delete, consume by offset (long polling) and offset commit (DESIGN.md
 * section 7). Thin: parsing, then the stream operations in ../streams/.
 */
import { httpHandler } from './http';
import { streamGroupOperations } from './streams-groups';
import { reply } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { commitSchema, createStreamSchema, streamConsumeSchema } from '../streams/rules';
import { isoTime } from '../core/rules/envelope';
import { commitOffset, consumeStream, createStream, deleteStream, describeStream, listStreams } from '../streams/operations';
import { countMetric, gaugeMetric, METRIC, timeConsume } from '../core/observability';
import { withLongPollSlot } from '../queues/bulkhead';
import { listPage } from '../core/rules/response-budget';

type StreamConsumed = Awaited<ReturnType<typeof consumeStream>>;

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('streams', {
  createStream: async (req) => reply(await createStream(req.namespace, parse(createStreamSchema, req.body), Date.now()), { status: 201 }),

  listStreams: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    const { items, total } = await listStreams(req.namespace, limit, offset);
    return reply(listPage('streams', items, total, limit, offset)); // under Lambda's 6 MB response limit
  },

  getStream: async (req) => reply(await describeStream(req.namespace, req.params.stream_name)),

  deleteStream: async (req) => {
    const now = Date.now();
    await deleteStream(req.namespace, req.params.stream_name, now);
    return reply({ deleted_at: isoTime(now) });
  },

  consume: async (req) => {
    const input = parse(streamConsumeSchema, req.body);
    // The long-poll bulkhead grants the wait (lambda/queues/bulkhead.ts).
    // The rest of a wait goes on from the first second's position (a `latest` is not read again).
    const { messages, next_offset, lag, lagKey } = await withLongPollSlot<StreamConsumed>(req, input.timeout_seconds, (timeout_seconds, after) => timeConsume('stream', () => consumeStream(req.namespace, req.params.stream_name, {
      ...input,
      ...(after ? { start_offset: after.next_offset } : {}),
      timeout_seconds,
      deadlineMs: req.lambda ? Date.now() + req.lambda.getRemainingTimeInMillis() - 1500 : undefined,
    })), { seconds: 1, isEmpty: (got) => got.messages.length === 0 });
    countMetric(METRIC.consumed, messages.length, { namespace: req.namespace, dimensions: { kind: 'stream' } });
    gaugeMetric(METRIC.streamLag, 'Count', lag, { namespace: req.namespace, metadata: lagKey });
    return reply({ messages, next_offset, count: messages.length });
  },

  commitOffset: async (req) => {
    const at = await commitOffset(req.namespace, req.params.stream_name, parse(commitSchema, req.body), Date.now());
    return reply({ committed_at: isoTime(at) });
  },
  ...streamGroupOperations,
});
