/** `GET /streams/{name}/groups` (docs/console.md), served by ./streams.ts. Thin: ../console/stream-groups.ts. */
import type { Operation } from './http';
import { reply } from '../core/middleware/api-request';
import { memberLimit } from '../console/member-limit';
import { streamGroups } from '../console/stream-groups';

export const streamGroupOperations: Record<string, Operation> = {
  listGroups: async (req) => reply(await streamGroups(req.namespace, req.params.stream_name, memberLimit(req.query.limit))),
};
