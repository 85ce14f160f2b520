/**
 * The event catalog (docs/catalog.md): `POST/GET /event-types`,
 * `GET/PATCH/DELETE /event-types/{event_type+}` (the name's levels as path segments or
 * percent-encoded, `/` as %2F; `#` as %23) and `GET /asyncapi.json`. Scope `manage` to write; any valid key reads.
 */
import { httpHandler } from './http';
import { reply } from '../core/middleware/api-request';
import { parse } from '../core/rules/validation';
import { createEventTypeSchema, patchEventTypeSchema } from '../catalog/rules/event-types';
import { asyncApiOp, createEventTypeOp, deleteEventTypeOp, getEventTypeOp, listEventTypesOp, patchEventTypeOp } from '../catalog/operations';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('catalog', {
  createEventType: async (req) => {
    const input = parse(createEventTypeSchema, req.body);
    const { name, enforce, ...rest } = input;
    return reply(await createEventTypeOp(req.namespace, name, { ...rest, enforce: enforce ?? false }, Date.now()), { status: 201 });
  },

  listEventTypes: async (req) => reply(await listEventTypesOp(req.namespace, req.query)),

  getEventType: async (req) => reply(await getEventTypeOp(req.namespace, req.params.event_type)),

  patchEventType: async (req) => reply(await patchEventTypeOp(req.namespace, req.params.event_type, parse(patchEventTypeSchema, req.body), Date.now())),

  deleteEventType: async (req) => reply(await deleteEventTypeOp(req.namespace, req.params.event_type, Date.now())),

  asyncApi: async (req) => reply(await asyncApiOp(req.namespace)),
});
