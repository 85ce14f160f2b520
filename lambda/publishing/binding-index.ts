/**
 * The per-namespace topic index used by publish: a {@link TopicTrie} of the namespace's bindings,
 * cached per container and tagged with the bindings version it was built from. Each publish reads
 * the current version first (one GetItem) and rebuilds the index only when it changed, so a
 * binding created or deleted before a publish starts is always honoured.
 */
import { TopicTrie } from '../core/rules/topics';
import { bindingsVersion, loadBindings, publishVersions, type Binding } from '../core/storage/resources';

interface CachedIndex {
  version: number;
  trie: TopicTrie<Binding>;
}

const cache = new Map<string, CachedIndex>();
/** Bound on cached namespaces per container; the oldest entry is dropped past it. */
const MAX_CACHED_NAMESPACES = 1000;

export async function bindingIndex(ns: string): Promise<TopicTrie<Binding>> {
  // Version first, then bindings: an index is never tagged newer than its content.
  return indexAt(ns, await bindingsVersion(ns));
}

async function indexAt(ns: string, version: number): Promise<TopicTrie<Binding>> {
  const hit = cache.get(ns);
  if (hit && hit.version === version) return hit.trie;
  const trie = new TopicTrie<Binding>();
  for (const b of await loadBindings(ns)) trie.add(b.topic_filter, b);
  cache.delete(ns);
  if (cache.size >= MAX_CACHED_NAMESPACES) cache.delete(cache.keys().next().value as string);
  cache.set(ns, { version, trie });
  return trie;
}

/** Bindings whose filter matches `topic`. */
export async function matchBindings(ns: string, topic: string): Promise<Binding[]> {
  return (await bindingIndex(ns)).match(topic);
}

/**
 * The bindings matching `topic` for a publish, and the namespace's catalog version read by the
 * same GetItem: the publish endpoint checks payloads against the event catalog at that version
 * (lambda/catalog/enforce.ts) without a read of its own.
 */
export async function matchForPublish(ns: string, topic: string): Promise<{ bindings: Binding[]; catalogVersion: number }> {
  const versions = await publishVersions(ns);
  return { bindings: (await indexAt(ns, versions.bindings)).match(topic), catalogVersion: versions.catalog };
}
