/**
 * `GET /queues/{name}/stats` and `POST /queues/{name}/redrive` (docs/console.md), served by
 * ./queues.ts beside the queue operations. Thin: ../console/queue-stats.ts.
 */
import type { Operation } from './http';
import { reply } from '../core/middleware/api-request';
import { parse } from '../core/rules/validation';
import { queueStats, redriveQueue, redriveSchema } from '../console/queue-stats';

export const queueConsoleOperations: Record<string, Operation> = {
  queueStats: async (req) => reply(await queueStats(req.namespace, req.params.queue_name, Date.now())),
  redriveQueue: async (req) => reply(await redriveQueue(req.namespace, req.params.queue_name, parse(redriveSchema, req.body))),
};
