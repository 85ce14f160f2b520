/**
 * `GET /asyncapi.json`: the namespace's event catalog as an AsyncAPI 3.0
 * document, generated from the stored event types, never written by hand. Each event type is a
 * channel whose `address` is its name (a topic, or an MQTT topic filter with `+` and `#`), with
 * one message whose payload is the event type's schema and whose examples are its examples, and
 * a `send` operation (the platform publishes it; https://www.asyncapi.com/docs/reference/specification/v3.0.0).
 *
 * Schemas live under `components.schemas`, and their same-document references (`#/$defs/x`) are
 * rewritten to point there: AsyncAPI resolves a `$ref` against the whole document, not against
 * the schema it sits in.
 */
import { examplePayload, type EventTypeConfig } from './event-types';

export interface CatalogEvent extends EventTypeConfig {
  name: string;
}

/** AsyncAPI component and channel keys allow `^[A-Za-z0-9_.-]+$` / `^[A-Za-z0-9_-]+$`: a readable, unique id per name. */
export function channelIds(names: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const name of [...names].sort()) {
    const base =
      name
        .split('/')
        .map((l) => (l === '#' ? 'all' : l === '+' ? 'any' : l.replace(/[^A-Za-z0-9-]+/g, '-')))
        .join('_') || 'event';
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    out.set(name, id);
  }
  return out;
}

/** The schema with its same-document references moved under `#/components/schemas/{id}`. */
function rebased(schema: unknown, id: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rebased(s, id));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if ((k === '$ref' || k === '$dynamicRef') && typeof v === 'string' && (v === '#' || v.startsWith('#/'))) out[k] = `#/components/schemas/${id}${v.slice(1)}`;
    else if (k === '$schema' || k === '$id') continue;
    else out[k] = rebased(v, id);
  }
  return out;
}

/**
 * The AsyncAPI 3.0 document of a catalog (event types in name order). `withExamples: false`
 * leaves out every message's examples and says so in `info` (`x-examples-omitted`, a
 * specification extension, and the description): what operations.ts answers when the whole
 * document would not fit in one Lambda response.
 * @example asyncApiDocument('acme', 3, [{ name: 'orders/created', enforce: false }]).channels // { orders_created: {...} }
 */
export function asyncApiDocument(ns: string, catalogVersion: number, events: readonly CatalogEvent[], withExamples = true) {
  const ids = channelIds(events.map((e) => e.name));
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const e of [...events].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const id = ids.get(e.name) as string;
    if (e.schema !== undefined) schemas[id] = rebased(e.schema, id);
    const examples = (withExamples ? (e.examples ?? []) : []).map((ex, i) => {
      const p = examplePayload(ex);
      return { name: `example-${i + 1}`, payload: p.ok ? p.value : ex };
    });
    messages[id] = {
      name: e.name,
      title: e.name,
      ...(e.description !== undefined ? { summary: e.description.split('\n')[0].slice(0, 200), description: e.description } : {}),
      contentType: 'application/json',
      ...(e.schema !== undefined ? { payload: { $ref: `#/components/schemas/${id}` } } : {}),
      ...(examples.length ? { examples } : {}),
      'x-enforced': e.enforce,
    };
    const wildcard = /(^|\/)[+#](\/|$)/.test(e.name);
    channels[id] = {
      address: e.name,
      title: e.name,
      ...(e.description !== undefined ? { description: e.description } : {}),
      messages: { [id]: { $ref: `#/components/messages/${id}` } },
      // Not an AsyncAPI notion: the address is an MQTT 5 topic filter covering many topics.
      ...(wildcard ? { 'x-topic-filter': true } : {}),
    };
    operations[`publish_${id}`] = {
      action: 'send',
      summary: `Publish ${e.name} (POST /topics/{topic}/messages)`,
      channel: { $ref: `#/channels/${id}` },
      messages: [{ $ref: `#/channels/${id}/messages/${id}` }],
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: `Events of namespace ${ns}`,
      version: String(catalogVersion),
      description:
        `The event catalog of namespace ${ns}, generated from its event types (GET /event-types). Publish with POST /topics/{topic}/messages; a message's payload is JSON text.` +
        (withExamples ? '' : ' The examples are left out: with them the document is larger than one response can carry; each event type has its examples in GET /event-types/{name}.'),
      ...(withExamples ? {} : { 'x-examples-omitted': true }),
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { messages, schemas },
  };
}
