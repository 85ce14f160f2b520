/**
 * Schema enforcement on publish: a publish to a topic whose applicable event
 * type (the most specific match, ./rules/event-types.ts) has a schema and `enforce: true` is
 * refused whole with 422 when any payload is not JSON or fails the schema; nothing is stored.
 *
 * Caching, per warm container:
 * - the namespace's catalog (names, versions, enforce flags; no schemas) in a topic trie, tagged
 *   with the catalog version it was read at. Every publish reads the namespace's versions item
 *   for its bindings anyway (one strongly consistent GetItem); `catalog_version` rides on it, so a
 *   catalog change is seen by the first publish that starts after the change answered, at no read
 *   of its own. The catalog is queried again only when that version moved (one Query of small
 *   items), never per message or per publish;
 * - each event type version's compiled validator (./validators.ts, loaded on first need), its
 *   schema read once (GetItem) on first use. It is keyed by the item's `revision`, fresh at every
 *   write: a name deleted and created again is at version 1 again, with another schema.
 * A namespace that never had an event type (version 0) costs nothing beyond a map lookup.
 */
import { TopicTrie } from '../core/rules/topics';
import { compareSpecificity, payloadRefused, type SchemaViolation } from './rules/event-types';
import { getEventType, loadCatalog, type CatalogEntry } from './storage/event-types';
import { validators } from './load-validators';

/** A validator per written event type: its revision (unique per write), else its version (items written before revisions). */
const validatorKey = (ns: string, e: { name: string; version: number; revision?: string }) => `${ns}\u0000${e.name}\u0000${e.revision ?? `v${e.version}`}`;

interface CachedCatalog {
  version: number;
  trie: TopicTrie<CatalogEntry>;
}

const catalogs = new Map<string, CachedCatalog>();
/** Bound on cached namespaces per container; the oldest entry is dropped past it. */
const MAX_CACHED_NAMESPACES = 1000;

async function catalogAt(ns: string, version: number): Promise<TopicTrie<CatalogEntry>> {
  const hit = catalogs.get(ns);
  if (hit && hit.version === version) return hit.trie;
  const trie = new TopicTrie<CatalogEntry>();
  for (const e of await loadCatalog(ns)) trie.add(e.name, e);
  catalogs.delete(ns);
  if (catalogs.size >= MAX_CACHED_NAMESPACES) catalogs.delete(catalogs.keys().next().value as string);
  catalogs.set(ns, { version, trie });
  return trie;
}

/** The event type that applies to `topic`: the most specific of those whose name matches it. */
export function applicableEntry<T extends { name: string }>(trie: TopicTrie<T>, topic: string): T | undefined {
  let best: T | undefined;
  for (const e of trie.match(topic)) if (best === undefined || compareSpecificity(e.name, best.name) < 0) best = e;
  return best;
}

/**
 * Refuses (422 VALIDATION_ERROR) payloads that the applicable event type's enforced schema
 * refuses. `batch`: violations name each message's index. Checks every payload before answering,
 * so a batch's answer lists every refused message.
 */
export async function enforceCatalog(ns: string, topic: string, payloads: string[], catalogVersion: number, batch: boolean): Promise<void> {
  if (catalogVersion === 0) return;
  const entry = applicableEntry(await catalogAt(ns, catalogVersion), topic);
  if (!entry || !entry.enforce || !entry.has_schema) return;
  const { cachedValidator, cacheValidator, payloadsViolations } = await validators();
  let v = cachedValidator(validatorKey(ns, entry));
  if (!v) {
    const item = await getEventType(ns, entry.name);
    // Changed or deleted since the catalog version read: judge by what is stored now.
    if (item?.schema_json === undefined || !item.enforce) return;
    v = cacheValidator(validatorKey(ns, item), JSON.parse(item.schema_json) as Record<string, unknown>);
  }
  // One pattern budget and one clock for the request (docs/catalog.md, "Patterns", "Time limit").
  const violations: SchemaViolation[] = payloadsViolations(v, payloads, batch);
  if (violations.length) throw payloadRefused(entry.name, violations);
}
