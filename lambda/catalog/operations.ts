/**
 * Event catalog operations behind the HTTP handler (issue 37 item 2): create, list, get, PATCH,
 * DELETE of event types, and the AsyncAPI document. Validation is the API's usual: a wrong JSON
 * type is 400, a bad value or a missing field 422 naming it, a name that is no topic or filter
 * 400 INVALID_TOPIC_FILTER, an invalid schema 422 on `schema`.
 */
import { ApiError, alreadyExists, notFound, validationError } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { eventTypeLimitExceeded } from '../domain/resource-limits';
import { parsePaging } from '../domain/validation';
import { assertConfigBounds, assertEventTypeName, patchedConfig, type EventTypeConfig, type PatchEventTypeInput } from '../domain/event-types';
import { allEventTypes, configOf, createEventType, deleteEventType, eventTypeCount, getEventType, itemOf, listEventTypes, replaceEventType, type EventTypeItem } from '../storage/event-types';
import { namespaceCaps } from '../storage/resource-limits';
import { publishVersions } from '../storage/resources';
import { validators } from './load-validators';
import { asyncApiDocument } from './asyncapi';

const eventTypeNotFound = (name: string) => notFound('EVENT_TYPE_NOT_FOUND', `Event type ${name}`);

/** The event type as the API shows it. */
export function eventTypeView(i: EventTypeItem) {
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

/** By name ascending, `limit`/`offset` paging with `total` (DESIGN.md section 11). */
export async function listEventTypesOp(ns: string, query: Record<string, string | undefined> | null | undefined) {
  const { limit, offset } = parsePaging(query);
  const [items, total] = await Promise.all([listEventTypes(ns, limit, offset), eventTypeCount(ns)]);
  return { event_types: items.map(eventTypeView), total, limit, offset };
}

/** The AsyncAPI 3.0 document of the namespace's catalog; `info.version` is the catalog's version. */
export async function asyncApiOp(ns: string) {
  // Version first, then the catalog: the document is never labelled newer than its content.
  const { catalog } = await publishVersions(ns);
  const items = await allEventTypes(ns);
  return asyncApiDocument(ns, catalog, items.map((i) => ({ name: i.name, ...configOf(i) })));
}
