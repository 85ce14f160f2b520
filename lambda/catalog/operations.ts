/**
 * Event catalog operations behind the HTTP handler: create, list, get, PATCH,
 * DELETE of event types, and the AsyncAPI document. Validation is the API's usual: a wrong JSON
 * type is 400, a bad value or a missing field 422 naming it, a name that is no topic or filter
 * 400 INVALID_TOPIC_FILTER, an invalid schema 422 on `schema`.
 */
import { ApiError, alreadyExists, notFound, validationError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { eventTypeLimitExceeded } from '../core/rules/resource-limits';
import { listPage, MAX_RESPONSE_MESSAGE_BYTES, responseBytes } from '../core/rules/response-budget';
import { parsePaging } from '../core/rules/validation';
import { assertConfigBounds, assertEventTypeName, patchedConfig, type EventTypeConfig, type PatchEventTypeInput } from './rules/event-types';
import { allEventTypes, configOf, createEventType, deleteEventType, eventTypeCount, getEventType, itemOf, listEventTypes, replaceEventType, type EventTypeItem } from './storage/event-types';
import { namespaceCaps } from '../core/storage/resource-limits';
import { publishVersions } from '../core/storage/resources';
import { validators } from './load-validators';
import { asyncApiDocument } from './rules/asyncapi';

const eventTypeNotFound = (name: string) => notFound('EVENT_TYPE_NOT_FOUND', `Event type ${name}`);

/** The event type as the API shows it. */
function eventTypeView(i: EventTypeItem) {
  const c = configOf(i);
  return {
    name: i.name,
    description: c.description ?? null,
    schema: c.schema ?? null,
    enforce: c.enforce,
    examples: c.examples ?? [],
    version: i.version,
    created_at: isoTime(i.created_at),
    updated_at: isoTime(i.updated_at),
  };
}

async function checkConfig(c: EventTypeConfig) {
  assertConfigBounds(c);
  if (c.schema === undefined) return;
  const problem = (await validators()).schemaProblem(c.schema, c.examples);
  if (problem) throw validationError([problem]);
}

export async function createEventTypeOp(ns: string, name: string, config: EventTypeConfig, now: number) {
  assertEventTypeName(name);
  await checkConfig(config);
  const limit = (await namespaceCaps(ns))['event-types'];
  const item = itemOf(ns, name, config, 1, now, now);
  const r = await createEventType(item, limit);
  if (r === 'exists') throw alreadyExists('EVENT_TYPE_ALREADY_EXISTS', `Event type ${name}`);
  if (r === 'limit') throw eventTypeLimitExceeded(limit);
  return eventTypeView(item);
}

export async function getEventTypeOp(ns: string, name: string) {
  const i = await getEventType(ns, name);
  if (!i) throw eventTypeNotFound(name);
  return eventTypeView(i);
}

/** PATCH: merged with the stored configuration, written if nobody changed it meanwhile (else retried). */
export async function patchEventTypeOp(ns: string, name: string, patch: PatchEventTypeInput, now: number) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const stored = await getEventType(ns, name);
    if (!stored) throw eventTypeNotFound(name);
    const config = patchedConfig(configOf(stored), patch);
    await checkConfig(config);
    const item = itemOf(ns, name, config, stored.version + 1, stored.created_at, now);
    if (await replaceEventType(item)) return eventTypeView(item);
  }
  throw new ApiError(409, 'CONFLICT', `Event type ${name} is being changed by another request; retry.`);
}

export async function deleteEventTypeOp(ns: string, name: string, now: number) {
  if (!(await deleteEventType(ns, name))) throw eventTypeNotFound(name);
  return { deleted_at: isoTime(now) };
}

/**
 * By name ascending, `limit`/`offset` paging with `total` (DESIGN.md section 11), the page cut
 * to Lambda's response limit as the other lists are (`limit` then echoes the items it holds):
 * an event type may carry 64 KiB of schema and examples, so 100 of them can pass 6 MB.
 */
export async function listEventTypesOp(ns: string, query: Record<string, string | undefined> | null | undefined) {
  const { limit, offset } = parsePaging(query);
  const [items, total] = await Promise.all([listEventTypes(ns, limit, offset), eventTypeCount(ns)]);
  return listPage('event_types', items.map(eventTypeView), total, limit, offset);
}

/**
 * The AsyncAPI 3.0 document of the namespace's catalog; `info.version` is the catalog's version.
 * An AsyncAPI document is one document, and one Lambda response carries 6 MB
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): past the response
 * budget the examples are left out (they are in GET /event-types/{name}), and past it without
 * them the request is refused 413 saying where the parts are, never answered 502.
 */
export async function asyncApiOp(ns: string) {
  // Version first, then the catalog: the document is never labelled newer than its content.
  const { catalog } = await publishVersions(ns);
  const events = (await allEventTypes(ns)).map((i) => ({ name: i.name, ...configOf(i) }));
  const whole = asyncApiDocument(ns, catalog, events);
  if (responseBytes(whole) <= MAX_RESPONSE_MESSAGE_BYTES) return whole;
  const lean = asyncApiDocument(ns, catalog, events, false);
  const size = responseBytes(lean);
  if (size <= MAX_RESPONSE_MESSAGE_BYTES) return lean;
  throw new ApiError(
    413,
    'MESSAGE_TOO_LARGE',
    `The AsyncAPI document of this catalog is ${size} bytes even without examples, over the ${MAX_RESPONSE_MESSAGE_BYTES} one response can carry. Get the event types in pages with GET /event-types (limit, offset), each with its schema and examples.`,
  );
}
