/**
 * The OpenAPI rows of the event catalog (docs/catalog.md): event types and the AsyncAPI
 * document. Kept apart from ./operations.ts, which spreads them in.
 */
import type { OperationDoc } from './operations';
import type { JsonSchema } from './schemas';
import { createEventTypeSchema, MAX_EXAMPLES, patchEventTypeSchema } from '../catalog/rules/event-types';

/** An event type's name is a topic or topic filter, not a resource name. */
const eventTypeName = (s: JsonSchema): JsonSchema => ({
  ...s,
  properties: { ...(s.properties as object), name: { type: 'string', description: 'A topic (`orders/created`) or MQTT topic filter (`orders/#`, `+/created`); 1 to 256 characters' } },
});

/** The event catalog (docs/catalog.md). */
export const CATALOG_OPERATIONS: Record<string, OperationDoc> = {
  'catalog.createEventType': {
    operationId: 'createEventType',
    summary: 'Create an event type (extension)',
    description: `A topic or topic filter with a \`description\`, an optional JSON Schema (draft 2020-12; 422 on \`schema\` when invalid) and up to ${MAX_EXAMPLES} \`examples\` (a string is a payload as published, any other value the parsed payload; each must satisfy the schema). With \`enforce: true\` a publish whose topic this event type applies to (the most specific match) is refused with 422 unless its payload is JSON satisfying the schema. At most 500 event types per namespace by default (409 LIMIT_EXCEEDED).`,
    request: createEventTypeSchema,
    adjustRequest: eventTypeName,
    response: 'EventType',
    conflict: ['EVENT_TYPE_ALREADY_EXISTS', 'LIMIT_EXCEEDED'],
    topicFilter: true,
  },
  'catalog.listEventTypes': {
    operationId: 'listEventTypes',
    summary: 'List event types by name (extension)',
    description: 'A page is cut to what one response carries (about 5 MiB); `limit` then echoes the number of event types it holds, so `offset + limit` is the next page.',
    request: null,
    response: 'EventTypeList',
    paging: true,
  },
  'catalog.getEventType': { operationId: 'getEventType', summary: 'Get an event type (extension)', request: null, response: 'EventType', notFound: ['EVENT_TYPE_NOT_FOUND'] },
  'catalog.patchEventType': {
    operationId: 'patchEventType',
    summary: 'Change some fields of an event type (extension)',
    description: 'Given fields replace the stored ones; null clears `description`, `schema` or `examples`. The result is validated like a create, and the next publish is judged by it.',
    request: patchEventTypeSchema,
    response: 'EventType',
    notFound: ['EVENT_TYPE_NOT_FOUND'],
    conflict: ['CONFLICT'],
  },
  'catalog.deleteEventType': { operationId: 'deleteEventType', summary: 'Delete an event type (extension)', request: null, response: 'Deleted', notFound: ['EVENT_TYPE_NOT_FOUND'] },
  'catalog.asyncApi': {
    operationId: 'getAsyncApi',
    summary: 'The event catalog as an AsyncAPI 3.0 document (extension)',
    description:
      'Generated from the event types: one channel per event type (`address` its name), its message with the schema as payload and the examples; `info.version` is the catalog version. The document is the envelope\'s `data`. When the whole document would not fit in one response (about 5 MiB), the examples are left out and `info` has `x-examples-omitted: true` (each event type has them in GET /event-types/{name}).',
    request: null,
    response: 'AsyncApiDocument',
    tooLargeAnswer: 'The document is larger than one response carries even without examples: read the event types in pages with GET /event-types',
  },
};
